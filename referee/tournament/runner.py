"""`tichu tournament run|resume`: one referee in this process, a worker process per local entrant.

The runner writes the schedule to SQLite, starts the referee (start_server, plaintext on
config.listen), starts each local entrant's worker process(es) (referee.tournament.worker), and
plays the pending games `concurrency` at a time, in schedule order: each game is created through
the organiser API (CreateMatch over gRPC), its seat tokens go to the workers (or are printed for
remote entrants), and its result is committed the moment the table finishes. After each board
pair the pairing's SPRT is updated; with stop_early, a decided pairing starts no new board.
Before any game, every game's seed commitment is written to commitments.csv (commitments.py).
"""

from __future__ import annotations

import asyncio
import contextlib
import os
import secrets
import shlex
import signal
import sys
import threading
import time
from collections import defaultdict, deque
from collections.abc import Callable, Iterable, Sequence
from pathlib import Path
from typing import TYPE_CHECKING, TextIO

from referee import log
from referee.replay.signing import KeyFileError, load_signer
from referee.server.front import Referee
from referee.server.heap import tune_collector
from referee.server.service import Traffic
from referee.tournament.bots import build_identity
from referee.tournament.commitments import COMMITMENTS_FILE, game_salts, write_commitments
from referee.tournament.config import Entrant, TournamentConfig, describe
from referee.tournament.host import (
    Fleet,
    GameOrder,
    GameOutcome,
    Host,
    HostError,
    HostLostError,
    LocalFleet,
    RemoteSeat,
)
from referee.tournament.progress import Progress
from referee.tournament.report import Standings, compute_standings, format_table, write_csv, write_html
from referee.tournament.schedule import GameSpec, build_schedule, pairings
from referee.tournament.stats import PairingVerdict, pairing_verdict
from referee.tournament.store import EntrantBuild, GameRow, SeatRow, Store, StoreError

if TYPE_CHECKING:
    from referee.web.app import RunningWeb

EXIT_INTERRUPTED = 130  # as a shell reports a process ended by SIGINT


class TournamentError(Exception):
    """The tournament cannot start or go on (its database, its bots, its hosts)."""


