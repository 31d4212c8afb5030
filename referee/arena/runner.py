"""The arena at work: one process that is the referee (a tournament's GameHost, so hosted bots run
in its sandbox under its limits), the matchmaker and the rating keeper, over one store.

Every `pair_every_s` it seats the ready bots, and as soon as a bot becomes ready between two
rounds (it joins the lobby, or its pair ends) it seats those that have someone new to meet (one
that has only its last opponent waits a round for another): each chosen pair plays two tables
with the same deals and the two bots' seats swapped, and is written to the store as finished
(then rated) or voided (then never rated). A bot added while the arena runs is let in at the
next round of the matchmaker, plays its validation pair, and enters the ladder if it broke no
rule there.

With a Ray cluster in the config (`ray`, or `tichu arena serve --ray`), the pairs of two hosted
bots are played on the tournament's Ray hosts (cluster.py: a GameHost actor per CPU of each node),
both tables of a pair on one host, the least busy; every hosted bot is let in on every host. The
arena stays the one coordinator and the one writer of the store and the replays: a Ray host sends
each game's result and replay back. A pair with a remote bot stays on the arena's own referee,
the one remote bots connect to.
"""

from __future__ import annotations

import asyncio
import contextlib
import random
import secrets
import shutil
from collections import Counter
from collections.abc import Mapping, Sequence
from dataclasses import dataclass, replace
from pathlib import Path
from typing import TextIO

from referee.arena.config import ArenaConfig
from referee.arena.lobby import SERVICE as LOBBY_SERVICE
from referee.arena.lobby import Lobby
from referee.arena.matchmaker import Candidate, Match, choose
from referee.arena.ratings import fresh, rate_pair
from referee.arena.store import ArenaStore, BotRow, BotState, GameRow, RatingRow
from referee.log import get_logger
from referee.match import MatchResult
from referee.match.digests import SALT_BYTES
from referee.tournament.cluster import RayFleet, RayHost, parse_ray_target
from referee.tournament.config import Entrant, SprtSettings, Team, TournamentConfig
from referee.tournament.host import GameHost, GameOrder, GameOutcome, Host, HostError, HostLostError
from referee.wire.tichu.v1 import referee_pb2 as pb

# The counts of a seat's line that the arena keeps per game, summed over a bot's two seats.
KEPT_COUNTS = ("decisions", "timeouts", "rejections", "bombs_played", "points_won")


@dataclass(frozen=True, slots=True)
class PairVerdict:
    """What a pair's two tables say of each bot: their points, and what each did wrong."""

    games: tuple[GameRow, ...]
    faults: dict[str, list[str]]  # bot -> what it did wrong, in words ([] when nothing)
    forfeited: set[str]


