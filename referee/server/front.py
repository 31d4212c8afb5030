"""The referee's Python front door: matches created from typed values, found, awaited, resumed
and forgotten, with no protobuf in sight.

The gRPC servicer (referee.server.service) is one caller, which turns wire requests into these
calls; the tournament host, the demo and the tests are others, and so are the web face and the
arena to come. One MatchEntry per match holds what the referee keeps of it (its table, its
replay's path, its seat tokens), so nothing has to be kept in step by hand.
"""

from __future__ import annotations

import asyncio
import contextlib
import functools
import re
import secrets
import time
from collections.abc import Callable, Iterator, Sequence
from dataclasses import dataclass
from pathlib import Path

from referee.log import get_logger
from referee.match import ClockSettings, Match, MatchResult
from referee.match.digests import SALT_BYTES
from referee.match.moves import ReplayMismatchError
from referee.match.proof import SeedSecret, Signer, match_seed
from referee.match.records import Line
from referee.replay import ReplayFormatError, ReplayWriter, read_replay
from referee.rules import OFFICIAL, RulesConfig, RulesError, State
from referee.server.input_limits import check_match_fields, check_rules
from referee.server.seeds import SealError, draw_seed, new_secret, seal, unseal
from referee.server.table import Table
from referee.server.tokens import SeatTokens, check_organiser_token

MATCH_ID = re.compile(r"[A-Za-z0-9][A-Za-z0-9_.-]{0,63}")
SALT = re.compile(f"[0-9a-f]{{{2 * SALT_BYTES}}}")
RecordHook = Callable[[str, Line], None]


class MatchExistsError(ValueError):
    """A new match named a match id that is already taken (here, or by a replay on disk)."""


@dataclass(frozen=True, slots=True)
class MatchEntry:
    """What the referee keeps of one match."""

    table: Table
    tokens: tuple[str, ...]  # the seat tokens handed out, in seat order
    replay_path: Path | None  # where its replay is written, if the referee writes replays