class Tournament:
    """Plays a tournament's pending games and keeps its store, SPRTs and progress current."""

    def __init__(
        self,
        config: TournamentConfig,
        out: TextIO,
        *,
        live: bool | None = None,
        fleet: Fleet | None = None,
        http: str = "",
    ) -> None:
        self.config = config
        self.http = http  # HOST:PORT of the web face, or "" for none
        self.fleet: Fleet = LocalFleet() if fleet is None else fleet
        self.out = out
        self.live = live
        self.schedule = build_schedule(config)
        self.pairings = pairings(config)
        self.store = Store(config.database)
        self.run_id = 0
        # (pairing, board) -> {table: (net points for the pairing's first team, its half points)}
        self._boards: dict[tuple[int, int], dict[int, tuple[int, int]]] = defaultdict(dict)
        self._counts: dict[int, list[int]] = {p.index: [0] * 5 for p in self.pairings}
        self._stopped: set[int] = set()
        self._started_boards: set[tuple[int, int]] = set()
        self._team_nets: dict[str, list[int]] = defaultdict(list)
        self._done = 0
        self._hands = 0
        self._failed = 0
        self._attempts: dict[str, int] = {}
        self._salts: dict[str, str] = {}
        self._progress: Progress | None = None
        self._skipped = 0  # games of the schedule skipped (this run and before)

    @property
    def games_played(self) -> int:
        """Games finished in this run."""
        return self._done

    @property
    def hands_played(self) -> int:
        """Hands of the games finished in this run."""
        return self._hands

    # ---------------------------------------------------------------------------- setup

    def prepare(self, resume: bool) -> None:
        """Write the schedule (run) or check the stored one (resume); load what is already done."""
        fingerprint = self.config.fingerprint()
        if self.config.signing_key is not None:
            try:  # before the schedule is written: a bad key path is a config error, not a run
                load_signer(self.config.signing_key)
            except KeyFileError as error:
                raise TournamentError(f"signing_key: {error}") from None
        if self.store.is_empty():
            if resume:
                raise TournamentError(
                    f"{self.config.database} holds no tournament yet: use `tichu tournament run`"
                )
            self.store.initialise(fingerprint, dict(describe(self.config)), self.schedule)
        else:
            try:
                self.store.check(fingerprint)
            except StoreError as error:
                raise TournamentError(str(error)) from None
            if not resume:
                raise TournamentError(
                    f"{self.config.database} already holds this tournament: continue it with "
                    "`tichu tournament resume`, or give another database path"
                )
        self.run_id = self.store.start_run("resume" if resume else "run", os.getpid())
        self.store.record_builds(
            self.run_id, [_build(e, self.config.source.parent) for e in self.config.entrants]
        )
        self._salts = game_salts(self.store.salt_key(), self.schedule)
        write_commitments(self.schedule, self._salts, self.config.output_dir / COMMITMENTS_FILE)
        first = {p.index: p.first.name for p in self.pairings}
        self._attempts = {row.game_id: row.attempts for row in self.store.games()}
        for row in self.store.games("finished"):
            assert row.score_even is not None and row.score_odd is not None and row.winner is not None
            winner = None if row.winner < 0 else row.winner  # the store's -1: none
            self._board_done(row.pairing, row.board, row.table_no, first[row.pairing], row.team_even,
                             row.score_even - row.score_odd, winner)  # fmt: skip
        for pairing in self.pairings:
            self._check_stop(pairing.index)

    def _pending(self) -> list[GameSpec]:
        """The games left to play: not finished, and not skipped by an SPRT that is still decided
        (a skipped game of a pairing that is undecided again, with other settings, is played)."""
        rows = {row.game_id: row for row in self.store.games()}
        return [
            game
            for game in self.schedule
            if not rows[game.game_id].finished
            and not (rows[game.game_id].skipped and game.pairing in self._stopped)
        ]

    def _say(self, text: str) -> None:
        """A line for the organiser while games run: above the progress bar, never inside it."""
        if self._progress is not None:
            self._progress.message(text)
        else:
            print(text, file=self.out, flush=True)

    # ---------------------------------------------------------------------------- the run

    async def run(self) -> int:
        """Play every pending game; 0 when the schedule (or the SPRTs) is complete."""
        pending = self._pending()
        # A run killed after a board's last game was stored but before its replays were
        # published left them in the live folder: a board with nothing left to play is
        # published now (it would never be again).
        live = self.config.live_dir
        if live.is_dir() and any(live.iterdir()):
            waiting = {(g.pairing, g.board) for g in pending}
            for unit in _boards(self.schedule):
                if (unit[0].pairing, unit[0].board) not in waiting:
                    self._publish(unit)
        level = os.environ.get(log.LEVEL_ENV, "error")
        log.configure(level=level, force=True)
        print(self._banner(len(pending)), file=self.out, flush=True)
        hosts = await self._start_hosts()
        web = await self._start_web() if self.http else None
        rows = self.store.games()
        self._skipped = sum(1 for row in rows if row.skipped and row.pairing in self._stopped)
        progress = Progress(
            sys.stderr if self.live is None else self.out,
            len(self.schedule),
            sum(1 for row in rows if row.finished),
            skipped=self._skipped,
            live=self.live,
        )
        self._progress = progress
        ticker = asyncio.create_task(self._tick(progress))
        play = asyncio.create_task(self._play_all(pending, hosts, progress))
        # SIGINT or SIGTERM: stop at once, but cleanly (hosts and their bots ended); the games
        # that were running stay `running` in the store, and resume plays them again.
        interrupted = asyncio.Event()

        def interrupt() -> None:
            interrupted.set()
            play.cancel()

        handled = _handle_signals(interrupt)
        try:
            await play
        except asyncio.CancelledError:
            if not interrupted.is_set():
                raise
        finally:
            handled()
            ticker.cancel()
            progress.finish()
            self._progress = None
            if web is not None:
                await web.stop()
            await self.fleet.stop()
        if interrupted.is_set():
            print(
                f"\nInterrupted: {self._done} games were finished and stored in this run; "
                f"`tichu tournament resume {self.config.source}` plays the rest",
                file=self.out,
                flush=True,
            )
            return EXIT_INTERRUPTED
        return 0 if self._failed == 0 else 1

    async def _start_web(self) -> RunningWeb:
        """The web face: the tournament page, and the live games of the referee in this process
        (a tournament on Ray plays its games elsewhere: its page lists them without a link)."""
        from referee.tournament.web import TournamentView
        from referee.web.app import parse_address, start_web
        from referee.web.archive import Archive
        from referee.web.store_reader import info_from_config

        if isinstance(self.fleet, LocalFleet) and self.fleet.host is not None and self.fleet.host.running:
            front = self.fleet.host.running.service.referee
        else:
            front = Referee(secrets.token_urlsafe(32))
        view = TournamentView(self.config, self.store, lambda: {entry.table.match_id for entry in front})
        # The archive's pages of this tournament too (games, boards, entrants, charts), read
        # from its store as it fills.
        archive = Archive()
        source = archive.add_tournament(info_from_config(self.config))
        host, port = parse_address(self.http)
        web = await start_web(front, host, port, tournament=view.snapshot, archive=archive)
        print(
            f"Web face: {web.url}/tournament (its archive: {web.url}/tournaments/{source.tid})",
            file=self.out,
            flush=True,
        )
        return web

    async def _start_hosts(self) -> list[Host]:
        try:
            hosts = await self.fleet.start(self.config)
        except HostError as error:
            raise TournamentError(str(error)) from None
        if isinstance(self.fleet, LocalFleet) and self.fleet.host is not None:
            failed = await self.fleet.host.check_entrants(self.config.start_timeout_s)
            if failed:
                await self.fleet.stop()
                raise TournamentError(
                    "an entrant cannot play, so no game was started:\n"
                    + "\n".join(
                        f"  entrant {name} ({self.config.entrant(name).code}): {why}"
                        for name, why in sorted(failed.items())
                    )
                    + f"\nTheir logs are in {self.fleet.host.logs}."
                )
        tune_collector()  # as `tichu serve` does, once its referees and bots are up
        for host in hosts:
            print(
                f"Host {host.name}: referee on {host.address}, bot logs in {host.logs}",
                file=self.out,
                flush=True,
            )
            if host.isolation:
                print(f"  {host.isolation}", file=self.out, flush=True)
        return hosts

    @property
    def traffic(self) -> Traffic:
        """The referee's Play streams in this run, over every host (the bench reads it)."""
        return self.fleet.traffic()

    async def _tick(self, progress: Progress) -> None:
        """Keep the clock and the rate moving between finished games (long games, slow bots)."""
        while True:
            await asyncio.sleep(1.0)
            progress.update(self._done, self._hands, self._leader(), skipped=self._skipped)

    def _banner(self, pending: int) -> str:
        c = self.config
        per_game = c.hands_per_game
        hands = f", {per_game} hands each" if per_game else ""
        return (
            f"Tournament {c.name} (seed {c.seed}): {c.format.replace('_', ' ')} of {len(c.teams)} teams, "
            f"{len(self.pairings)} pairings, {c.games_per_pairing} games per pairing{hands}"
            f"{' in duplicate board pairs' if c.duplicate else ''}; "
            f"{pending} of {len(self.schedule)} games to play, {self.fleet.describe(c)}\n"
            f"Results: {c.database}\n"
            f"Seed commitments (publish before the games): {c.output_dir / COMMITMENTS_FILE}"
        )

    async def _play_all(self, pending: Sequence[GameSpec], hosts: list[Host], progress: Progress) -> None:
        """Keep every host busy with up to its capacity of games, board by board in schedule order.

        Both tables of a duplicate board go to the same host and are played at the same time, on
        one of its slots: the host's bots then see the same machine for the pair, and neither
        table's replay is published (moved from the private live folder to replay_dir) before
        both have ended. A decided pairing starts
        no new board. A host that is lost (its node died) takes no more games; the games it held
        go back to the front of the queue as new attempts on the hosts that remain."""
        queue: deque[list[GameSpec]] = deque(_boards(pending))
        skipped = 0
        in_flight = 0
        changed = asyncio.Event()  # a board was requeued or finished: idle slots look again
        alive = set(range(len(hosts)))

        async def slot(index: int, host: Host) -> None:
            nonlocal skipped, in_flight
            while index in alive:
                if not queue:
                    if in_flight == 0:
                        return
                    changed.clear()
                    await changed.wait()
                    continue
                unit = queue.popleft()
                board = (unit[0].pairing, unit[0].board)
                fresh = board not in self._started_boards and board not in self._boards
                if unit[0].pairing in self._stopped and fresh:
                    skipped += len(unit)
                    self._skipped += len(unit)
                    verdict = self._verdict(unit[0].pairing).summary
                    self.store.mark_skipped([spec.game_id for spec in unit], f"SPRT decided: {verdict}")
                    progress.update(self._done, self._hands, self._leader(), skipped=self._skipped)
                    continue
                self._started_boards.add(board)
                in_flight += 1
                try:
                    # A board's tables at the same time: while one is played, the other's
                    # complete replay (every hand) does not exist yet for anybody to read.
                    played = await asyncio.gather(
                        *(self._game(spec, host, progress) for spec in unit), return_exceptions=True
                    )
                    lost = [
                        spec for spec, end in zip(unit, played, strict=True) if isinstance(end, HostLostError)
                    ]
                    for end in played:
                        if isinstance(end, BaseException) and not isinstance(end, HostLostError):
                            raise end
                    if lost:
                        alive.discard(index)
                        queue.appendleft(lost)
                        self._say(f"host {host.name} lost: its games are played again elsewhere")
                        return
                    self._publish(unit)
                finally:
                    in_flight -= 1
                    changed.set()

        slots = [
            asyncio.create_task(slot(index, host))
            for index, host in enumerate(hosts)
            for _ in range(max(1, host.capacity))
        ]
        try:
            await asyncio.gather(*slots)
        finally:
            # Interrupted: the games under way end with this run (they stay `running` in the store).
            for task in slots:
                task.cancel()
        if queue:
            self._failed += sum(len(unit) for unit in queue)
            raise TournamentError(
                f"every host was lost; {sum(len(unit) for unit in queue)} games are not played: "
                f"`tichu tournament resume {self.config.source}` plays them"
            )
        if skipped:
            self._say(f"{skipped} games not played: their pairings' SPRTs had decided")

    async def _game(self, spec: GameSpec, host: Host, progress: Progress) -> None:
        # A new match id per attempt: the replay of an interrupted attempt stays as it was.
        attempt = self._attempts.get(spec.game_id, 0) + 1
        self._attempts[spec.game_id] = attempt
        match_id = f"{self.config.name}-{spec.game_id}-a{attempt}"
        replay_path = self.config.replay_dir / f"{match_id}.jsonl"
        self.store.mark_started(
            spec.game_id, self.run_id, match_id, str(replay_path), host.name, sandboxed=self.config.sandbox
        )
        order = GameOrder(
            game_id=spec.game_id,
            match_id=match_id,
            seed=spec.seed,
            salt=self._salts[spec.game_id],
            players=tuple(spec.players),
            rng_seeds=tuple(
                f"tichu-tournament/{self.config.seed}/{spec.game_id}/{seat}"
                for seat in range(len(spec.players))
            ),
        )
        try:
            for remote in await host.open(order):
                self._hand_to_remote(self.config.entrant(remote.entrant), remote)
            outcome = await host.finish(match_id)
        except HostLostError as lost:
            self.store.mark_pending(spec.game_id, f"host {host.name} lost: {lost}", "lost", attempt=attempt)
            raise
        if outcome.replay_text is not None:
            live = self.config.live_dir / replay_path.name
            live.parent.mkdir(mode=0o700, parents=True, exist_ok=True)
            fd = os.open(live, os.O_WRONLY | os.O_CREAT | os.O_TRUNC, 0o600)
            with os.fdopen(fd, "w", encoding="utf-8") as replay:
                replay.write(outcome.replay_text)
        self._record_result(spec, outcome, attempt)
        progress.update(self._done, self._hands, self._leader(), skipped=self._skipped)

    def _publish(self, unit: Sequence[GameSpec]) -> None:
        """A board was played: move its games' replays (every attempt, both tables, this run's and
        an earlier one's) from the private live folder to replay_dir, where viewers find them."""
        live = self.config.live_dir
        if not live.is_dir():
            return
        board = (unit[0].pairing, unit[0].board)
        ids = {g.game_id for g in self.schedule if (g.pairing, g.board) == board}
        done = self._boards.get(board, {})
        if self.config.duplicate and len(done) < 2 and len(ids) > 1:
            return  # a table did not finish: its twin's replay waits for it, unread
        self.config.replay_dir.mkdir(parents=True, exist_ok=True)
        for game_id in ids:
            for path in live.glob(f"{self.config.name}-{game_id}-a*.jsonl"):
                os.replace(path, self.config.replay_dir / path.name)

    def _hand_to_remote(self, entrant: Entrant, seat: RemoteSeat) -> None:
        print(
            f"seat for {entrant.name}: match {seat.match_id} seat {seat.seat} on {seat.server}: {seat.line}",
            file=self.out,
            flush=True,
        )
        if entrant.token_file:
            path = self.config.source.parent / entrant.token_file
            path.parent.mkdir(parents=True, exist_ok=True)
            # A fourth field names the referee when it is not the one the worker was started
            # with (a tournament on several hosts); workers of earlier releases read three.
            line = seat.line if seat.server == self.fleet.primary_address else f"{seat.line} {seat.server}"
            with path.open("a", encoding="utf-8") as tokens:
                tokens.write(line + "\n")

    def _record_result(self, spec: GameSpec, outcome: GameOutcome, attempt: int) -> None:
        result = outcome.result
        if result is None:
            self._failed += 1
            self.store.mark_pending(spec.game_id, outcome.failure, attempt=attempt)
            self._say(f"game {spec.game_id} did not finish; resume plays it again ({outcome.failure})")
            return
        self.store.mark_finished(spec.game_id, result, spec.players, outcome.exit_reasons, attempt=attempt)
        for seat, why in sorted(outcome.exit_reasons.items()):
            self._say(f"game {spec.game_id}: seat {seat} ({spec.players[seat]}) ended early: {why}")
        self._done += 1
        self._hands += result.hands
        pairing = self.pairings[spec.pairing]
        self._board_done(spec.pairing, spec.board, spec.table, pairing.first.name, spec.team_even,
                         result.scores[0] - result.scores[1], result.winner)  # fmt: skip
        if (
            self.config.sprt.stop_early
            and spec.pairing not in self._stopped
            and self._check_stop(spec.pairing)
        ):
            verdict = self._verdict(spec.pairing)
            self._say(f"SPRT {pairing.label}: {verdict.summary}; no new boards")

    # ---------------------------------------------------------------------------- SPRT and leader

    def _board_done(
        self,
        pairing: int,
        board: int,
        table_no: int,
        first: str,
        team_even: str,
        net_even: int,
        winner: int | None,
    ) -> None:
        first_is_even = team_even == first
        net = net_even if first_is_even else -net_even
        half = 1 if winner is None else (2 if (winner == 0) == first_is_even else 0)
        tables = self._boards[(pairing, board)]
        tables[table_no] = (net, half)
        complete = len(tables) == 2 if self.config.duplicate else True
        if complete:
            total_net = sum(n for n, _ in tables.values())
            total_half = sum(h for _, h in tables.values()) * (1 if self.config.duplicate else 2)
            self._counts[pairing][total_half] += 1
            second = self.pairings[pairing].second.name
            self._team_nets[first].append(total_net)
            self._team_nets[second].append(-total_net)

    def _verdict(self, pairing: int) -> PairingVerdict:
        s = self.config.sprt
        p = self.pairings[pairing]
        return pairing_verdict(
            p.first.name, p.second.name, self._counts[pairing], s.elo0, s.elo1, s.alpha, s.beta
        )

    def _check_stop(self, pairing: int) -> bool:
        if self.config.sprt.stop_early and self._verdict(pairing).decided:
            self._stopped.add(pairing)
            return True
        return False

    def _leader(self) -> str:
        if not self._team_nets:
            return ""
        team, nets = max(self._team_nets.items(), key=lambda item: sum(item[1]) / len(item[1]))
        unit = "board pair" if self.config.duplicate else "game"
        return f"{team} ({sum(nets) / len(nets):+.0f} per {unit})"

    # ---------------------------------------------------------------------------- the end

    def standings_report(self) -> str:
        """Compute the standings from the store, write the CSV and HTML files; the text to print."""
        return write_standings(self.config, self.store)

    def close(self) -> None:
        """Close the database."""
        self.store.close()