class Arena:
    """A running arena over `store`, with `config`'s house bots and referee."""

    def __init__(
        self, config: ArenaConfig, store: ArenaStore, out: TextIO, *, rng: random.Random | None = None
    ) -> None:
        self.config = config
        self.store = store
        self.out = out
        self.rng = rng or random.Random(secrets.randbits(64))
        self.host: GameHost | None = None
        self.fleet: RayFleet | None = None  # the Ray hosts of hosted pairs, when the config names a cluster
        self.ray_hosts: list[RayHost] = []
        self.placed: dict[int, Host] = {}  # pair id -> the host playing it
        self._pairs_placed: dict[str, int] = {}  # host name -> pairs sent to it so far (spreads ties)
        self.admitted: dict[str, int] = {}  # hosted bot -> the version its processes run
        self.playing: dict[int, tuple[str, str]] = {}  # pair id -> its bots
        self.tasks: set[asyncio.Task[None]] = set()
        self.lobby = Lobby(store, config.leaderboard, on_join=self.wake)
        self._woken = asyncio.Event()
        # Bots the last round left waiting rather than meet their last opponent again.
        self._kept_waiting: set[str] = set()
        self._log = get_logger()

    # ---------------------------------------------------------------------------- lifecycle

    async def start(self) -> str:
        """Void what a previous run left playing, register the house bots, start the referee; the
        address bots connect to."""
        voided = self.store.void_interrupted()
        if voided:
            print(f"arena: voided {len(voided)} pair(s) a previous run left unfinished", file=self.out)
        self._sync_house()
        self.host = GameHost(
            self._host_config(),
            "arena",
            replay_dir=self.live_dir,
            log_dir=self.config.output_dir / "logs",
            capacity=2 * self.config.concurrency,
            services=((LOBBY_SERVICE, self.lobby.register),),
        )
        if self.config.ray:
            # Before the referee: a local cluster's nodes are forked from this process, and a fork
            # of a process whose gRPC threads are busy can hang before it runs the node (Ray's
            # preexec_fn runs in the child).
            await self._start_fleet()
        try:
            address = await self.host.start()
        except HostError:
            self.host = None
            raise
        await self._admit_new()
        return address

    async def _start_fleet(self) -> None:
        """Start a host on every node of the config's Ray cluster (HostError if one cannot play;
        `stop` ends the ones that started)."""
        self.fleet = RayFleet(
            parse_ray_target(self.config.ray), hosts_per_node=self.config.ray_hosts_per_node
        )
        await self.fleet.start(self._host_config())
        self.ray_hosts = list(self.fleet.hosts)
        for host in self.ray_hosts:
            print(
                f"arena: Ray host {host.name}: referee on {host.address}, bot logs in {host.logs}",
                file=self.out,
                flush=True,
            )

    async def stop(self, why: str = "the arena was stopped") -> None:
        """Void the pairs in play (never half rated), then stop the bots and the referee."""
        for pair_id in list(self.playing):
            self.store.void_pair(pair_id, why)
        await self.lobby.close()
        for task in list(self.tasks):
            task.cancel()
        for task in list(self.tasks):
            with contextlib.suppress(asyncio.CancelledError):
                await task
        if self.host is not None:
            await self.host.stop()
            self.host = None
        if self.fleet is not None:
            await self.fleet.stop()
            self.fleet = None
            self.ray_hosts = []

    async def run(self, stop: asyncio.Event) -> None:
        """Seat the ready bots every `pair_every_s`, and whenever one becomes ready in between,
        until `stop` is set."""
        loop = asyncio.get_running_loop()
        next_round = loop.time()
        while not stop.is_set():
            if loop.time() >= next_round:
                next_round = loop.time() + self.config.pair_every_s
                self._woken.clear()
                await self.round()
            elif self._woken.is_set():
                self._woken.clear()
                # Between rounds, pairs of bots that have just met wait for the round: else a
                # pair that ends would meet again at once, with nobody else ready yet.
                await self.round(rematch=False)
            await _first_of(stop, self._woken, next_round - loop.time())

    def wake(self) -> None:
        """A bot has become ready: seat it now rather than at the next round, if it has someone
        to meet (a bot waited half of `pair_every_s` on average for its seat otherwise)."""
        self._woken.set()

    @property
    def live_dir(self) -> Path:
        """Where the games in play write their replays (published when their pair ends)."""
        return self.config.output_dir / "live"

    @property
    def replay_dir(self) -> Path:
        """Where every played game's replay is kept."""
        return self.config.output_dir / "replays"

    # ---------------------------------------------------------------------------- the matchmaker

    async def round(self, *, rematch: bool = True) -> list[Match]:
        """One round of the matchmaker: let newcomers in, seat who is ready; the pairs started.
        A bot whose only possible opponents are the ones it just met waits a round for someone
        new; without `rematch` (between rounds), it waits in any case."""
        await self._admit_new()
        room = self.config.concurrency - len(self.playing)
        if room <= 0:
            return []
        busy = Counter(name for pair in self.playing.values() for name in pair)
        ready = [self._candidate(bot, busy) for bot in self.store.bots() if self._ready(bot, busy)]
        last = self._last_opponents()
        matches = choose(ready, last, self.rng, room, rematch=False)
        if rematch:
            # Those the last round already left waiting meet whom they can, their last opponent too.
            seated = {name for match in matches for name in (match.a, match.b)}
            patient = [c for c in ready if c.name in self._kept_waiting and c.name not in seated]
            matches += choose(patient, last, self.rng, room - len(matches))
            seated = {name for match in matches for name in (match.a, match.b)}
            self._kept_waiting = {c.name for c in ready if c.name not in seated}
        for match in matches:
            pair_id = self.store.start_pair(
                match.a, match.b, match.leaderboard, self._seed(), validation=match.validation
            )
            self.playing[pair_id] = (match.a, match.b)
            task = asyncio.create_task(self._play(pair_id, match))
            self.tasks.add(task)
            task.add_done_callback(self.tasks.discard)
        return matches

    def _ready(self, bot: BotRow, busy: Counter[str]) -> bool:
        """Allowed to play, here, and with a free slot: a hosted bot's processes run its current
        version; a remote bot is in the lobby."""
        playable = bot.state in (BotState.ACTIVE, BotState.VALIDATING)
        here = self.admitted.get(bot.name) == bot.version if bot.hosted else bot.name in self.lobby.present
        return playable and here and busy[bot.name] < self._slots(bot)

    def _slots(self, bot: BotRow) -> int:
        """The pairs a bot may play at once: one while it validates (its one validation pair
        first); a remote bot as many as the games it offered allow; a hosted bot one. A hosted
        bot's seats share its worker processes and their CPU-seconds and memory limits
        (tournament/bots.py): more pairs at once would spend that budget faster, and a bot killed
        for it forfeits, and is paused for the arena's choice, not its own."""
        if bot.state is BotState.VALIDATING or bot.hosted:
            return 1
        return self.lobby.pairs(bot.name)

    def _candidate(self, bot: BotRow, busy: Counter[str]) -> Candidate:
        board = self.config.leaderboard(bot.kind)
        rating = self.store.rating(bot.name, board)
        return Candidate(
            bot.name,
            board,
            rating.mu if rating is not None else fresh(bot.name, board).mu,
            rating.pairs if rating is not None else 0,
            validating=bot.state is BotState.VALIDATING,
            house=bot.house,
            slots=self._slots(bot) - busy[bot.name],
        )

    def _last_opponents(self) -> dict[str, str]:
        last: dict[str, str] = {}
        for pair in self.store.pairs(state="finished", limit=500):
            last[pair.bot_a], last[pair.bot_b] = pair.bot_b, pair.bot_a
        return last

    def _seed(self) -> str:
        return f"{self.config.name}-{secrets.token_hex(8)}"

    # ---------------------------------------------------------------------------- a pair

    async def _play(self, pair_id: int, match: Match) -> None:
        """Play a pair's two tables at once, on one host, then write it finished (and rated) or
        voided."""
        host = self._place(match)
        self.placed[pair_id] = host
        seed = self.store.pair(pair_id).seed
        orders = [
            GameOrder(
                game_id=f"{pair_id}-{table}",
                match_id=f"{self.config.name}-{pair_id}-t{table}",
                seed=seed,
                salt=secrets.token_hex(SALT_BYTES),
                players=players,
                rng_seeds=tuple(f"{seed}/{table}/{seat}" for seat in range(4)),
            )
            for table, players in enumerate(((match.a, match.b) * 2, (match.b, match.a) * 2))
        ]
        try:
            for order in orders:
                for remote in await host.open(order):
                    # A remote bot's seat goes to it through the lobby; one that has just left
                    # never comes, and the game's start timeout voids the pair (nobody rated).
                    token, _, rng_seed = (remote.line.split() + ["", ""])[:3]
                    seated = pb.Seated(
                        match_id=remote.match_id,
                        seat=remote.seat,
                        seat_token=token,
                        address=remote.server,
                        pair_id=pair_id,
                        validation=match.validation,
                        rng_seed=rng_seed,
                    )
                    self.lobby.seat(remote.entrant, seated)
            outcomes = await asyncio.gather(*(host.finish(o.match_id) for o in orders))
        except asyncio.CancelledError:
            self.playing.pop(pair_id, None)
            self.placed.pop(pair_id, None)
            raise
        except HostLostError as error:  # its node died: the pair is voided, the host takes no more
            self._end(pair_id, match, None, f"its host {host.name} was lost: {error}")
            return
        except Exception as error:  # a host fault must not take the arena down with it
            self._log.exception("arena_pair_failed", pair_id=pair_id)
            self._end(pair_id, match, None, f"the referee failed: {error}")
            return
        self._publish(orders, outcomes)
        verdict = judge(match, outcomes)
        failures = [o.failure for o in outcomes if o.result is None]
        if failures:
            self._end(pair_id, match, verdict, "; ".join(failures))
        else:
            self._end(pair_id, match, verdict, "")

    def _place(self, match: Match) -> Host:
        """Where a pair is played: two hosted bots on the least busy Ray host that is left (of
        those equally busy, the one sent the fewest pairs so far), anything else here."""
        assert self.host is not None
        hosted = all(self.store.bot(name).hosted for name in (match.a, match.b))
        alive = [host for host in self.ray_hosts if not host.lost]
        if not hosted or not alive:
            return self.host
        busy = [host.name for host in self.placed.values()]
        chosen = min(alive, key=lambda host: (busy.count(host.name), self._pairs_placed.get(host.name, 0)))
        self._pairs_placed[chosen.name] = self._pairs_placed.get(chosen.name, 0) + 1
        return chosen

    def _end(self, pair_id: int, match: Match, verdict: PairVerdict | None, failure: str) -> None:
        self.playing.pop(pair_id, None)
        self.placed.pop(pair_id, None)
        self.wake()  # its bots are free again (written below, before the round can run)
        # Forfeits in a row are written with the pair's end: a kill in between loses no count.
        forfeited = pair_forfeits(match, verdict, voided=bool(failure))
        if failure or verdict is None:
            counts = self.store.void_pair(pair_id, failure, forfeited)
            print(f"arena: pair {pair_id} {match.a} v {match.b} voided: {failure}", file=self.out, flush=True)
        else:
            ratings: tuple[RatingRow, ...] = ()
            if not match.validation:
                pair = self.store.pair(pair_id)
                totals = sum(g.points_a for g in verdict.games), sum(g.points_b for g in verdict.games)
                finished = replace(pair, state="finished", points_a=totals[0], points_b=totals[1])
                a = self.store.rating(match.a, match.leaderboard) or fresh(match.a, match.leaderboard)
                b = self.store.rating(match.b, match.leaderboard) or fresh(match.b, match.leaderboard)
                update = rate_pair(finished, a, b)
                ratings = (update.a, update.b)
            counts = self.store.finish_pair(pair_id, verdict.games, ratings, forfeited)
            pair = self.store.pair(pair_id)
            print(
                f"arena: pair {pair_id} {match.a} {pair.points_a} - {pair.points_b} {match.b}"
                + (" (validation)" if match.validation else ""),
                file=self.out,
                flush=True,
            )
        if verdict is not None:
            self._after(match, verdict, failure, counts)

    def _after(self, match: Match, verdict: PairVerdict, failure: str, counts: Mapping[str, int]) -> None:
        """Let a newcomer in or refuse it; pause a bot that forfeits pair after pair (`counts`:
        its pairs in a row with a forfeit, as the store has them now)."""
        if match.validation:
            faults = verdict.faults.get(match.a, [])
            if faults:
                self._set_state(match.a, BotState.REFUSED, "validation: " + "; ".join(faults))
            elif not failure:
                self._set_state(match.a, BotState.ACTIVE, "")
        for name, count in counts.items():
            if name in verdict.forfeited and count >= self.config.pause_after_forfeits:
                why = "; ".join(verdict.faults.get(name, [])) or "forfeits"
                self._set_state(name, BotState.PAUSED, f"{count} pairs in a row with a forfeit ({why})")

    def _set_state(self, name: str, state: BotState, reason: str) -> None:
        """A bot's new state, written and told to it if it waits in the lobby."""
        self.store.set_state(name, state, reason)
        self.lobby.notice(name, state.value, reason)

    def _publish(self, orders: Sequence[GameOrder], outcomes: Sequence[GameOutcome]) -> None:
        """Move the pair's replays to where finished games are kept (and shown); a Ray host's
        come back as text with its outcomes, and are written there."""
        self.replay_dir.mkdir(parents=True, exist_ok=True)
        for order, outcome in zip(orders, outcomes, strict=True):
            kept = self.replay_dir / f"{order.match_id}.jsonl"
            if outcome.replay_text is not None:
                kept.write_text(outcome.replay_text, encoding="utf-8")
                continue
            path = self.live_dir / kept.name
            if path.exists():
                shutil.move(path, kept)

    # ---------------------------------------------------------------------------- bots

    def _sync_house(self) -> None:
        """Register the config's house bots (a changed class or command is a new version)."""
        known = {bot.name: bot for bot in self.store.bots()}
        for entrant in self.config.house:
            workdir = str(entrant.workdir or "")
            if entrant.name not in known:
                self.store.add_bot(
                    entrant.name,
                    bot=entrant.bot,
                    command=entrant.command,
                    workdir=workdir,
                    house=True,
                    state=BotState.ACTIVE,
                )
            elif self.store.update_hosted(entrant.name, bot=entrant.bot, command=entrant.command):
                # The organiser's own bot, changed: it is trusted as before.
                self.store.set_state(entrant.name, BotState.ACTIVE)

    async def _admit_new(self) -> None:
        """Start the processes of hosted bots that are new or have a new version; end disabled ones'."""
        if self.host is None:
            return
        house = {entrant.name: entrant for entrant in self.config.house}
        for bot in self.store.bots():
            if not bot.hosted:
                continue
            if bot.state in (BotState.DISABLED, BotState.REFUSED, BotState.PAUSED):
                if bot.name in self.admitted and not self._busy(bot.name):
                    await self.host.dismiss(bot.name)
                    await self._on_ray_hosts("dismiss", bot.name)
                    del self.admitted[bot.name]
                continue
            if self.admitted.get(bot.name) == bot.version or self._busy(bot.name):
                continue
            entrant = house.get(bot.name) if bot.house else None
            await self.host.admit(entrant or _entrant(bot))
            await self._on_ray_hosts("admit", entrant or _entrant(bot))
            self.admitted[bot.name] = bot.version

    async def _on_ray_hosts(self, method: str, argument: Entrant | str) -> None:
        """Let a hosted bot in (or out) on every Ray host at once; a host that fails to is
        lost to the arena (a pair placed there could not seat the bot)."""
        alive = [host for host in self.ray_hosts if not host.lost]
        done = await asyncio.gather(
            *(getattr(host, method)(argument) for host in alive), return_exceptions=True
        )
        for host, error in zip(alive, done, strict=True):
            if isinstance(error, Exception):
                host.lost = True
                self._log.warning("arena_ray_host_lost", host=host.name, error=str(error))
                print(f"arena: Ray host {host.name} lost: {error}", file=self.out, flush=True)

    def _busy(self, name: str) -> bool:
        return any(name in pair for pair in self.playing.values())

    def _host_config(self) -> TournamentConfig:
        """The tournament config the GameHost plays by: the arena's rules, clock, paths and limits
        (its entrants are let in one by one with GameHost.admit)."""
        config = self.config
        return TournamentConfig(
            name=config.name,
            seed=config.name,
            format="round_robin",
            candidate="",
            games_per_pairing=2,
            duplicate=True,
            concurrency=2 * config.concurrency,
            database=config.store,
            replay_dir=self.replay_dir,
            output_dir=config.output_dir,
            listen=config.listen,
            game_timeout_s=config.game_timeout_s,
            start_timeout_s=config.start_timeout_s,
            rules=config.rules,
            preset="",
            rules_overrides={},
            clock=config.clock,
            sprt=SprtSettings(),
            # One stand-in, so that the host makes its sandbox for local bots; it is never seated.
            entrants=(Entrant("arena-house", "clients.random_bot:RandomBot"),),
            teams=(Team("arena-house", ("arena-house", "arena-house")),),
            source=config.source,
            sandbox=config.sandbox,
        )


