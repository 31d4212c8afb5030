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
import json
import os
import secrets
import signal
import sys
import time
from collections import defaultdict
from collections.abc import Sequence
from typing import TextIO

from referee import log
from referee.match.records import EventRecord, Line
from referee.replay.signing import KeyFileError, load_signer
from referee.rules import RulesError
from referee.rules.events import RoundScored
from referee.server.serve import RunningServer, freeze_startup_heap, start_server
from referee.server.service import MatchExistsError, Traffic
from referee.server.table import Table
from referee.tournament.bots import Worker as _Worker
from referee.tournament.commitments import COMMITMENTS_FILE, game_salts, write_commitments
from referee.tournament.config import Entrant, TournamentConfig, describe
from referee.tournament.progress import Progress
from referee.tournament.report import Standings, compute_standings, format_table, write_csv, write_html
from referee.tournament.schedule import GameSpec, build_schedule, pairings
from referee.tournament.stats import PairingVerdict, pairing_verdict
from referee.tournament.store import GameResult, GameRow, Store, StoreError

EXIT_INTERRUPTED = 130  # as a shell reports a process ended by SIGINT


class TournamentError(Exception):
    """The tournament cannot start or go on (its database, its bots)."""


class Tournament:
    """Plays a tournament's pending games and keeps its store, SPRTs and progress current."""

    def __init__(self, config: TournamentConfig, out: TextIO, *, live: bool | None = None) -> None:
        self.config = config
        self.out = out
        self.live = live
        self.schedule = build_schedule(config)
        self.pairings = pairings(config)
        self.store = Store(config.database)
        self.run_id = 0
        self._games_by_match: dict[str, str] = {}
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
        self.traffic = Traffic()  # the referee's Play streams in this run (the bench reads it)

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
        self._salts = game_salts(self.store.salt_key(), self.schedule)
        write_commitments(self.schedule, self._salts, self.config.output_dir / COMMITMENTS_FILE)
        first = {p.index: p.first.name for p in self.pairings}
        self._attempts = {row.game_id: row.attempts for row in self.store.games()}
        for row in self.store.games("finished"):
            assert row.score_even is not None and row.score_odd is not None and row.winner is not None
            self._board_done(row.pairing, row.board, row.table_no, first[row.pairing], row.team_even,
                             row.score_even - row.score_odd, row.winner)  # fmt: skip
        for pairing in self.pairings:
            self._check_stop(pairing.index)

    def _pending(self) -> list[GameSpec]:
        done = {row.game_id for row in self.store.games("finished")}
        return [game for game in self.schedule if game.game_id not in done]

    # ---------------------------------------------------------------------------- the run

    async def run(self) -> int:
        """Play every pending game; 0 when the schedule (or the SPRTs) is complete."""
        pending = self._pending()
        level = os.environ.get(log.LEVEL_ENV, "error")
        log.configure(level=level, force=True)
        print(self._banner(len(pending)), file=self.out, flush=True)
        token = secrets.token_urlsafe(24)
        try:
            # The referee writes each match's replay to replay_dir/<match_id>.jsonl. An
            # interrupted game is played again from its first deal under a new match id, so the
            # referee must not continue old matches from their replays by itself (resume=False).
            running = await start_server(
                self.config.listen,
                token,
                insecure=True,
                defaults=self.config.clock,
                on_record=self._on_record,
                replay_dir=self.config.replay_dir,
                resume=False,
                signing_key=self.config.signing_key,
            )
        except (OSError, KeyFileError) as error:
            raise TournamentError(f"cannot start the referee: {error}") from None
        freeze_startup_heap()
        self.traffic = running.service.traffic
        print(f"Referee on {running.address}", file=self.out, flush=True)
        workers = self._workers(running.address)
        progress = Progress(sys.stderr if self.live is None else self.out, len(pending), live=self.live)
        ticker = asyncio.create_task(self._tick(progress))
        play = asyncio.create_task(self._connect_and_play(pending, running, workers, progress))
        # SIGINT or SIGTERM: stop at once, but cleanly (workers ended, the referee stopped); the
        # games that were running stay `running` in the store, and resume plays them again.
        interrupted = asyncio.Event()

        def interrupt() -> None:
            interrupted.set()
            play.cancel()

        loop = asyncio.get_running_loop()
        signals = (signal.SIGINT, signal.SIGTERM)
        for number in signals:
            with contextlib.suppress(NotImplementedError):  # signal handlers are POSIX-only
                loop.add_signal_handler(number, interrupt)
        try:
            await play
        except asyncio.CancelledError:
            if not interrupted.is_set():
                raise
        finally:
            for number in signals:
                with contextlib.suppress(NotImplementedError):
                    loop.remove_signal_handler(number)
            ticker.cancel()
            progress.finish()
            await asyncio.gather(*(w.stop() for ws in workers.values() for w in ws))
            await running.stop()
        if interrupted.is_set():
            print(
                f"\nInterrupted: {self._done} games were finished and stored in this run; "
                f"`tichu tournament resume {self.config.source}` plays the rest",
                file=self.out,
                flush=True,
            )
            return EXIT_INTERRUPTED
        return 0 if self._failed == 0 else 1

    async def _connect_and_play(
        self,
        pending: Sequence[GameSpec],
        running: RunningServer,
        workers: dict[str, list[_Worker]],
        progress: Progress,
    ) -> None:
        await self._play_all(pending, running, workers, progress)

    async def _tick(self, progress: Progress) -> None:
        """Keep the clock and the rate moving between finished games (long games, slow bots)."""
        while True:
            await asyncio.sleep(1.0)
            progress.update(self._done, self._hands, self._leader())

    def _banner(self, pending: int) -> str:
        c = self.config
        per_game = c.hands_per_game
        hands = f", {per_game} hands each" if per_game else ""
        return (
            f"Tournament {c.name} (seed {c.seed}): {c.format.replace('_', ' ')} of {len(c.teams)} teams, "
            f"{len(self.pairings)} pairings, {c.games_per_pairing} games per pairing{hands}"
            f"{' in duplicate board pairs' if c.duplicate else ''}; "
            f"{pending} of {len(self.schedule)} games to play, {c.concurrency} at a time\n"
            f"Results: {c.database}\n"
            f"Seed commitments (publish before the games): {c.output_dir / COMMITMENTS_FILE}"
        )

    def _workers(self, address: str) -> dict[str, list[_Worker]]:
        log_dir = self.config.output_dir / "logs"
        return {
            e.name: [_Worker(e, i, address, log_dir) for i in range(e.processes)]
            for e in self.config.entrants
            if not e.remote
        }

    async def _play_all(
        self,
        pending: Sequence[GameSpec],
        running: RunningServer,
        workers: dict[str, list[_Worker]],
        progress: Progress,
    ) -> None:
        slots = asyncio.Semaphore(self.config.concurrency)
        tasks: set[asyncio.Task[None]] = set()
        next_worker: dict[str, int] = defaultdict(int)
        skipped = 0
        try:
            for spec in pending:
                await slots.acquire()
                board = (spec.pairing, spec.board)
                stopped = spec.pairing in self._stopped
                if stopped and board not in self._started_boards and board not in self._boards:
                    slots.release()
                    skipped += 1
                    progress.update(self._done, self._hands, self._leader(), len(pending) - skipped)
                    continue
                self._started_boards.add(board)
                assignment = []
                for seat, player in enumerate(spec.players):
                    pool = workers.get(player)
                    worker = None
                    if pool:
                        worker = pool[next_worker[player] % len(pool)]
                        next_worker[player] += 1
                    assignment.append((seat, player, worker))
                task = asyncio.create_task(self._game(spec, running, assignment, progress))
                tasks.add(task)
                task.add_done_callback(tasks.discard)
                task.add_done_callback(lambda _: slots.release())
            if tasks:
                await asyncio.gather(*tasks)
        finally:
            # Interrupted: the games under way end with this run (they stay `running` in the store).
            for task in list(tasks):
                task.cancel()
        if skipped:
            print(
                f"\n{skipped} games not played: their pairings' SPRTs had decided", file=self.out, flush=True
            )

    async def _game(
        self,
        spec: GameSpec,
        running: RunningServer,
        assignment: list[tuple[int, str, _Worker | None]],
        progress: Progress,
    ) -> None:
        # A new match id per attempt: the replay of an interrupted attempt stays as it was.
        attempt = self._attempts.get(spec.game_id, 0) + 1
        self._attempts[spec.game_id] = attempt
        match_id = f"{self.config.name}-{spec.game_id}-a{attempt}"
        replay_path = self.config.replay_dir / f"{match_id}.jsonl"
        self._games_by_match[match_id] = spec.game_id
        self.store.mark_started(spec.game_id, self.run_id, match_id, str(replay_path))
        try:
            # Through the referee's Python API: the tournament runs the referee in its own process.
            table, tokens = running.service.create_match(
                preset=self.config.preset,
                rules_json=json.dumps(self.config.rules_overrides) if self.config.rules_overrides else "",
                clock=self.config.clock,
                seed=spec.seed,
                bot_names=list(spec.players),
                match_id=match_id,
                salt=self._salts[spec.game_id],
            )
        except (MatchExistsError, RulesError, ValueError) as error:
            self._failed += 1
            self.store.mark_pending(spec.game_id)
            print(f"\ngame {spec.game_id}: the referee refused it: {error}", file=self.out, flush=True)
            return
        for (seat, player, worker), seat_token in zip(assignment, tokens, strict=True):
            rng_seed = f"tichu-tournament/{self.config.seed}/{spec.game_id}/{seat}"
            line = f"{seat_token} {player} {rng_seed}"
            if worker is not None:
                await worker.give(match_id, line)
            else:
                self._hand_to_remote(self.config.entrant(player), match_id, seat, line)
        await self._await_end(table)
        for _, _, worker in assignment:
            if worker is not None:
                worker.release(match_id)
        self._record_result(spec, table)
        # A referee keeps every table it made (a few MB each) unless told to drop it; the
        # result is stored and the replay is on disk, so a long tournament lets it go at once.
        running.service.forget(match_id)
        progress.update(self._done, self._hands, self._leader())

    async def _await_end(self, table: Table) -> None:
        """Until the table ends; a table whose seats do not all connect in time, or that runs too
        long, is stopped (without a result: resume plays it again)."""
        started = time.monotonic()
        while not table.finished.is_set():
            waited_s = time.monotonic() - started
            if table.status == "waiting" and waited_s > self.config.start_timeout_s:
                await table.stop(f"not every seat connected within {self.config.start_timeout_s:g} s")
                return
            if waited_s > self.config.game_timeout_s:
                await table.stop(f"the game ran over the tournament's {self.config.game_timeout_s:g} s")
                return
            with contextlib.suppress(TimeoutError):
                await asyncio.wait_for(table.finished.wait(), 1.0)

    def _hand_to_remote(self, entrant: Entrant, match_id: str, seat: int, line: str) -> None:
        print(f"seat for {entrant.name}: match {match_id} seat {seat}: {line}", file=self.out, flush=True)
        if entrant.token_file:
            path = self.config.source.parent / entrant.token_file
            path.parent.mkdir(parents=True, exist_ok=True)
            with path.open("a", encoding="utf-8") as tokens:
                tokens.write(line + "\n")

    def _record_result(self, spec: GameSpec, table: Table) -> None:
        result = table.result
        if result is None:
            self._failed += 1
            self.store.mark_pending(spec.game_id)
            print(f"\ngame {spec.game_id} did not finish; resume plays it again", file=self.out, flush=True)
            return
        rounds = result.hands
        self.store.mark_finished(
            spec.game_id,
            GameResult(
                score_even=result.scores[0],
                score_odd=result.scores[1],
                winner=result.winner,
                forfeit=result.forfeit,
                forfeiting_team=result.forfeiting_team,
                reason=result.reason,
                rounds=rounds,
                summary_json=json.dumps(result.statistics(), separators=(",", ":")),
            ),
        )
        self._done += 1
        self._hands += rounds
        pairing = self.pairings[spec.pairing]
        self._board_done(spec.pairing, spec.board, spec.table, pairing.first.name, spec.team_even,
                         result.scores[0] - result.scores[1], result.winner)  # fmt: skip
        if (
            self.config.sprt.stop_early
            and spec.pairing not in self._stopped
            and self._check_stop(spec.pairing)
        ):
            verdict = self._verdict(spec.pairing)
            print(f"\nSPRT {pairing.label}: {verdict.summary}; no new boards", file=self.out, flush=True)

    def _on_record(self, match_id: str, record: Line) -> None:
        if isinstance(record, EventRecord) and isinstance(record.event, RoundScored):
            event = record.event
            game_id = self._games_by_match.get(match_id)
            if game_id is not None:
                self.store.add_round(game_id, event.round, list(event.round_points), list(event.totals))

    # ---------------------------------------------------------------------------- SPRT and leader

    def _board_done(
        self, pairing: int, board: int, table_no: int, first: str, team_even: str, net_even: int, winner: int
    ) -> None:
        first_is_even = team_even == first
        net = net_even if first_is_even else -net_even
        half = 1 if winner == -1 else (2 if (winner == 0) == first_is_even else 0)
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


def stored_standings(config: TournamentConfig, rows: Sequence[GameRow]) -> Standings:
    """The standings of a tournament's stored games (its schedule's rows)."""
    return compute_standings(
        rows,
        config.teams,
        {p.index: (p.first.name, p.second.name) for p in pairings(config)},
        config.sprt,
        config.duplicate,
        sum(r.rounds or 0 for r in rows if r.finished),
    )


def write_standings(config: TournamentConfig, store: Store) -> str:
    """The standings of the stored games as text; standings.csv, head_to_head.csv, standings.html written."""
    standings = stored_standings(config, store.games())
    files = write_csv(standings, config.output_dir)
    files.append(
        write_html(
            standings, f"Tournament {config.name}", config.duplicate, config.output_dir / "standings.html"
        )
    )
    text = format_table(standings, config.duplicate)
    return text + "\n\nWritten: " + ", ".join(str(f) for f in files)


def run_tournament(config: TournamentConfig, *, resume: bool, out: TextIO, live: bool | None = None) -> int:
    """Run (or resume) a tournament and print its standings; the exit code."""
    tournament = Tournament(config, out, live=live)
    try:
        tournament.prepare(resume)
        started = time.monotonic()
        code = asyncio.run(tournament.run())
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