def _build(entrant: Entrant, base: Path) -> EntrantBuild:
    """What the entrant runs as: its bot class or command line, the file hashed, and the hash."""
    kind, hashed, sha256 = build_identity(entrant, base)
    declared = entrant.bot or shlex.join(entrant.command)
    return EntrantBuild(entrant.name, kind, f"{declared} ({hashed})" if hashed else declared, sha256)


def _boards(games: Iterable[GameSpec]) -> list[list[GameSpec]]:
    """The games grouped by board (a duplicate board's two tables together), in schedule order."""
    boards: dict[tuple[int, int], list[GameSpec]] = {}
    for game in games:
        boards.setdefault((game.pairing, game.board), []).append(game)
    return list(boards.values())


def _handle_signals(interrupt: Callable[[], None]) -> Callable[[], None]:
    """Call `interrupt` on SIGINT or SIGTERM; what undoes it.

    Only the main thread may set signal handlers (asyncio raises RuntimeError elsewhere): a
    tournament driven from another thread (a Ray actor's, a test's) leaves signals to its owner."""
    if threading.current_thread() is not threading.main_thread():
        return lambda: None
    loop = asyncio.get_running_loop()
    signals = (signal.SIGINT, signal.SIGTERM)
    for number in signals:
        with contextlib.suppress(NotImplementedError):  # signal handlers are POSIX-only
            loop.add_signal_handler(number, interrupt)

    def undo() -> None:
        for number in signals:
            with contextlib.suppress(NotImplementedError):
                loop.remove_signal_handler(number)

    return undo