class Referee:
    """Many matches, created, found, awaited and forgotten from Python; the servicer's engine."""

    def __init__(
        self,
        organiser_token: str,
        defaults: ClockSettings | None = None,
        *,
        now: Callable[[], float] = time.monotonic,
        wall: Callable[[], float] = time.time,
        on_record: RecordHook | None = None,
        replay_dir: Path | None = None,
        forget_finished_after_s: float | None = None,
        keep_records: bool = False,
        sign: Signer | None = None,
    ) -> None:
        if not organiser_token:
            raise ValueError("an organiser token is required")
        check_organiser_token(organiser_token)
        self.organiser_token = organiser_token.encode()
        # Seat tokens from a secret of their own (kept with the replays, for resume), never from
        # the organiser token: a bot cannot guess that token, or another seat's, from its own.
        self.tokens = SeatTokens.in_folder(replay_dir, organiser_token)
        self.defaults = defaults or ClockSettings()
        self.now = now
        self._wall = wall
        self._on_record = on_record
        self.replay_dir = replay_dir
        self.forget_finished_after_s = forget_finished_after_s
        self.keep_records = keep_records  # each table keeps its records in memory (Table.records)
        self._sign = sign  # signs the chain's head of every match (tichu serve --signing-key)
        self._entries: dict[str, MatchEntry] = {}
        self._seats: dict[str, tuple[Table, int]] = {}  # every token that opens a seat
        self._log = get_logger()

    # ---------------------------------------------------------------------------- finding

    def entry(self, match_id: str) -> MatchEntry | None:
        """The match's entry, or None if this referee does not hold it."""
        return self._entries.get(match_id)

    def table(self, match_id: str) -> Table | None:
        """The match's table, or None if this referee does not hold it."""
        entry = self._entries.get(match_id)
        return None if entry is None else entry.table

    def __iter__(self) -> Iterator[MatchEntry]:
        """Every match this referee holds, in the order they were created or resumed."""
        return iter(list(self._entries.values()))

    def __len__(self) -> int:
        return len(self._entries)

    def seat_for(self, token: str) -> tuple[Table, int] | None:
        """The table and seat a seat token opens, or None."""
        return self._seats.get(token) if token else None

    def seat_token(self, match_id: str, seat: int) -> str:
        """A seat's secret token, from the server's seat secret (tokens.SeatTokens): a restarted
        referee with the same replay folder accepts the tokens it handed out before."""
        return self.seat_tokens(match_id, seat)[0]

    def seat_tokens(self, match_id: str, seat: int, *, legacy: bool = False) -> tuple[str, ...]:
        """The tokens that open a seat: the one handed out first, then any older form of it
        (a '-' first character, and with `legacy` the form derived from the organiser token that
        a match resumed from an older release's replay folder handed out)."""
        return self.tokens.for_seat(match_id, seat, legacy=legacy)

    # ---------------------------------------------------------------------------- creating

    def create(
        self,
        rules: RulesConfig = OFFICIAL,
        *,
        clock: ClockSettings | None = None,
        seed: str = "",
        bot_names: Sequence[str] = (),
        watch_delay_events: int = 0,
        match_id: str = "",
        initial_state: State | None = None,
        salt: str = "",
        person_seats: Sequence[int] = (),
    ) -> MatchEntry:
        """Create and start a match; its entry (the table, one secret token per seat).

        Raises RulesError (rules the referee does not play), MatchExistsError, or ValueError (bad
        names or id; an InputError names a field out of its bounds, referee.server.input_limits).
        `initial_state` starts from a given position (state_from_json) instead of a deal, under
        its own rules. The seed (given, else drawn) is committed to with `salt` (hex; by default a
        random one; a tournament gives its own so that it can publish the commitment first), and
        the match's header and every Welcome show the commitment. `person_seats` are the seats a
        person plays (from a browser, through the web face's seat page): the header marks them.
        """
        check_match_fields(bot_names, seed, "", watch_delay_events)
        config = initial_state.config if initial_state is not None else rules
        check_rules(config)
        if match_id:
            if not MATCH_ID.fullmatch(match_id):
                raise ValueError("a match id is 1-64 letters, digits, '_', '.' or '-'")
        else:
            match_id = secrets.token_hex(6)
        if match_id in self._entries:
            raise MatchExistsError(f"match {match_id!r} exists already")
        path = None if self.replay_dir is None else self.replay_dir / f"{match_id}.jsonl"
        if path is not None and path.exists():
            raise MatchExistsError(f"match {match_id!r} has a replay already ({path})")
        if bot_names and len(bot_names) != config.players:
            raise ValueError(f"give one bot name per seat ({config.players}), or none")
        if any(not 0 <= s < config.players for s in person_seats) or len(set(person_seats)) != len(
            person_seats
        ):
            raise ValueError(f"person seats are distinct seats 0-{config.players - 1}")
        if salt and not SALT.fullmatch(salt):
            raise ValueError(f"a salt is {SALT_BYTES} bytes in hex ({2 * SALT_BYTES} digits 0-9a-f)")
        deal_seed = match_seed(seed) if seed else draw_seed()
        secret = new_secret(deal_seed) if not salt else SeedSecret(deal_seed, salt)
        header = Match.header_for(
            match_id,
            config,
            clock=clock or self.defaults,
            seed=deal_seed,
            bot_names=bot_names,
            watch_delay_events=watch_delay_events,
            initial_state=initial_state,
            wall=self._wall(),
            salt=secret.salt,
            sealed_seed=seal(self.organiser_token, match_id, secret),
            person_seats=tuple(person_seats),
        )
        writer = None if path is None else ReplayWriter(path)
        table = Table(
            Match(header, now=self.now(), wall=self._wall(), secret=secret, sign=self._sign),
            now=self.now,
            on_record=self._record_hook(match_id, writer),
            keep_records=self.keep_records,
        )
        entry = self._open(table, writer)
        # The seed stays out of the log, as out of the header: the commitment names it.
        commitment = header.seed_commitment
        self._log.info("match_created", match_id=match_id, players=config.players, seed_commitment=commitment)
        return entry

    def resume_unfinished(self) -> list[str]:
        """Continue every unfinished match whose replay is in `replay_dir`; their ids.

        A replay that cannot be read or re-run is left as it is, with an error in the log.
        """
        if self.replay_dir is None or not self.replay_dir.is_dir():
            return []
        resumed = []
        for path in sorted(self.replay_dir.glob("*.jsonl")):
            try:
                replay = read_replay(path)
                if replay.result is not None or replay.match_id in self._entries:
                    continue
                if replay.chain_break is not None:
                    line, why = replay.chain_break
                    raise ReplayFormatError(f"{path}:{line}: {why}")
                header = replay.header
                secret = None
                if header.chained:
                    secret = unseal(self.organiser_token, header.match_id, header.sealed_seed)
                match = Match.resume(
                    header,
                    replay.records,
                    now=self.now(),
                    wall=self._wall(),
                    secret=secret,
                    sign=self._sign,
                    head=replay.hashes[-1] or None,
                )
                writer = ReplayWriter(path, keep_bytes=replay.complete_bytes)
                table = Table(
                    match,
                    now=self.now,
                    on_record=self._record_hook(replay.match_id, writer),
                    keep_records=self.keep_records,
                )
                if self.keep_records:
                    table.records = [replay.header, *replay.records, *table.records]
                    table.hashes = [*replay.hashes, *table.hashes]
            except (
                OSError,
                ReplayFormatError,
                ReplayMismatchError,
                SealError,
                RulesError,
                LookupError,
                ValueError,
            ) as error:
                self._log.error("resume_failed", path=str(path), error=str(error))
                continue
            self._open(table, writer, resumed=True)
            resumed.append(table.match_id)
            self._log.info(
                "match_resumed_from_replay",
                match_id=table.match_id,
                state_version=table.state_version,
                truncated_line=replay.truncated,
            )
        return resumed

    def _record_hook(self, match_id: str, writer: ReplayWriter | None) -> Callable[[Line, str], None] | None:
        hook = self._on_record
        if writer is None:
            return None if hook is None else (lambda record, _: hook(match_id, record))

        def record(record: Line, h: str) -> None:
            """Write the record (with its place in the chain) to the replay, then pass it on."""
            writer.write(record, h)
            if hook is not None:
                hook(match_id, record)

        return record

    def _open(self, table: Table, writer: ReplayWriter | None, *, resumed: bool = False) -> MatchEntry:
        """Register a table and its seat tokens and start it; its entry."""
        match_id = table.match_id
        tokens = tuple(self.seat_token(match_id, seat) for seat in range(table.players))
        entry = MatchEntry(table, tokens, None if writer is None else writer.path)
        self._entries[match_id] = entry
        for seat in range(table.players):
            for token in self.seat_tokens(match_id, seat, legacy=resumed):
                self._seats[token] = (table, seat)
        if writer is not None:
            table.finished_callbacks.append(writer.close)
        if self.forget_finished_after_s is not None:
            table.finished_callbacks.append(functools.partial(self._forget_later, match_id))
        table.start()
        return entry

    # ---------------------------------------------------------------------------- ending

    async def finished(self, match_id: str, timeout_s: float | None = None) -> MatchResult | None:
        """Wait until the match ends (at most `timeout_s`); its result, or None if it ended
        without one (stopped) or is still being played when the time is up. KeyError if unknown."""
        entry = self._entries[match_id]
        with contextlib.suppress(TimeoutError):
            await asyncio.wait_for(entry.table.finished.wait(), timeout_s)
        return entry.table.result

    def _forget_later(self, match_id: str) -> None:
        if self.forget_finished_after_s is not None:
            asyncio.get_running_loop().call_later(self.forget_finished_after_s, self.forget, match_id)

    def forget(self, match_id: str) -> bool:
        """Drop a finished match (its table, tokens and listing); its replay file stays.

        A referee that runs thousands of matches cannot keep every table in memory;
        a bot that connects afterwards is told its token is unknown. False if the match is
        unknown or still being played.
        """
        entry = self._entries.get(match_id)
        if entry is None or entry.table.status != "finished":
            return False
        self.drop(match_id)
        return True

    def drop(self, match_id: str) -> None:
        """Let go of a match whatever its state (its replay file stays): for a caller that has
        stopped it, or a test that plays a referee that lost it."""
        entry = self._entries.pop(match_id, None)
        if entry is None:
            return
        for seat in range(entry.table.players):
            for token in self.seat_tokens(match_id, seat, legacy=True):
                self._seats.pop(token, None)
        self._log.info("match_forgotten", match_id=match_id)

    async def close(self) -> None:
        """Stop every match (closing its streams)."""
        await asyncio.gather(*(entry.table.stop() for entry in self._entries.values()))


__all__ = ["MATCH_ID", "MatchEntry", "MatchExistsError", "RecordHook", "Referee"]