async def _first_of(stop: asyncio.Event, woken: asyncio.Event, timeout_s: float) -> None:
    """Wait until either event is set, or `timeout_s` passes."""
    if stop.is_set() or woken.is_set() or timeout_s <= 0:
        return
    waits = {asyncio.ensure_future(stop.wait()), asyncio.ensure_future(woken.wait())}
    try:
        await asyncio.wait(waits, timeout=timeout_s, return_when=asyncio.FIRST_COMPLETED)
    finally:
        for waiting in waits:
            waiting.cancel()


def _entrant(bot: BotRow) -> Entrant:
    """A registered hosted bot as the host runs it."""
    workdir = Path(bot.workdir) if bot.workdir else None
    return Entrant(bot.name, bot.bot, command=bot.command, workdir=workdir if bot.command else None)


def pair_forfeits(match: Match, verdict: PairVerdict | None, voided: bool = False) -> dict[str, bool]:
    """Whether each bot forfeited in the pair, for its count of pairs in a row with a forfeit
    (kept in the store, so that a restart does not wipe a bot's slate). A newcomer's validation
    pair is judged by its own rule (refused on a fault), so it counts for its opponent only; a
    pair with no verdict (cut off) counts for nobody. A `voided` pair (a table that never played
    or failed) counts the forfeits it saw but starts nobody's count again: too little was
    played to show clean play, and a no-show must not wipe its opponent's or its own slate."""
    if verdict is None:
        return {}
    counted = [name for name in (match.a, match.b) if not (match.validation and name == match.a)]
    return (
        {name: True for name in counted if name in verdict.forfeited}
        if voided
        else {name: name in verdict.forfeited for name in counted}
    )