def stored_standings(
    config: TournamentConfig, rows: Sequence[GameRow], seats: Sequence[SeatRow] = ()
) -> Standings:
    """The standings of a tournament's stored games (its schedule's rows, and their seats' stats)."""
    return compute_standings(
        rows,
        config.teams,
        {p.index: (p.first.name, p.second.name) for p in pairings(config)},
        config.sprt,
        config.duplicate,
        sum(r.rounds or 0 for r in rows if r.finished),
        seats,
    )


def write_standings(config: TournamentConfig, store: Store) -> str:
    """The standings of the stored games as text; standings.csv, head_to_head.csv, standings.html written."""
    standings = stored_standings(config, store.games(), store.seat_stats())
    files = write_csv(standings, config.output_dir)
    files.append(
        write_html(
            standings, f"Tournament {config.name}", config.duplicate, config.output_dir / "standings.html"
        )
    )
    text = format_table(standings, config.duplicate)
    return text + "\n\nWritten: " + ", ".join(str(f) for f in files)


def run_tournament(
    config: TournamentConfig,
    *,
    resume: bool,
    out: TextIO,
    live: bool | None = None,
    fleet: Fleet | None = None,
    http: str = "",
) -> int:
    """Run (or resume) a tournament, here or on `fleet`, and print its standings; the exit code.
    With `http` (HOST:PORT), serve its web face there while it runs."""
    tournament = Tournament(config, out, live=live, fleet=fleet, http=http)
    try:
        tournament.prepare(resume)
        started = time.monotonic()
        try:
            code = asyncio.run(tournament.run())
        except BaseException:
            tournament.store.end_run(tournament.run_id, 1)
            raise
        tournament.store.end_run(tournament.run_id, code)
        elapsed = time.monotonic() - started
        hands = tournament.hands_played
        print(
            f"\nPlayed {tournament.games_played} games, {hands} hands in {elapsed:.1f} s: "
            f"{hands / max(elapsed, 1e-9):.2f} hands/s",
            file=out,
        )
        print(tournament.standings_report(), file=out, flush=True)
        return code
    finally:
        tournament.close()