def judge(match: Match, outcomes: Sequence[GameOutcome]) -> PairVerdict:
    """Each table's points and counts for both bots, and each bot's faults in words."""
    games: list[GameRow] = []
    faults: dict[str, list[str]] = {match.a: [], match.b: []}
    forfeited: set[str] = set()
    for table, outcome in enumerate(outcomes):
        a_seats = table  # table 0: a at seats 0 and 2; table 1: at 1 and 3
        owner = {seat: (match.a if seat % 2 == a_seats else match.b) for seat in range(4)}
        for seat, why in outcome.exit_reasons.items():
            faults[owner[seat]].append(f"its process ended at table {table + 1}: {why}")
        result = outcome.result
        if result is None:
            continue
        counts = _counts(result)
        stats = {name: _sum(counts, [s for s in range(4) if owner[s] == name]) for name in faults}
        for name, said in faults.items():
            if stats[name]["timeouts"]:
                said.append(f"{int(stats[name]['timeouts'])} timeout(s) at table {table + 1}")
            if stats[name]["rejections"]:
                said.append(f"{int(stats[name]['rejections'])} refused answer(s) at table {table + 1}")
        if result.forfeiting_team is not None:
            loser = match.a if result.forfeiting_team == a_seats else match.b
            forfeited.add(loser)
            faults[loser].append(f"forfeited table {table + 1}: {result.reason}")
        games.append(
            GameRow(
                table_no=table,
                match_id=outcome.match_id,
                a_seats=a_seats,
                points_a=result.scores[a_seats],
                points_b=result.scores[1 - a_seats],
                termination=result.outcome.termination.value,
                reason=result.reason,
                stats_a=stats[match.a],
                stats_b=stats[match.b],
                host=outcome.host,
            )
        )
    return PairVerdict(tuple(games), faults, forfeited)


def _counts(result: MatchResult) -> dict[int, dict[str, float]]:
    out: dict[int, dict[str, float]] = {}
    for line in result.summary:
        counts = line.counts()
        out[line.seat] = {key: float(counts.get(key, 0)) for key in KEPT_COUNTS}
        out[line.seat]["think_ms_p99"] = line.think_ms_p99
    return out


def _sum(counts: dict[int, dict[str, float]], seats: Sequence[int]) -> dict[str, float]:
    total = {key: sum(counts.get(s, {}).get(key, 0.0) for s in seats) for key in KEPT_COUNTS}
    total["think_ms_p99"] = max((counts.get(s, {}).get("think_ms_p99", 0.0) for s in seats), default=0.0)
    return total


__all__ = ["Arena", "PairVerdict", "judge", "pair_forfeits"]
