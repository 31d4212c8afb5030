"""Moves: the records that change the game, applied by the one function that the match core and
the verifier share, and the re-run of a whole replay that `tichu replay verify` and a resumed
match rest on.

A move is a decision, a Tichu call sent out of turn, a default taken after a timeout or a bomb
window's resolution. Re-running a replay applies each move through the rules engine and checks
that it produces exactly the event records that follow it, in order, with the same state version
and audience; that every default is the engine's own (R-DEF-1); that a window's outcome is what
its answers give (R-BOMB-9); and, for a finished match, that the result follows.
"""

from __future__ import annotations

from collections import deque
from collections.abc import Callable, Mapping, Sequence
from dataclasses import dataclass, field
from typing import cast

from referee.match.digests import seed_commitment
from referee.match.records import (
    CallRecord,
    DecisionRecord,
    EventRecord,
    Header,
    Move,
    Record,
    RedactedRecord,
    RejectionRecord,
    ResultRecord,
    RevealRecord,
    Start,
    ViolationRecord,
    WindowRecord,
)
from referee.match.tally import Tally
from referee.match.visitor import HOOKS, RecordVisitor, ReplayVisitor
from referee.rules import (
    Action,
    DecisionKind,
    Decline,
    Event,
    Pass,
    RulesError,
    State,
    answer_window,
    apply,
    default_action,
    legal_actions,
    new_game,
    owed,
)
from referee.rules.events import Called, Played


def sole_action(state: State, seat: int) -> Action | None:
    """The one thing `seat` may do now, if there is only one (no other play, no bomb, no Tichu
    call): a decline or a pass is then one the referee may make for it (Hello.referee_declines,
    Hello.referee_passes)."""
    actions = legal_actions(state, seat)
    return actions[0] if len(actions) == 1 else None


class ReplayMismatchError(Exception):
    """The replay differs from what the rules engine does; names the line and the difference."""

    def __init__(self, line: int, message: str) -> None:
        super().__init__(f"line {line}: {message}")
        self.line = line
        self.message = message


@dataclass(frozen=True, slots=True)
class WindowOutcome:
    """What a bomb window's answers came to: the next state, its events, the bomb and its call."""

    state: State
    events: list[Event]
    bomb: int | None  # the seat whose bomb applied
    call: int | None  # that seat, when its bomb carried a Tichu call that was made (R-CALL-7)


def resolve_window(state: State, answers: Mapping[int, Action]) -> WindowOutcome:
    """Apply a whole bomb window's answers at once (R-BOMB-9; the engine owns R-CALL-7)."""
    after, events = answer_window(state, answers)
    bomb = call = None
    for event in events:
        if isinstance(event, Called):
            call = event.seat
        elif isinstance(event, Played) and event.out_of_turn:
            bomb = event.seat
            break
    return WindowOutcome(after, events, bomb, call if call == bomb else None)


def apply_move(state: State, move: Move) -> tuple[State, list[Event]]:
    """The game after `move`, and its events; RulesError if the engine refuses it."""
    if isinstance(move, WindowRecord):
        outcome = resolve_window(state, dict(move.answers))
        return outcome.state, outcome.events
    if isinstance(move, ViolationRecord):
        return apply(state, move.seat, move.default)
    return apply(state, move.seat, move.action)


class SeedHiddenError(Exception):
    """A tichu-replay/2 replay whose seed is not revealed (yet): its deals cannot be re-made."""


def initial_state(header: Header, seed: int | str | None = None) -> tuple[State, list[Event]]:
    """The game a replay starts from: its given position, or a new game from its config and seed
    (the header's in format 1; in format 2 `seed`, as the reveal record or the referee gives it)."""
    if header.initial_state is not None:
        return header.initial_state, []
    chosen = header.seed if seed is None else seed
    if chosen is None:
        raise SeedHiddenError(
            f"match {header.match_id}: the seed is not revealed, so the deals cannot be made"
        )
    return new_game(header.config, chosen)


def revealed_seed(header: Header, records: Sequence[Record]) -> int | str | None:
    """The seed a format-2 replay reveals (ReplayMismatchError if it is not the one the header
    committed to), the header's own in format 1, or None while it is not revealed."""
    if not header.chained:
        return header.seed
    for index, record in enumerate(records):
        if isinstance(record, RevealRecord):
            if seed_commitment(record.seed, record.salt) != header.seed_commitment:
                raise ReplayMismatchError(
                    index + 2, "the seed and salt revealed are not what the header committed to"
                )
            return record.seed
    return None


def forfeits(header: Header, violation: ViolationRecord) -> bool:
    """Whether this timeout was one too many: its team forfeits and its default is never taken."""
    limit = header.clock.max_violations
    return limit > 0 and violation.count > limit


@dataclass(slots=True)
class Rerun:
    """Where a replay's game stands after its records: the state, its version, the events."""

    state: State
    tally: Tally  # the per-seat counts of every record re-run
    version: int = 0
    started: bool = False
    moves: int = 0
    events: list[tuple[int, Event]] = field(default_factory=list)  # (state version, event)
    # Events of the last move that an unfinished replay lacks (cut off after the move's record).
    unwritten: list[tuple[int, Event]] = field(default_factory=list)
    max_request_id: int = 0
    last_t_ms: float = 0.0


Expected = tuple[int, int | None, Event]  # (state version, private_to, the event)


def _describe(version: int, owner: int | None, event: Event) -> str:
    audience = "public" if owner is None else f"private to seat {owner}"
    return f"{event.type} at state {version} ({audience}): {event.to_json()}"


class _OnMove(ReplayVisitor):
    """The visitor behind rerun's `on_move` callback."""

    def __init__(self, on_move: Callable[[int, Move, State], None]) -> None:
        self.on_move = on_move

    def visit_move(self, line: int, move: Move, before: State, after: State) -> None:
        self.on_move(line, move, after)


class _Checker(RecordVisitor):
    """Re-runs records one by one, each through its hook, and checks them (see rerun)."""

    def __init__(self, header: Header, seed: int | str | None, check_result: bool):
        self.header = header
        self.check_result = check_result
        state, self.deal_events = initial_state(header, seed)
        self.run = Rerun(state, Tally(state.config.players, [s.bot_name for s in header.seats]))
        self.pending: deque[Expected] = deque()
        self.line = 1  # the line of the record being re-run (the header is line 1)
        self.ended = False  # a result was re-run: nothing may follow it
        # Seats whose window request timed out at a state version: their answer must be decline.
        self.silent: dict[int, set[int]] = {}

    def visit_redacted(self, record: RedactedRecord) -> None:
        raise ReplayMismatchError(self.line, "a withheld record: a redacted view's moves cannot be re-run")

    def visit_event(self, record: EventRecord) -> None:
        if not self.pending:
            raise ReplayMismatchError(self.line, f"an event the engine did not produce: {record.data}")
        version, owner, event = self.pending.popleft()
        if (record.version, record.private_to, record.data) != (version, owner, event.to_json()):
            raise ReplayMismatchError(
                self.line,
                f"the engine produced {_describe(version, owner, event)}; the replay has "
                f"{_describe(record.version, record.private_to, record.event)}",
            )
        self.run.events.append((version, event))

    def visit_start(self, record: Start) -> None:
        run = self.run
        if run.started:
            raise ReplayMismatchError(self.line, "a second start record")
        run.started = True
        self.pending.extend((0, event.private_to, event) for event in self.deal_events)

    def visit_decision(self, record: DecisionRecord) -> None:
        self._request_id(record.request_id)
        self._move(record, self.line)

    def visit_call(self, record: CallRecord) -> None:
        self._move(record, self.line)

    def visit_window(self, record: WindowRecord) -> None:
        self._move(record, self.line)

    def visit_violation(self, record: ViolationRecord) -> None:
        self._request_id(record.request_id)
        if record.decision is DecisionKind.BOMB_WINDOW:
            self._silent_in_window(record, self.line)
        elif forfeits(self.header, record):
            self._check_default(record, self.line)  # the one timeout too many: the team forfeits
        else:
            self._move(record, self.line)

    def visit_rejection(self, record: RejectionRecord) -> None:
        self._request_id(record.request_id)

    def visit_result(self, record: ResultRecord) -> None:
        self.ended = True
        if self.check_result:
            self._lacks_nothing(self.line)
            self._result(record, self.line)

    def _request_id(self, request_id: int) -> None:
        self.run.max_request_id = max(self.run.max_request_id, request_id)

    def _lacks_nothing(self, line: int) -> None:
        if self.pending:
            version, owner, event = self.pending[0]
            raise ReplayMismatchError(line, f"the replay lacks an event: {_describe(version, owner, event)}")

    def _at_current_state(self, record: Move, line: int) -> None:
        run = self.run
        if not run.started:
            raise ReplayMismatchError(line, f"a {record.kind} before the game started")
        self._lacks_nothing(line)
        if record.version != run.version:
            raise ReplayMismatchError(
                line, f"a {record.kind} for state {record.version}, but the game is at state {run.version}"
            )

    def _check_default(self, record: ViolationRecord, line: int) -> None:
        """R-DEF-1: a timeout's default is the engine's, for the decision that seat owed."""
        self._at_current_state(record, line)
        state = self.run.state
        kind = owed(state, record.seat)
        if kind is not record.decision:
            raise ReplayMismatchError(
                line, f"a timeout of seat {record.seat}'s {record.decision} request, but it owed {kind}"
            )
        expected = default_action(state, record.seat)
        if record.default != expected:
            raise ReplayMismatchError(
                line,
                f"seat {record.seat} timed out and the default taken was {record.default}; "
                f"the engine's default (R-DEF-1) is {expected}",
            )

    def _silent_in_window(self, record: ViolationRecord, line: int) -> None:
        self._check_default(record, line)
        self.silent.setdefault(record.version, set()).add(record.seat)

    def _move(self, record: Move, line: int) -> None:
        run = self.run
        if isinstance(record, ViolationRecord):
            self._check_default(record, line)
        else:
            self._at_current_state(record, line)
        if isinstance(record, DecisionRecord):
            kind = owed(run.state, record.seat)
            if kind is not record.decision:
                raise ReplayMismatchError(
                    line, f"seat {record.seat} answered a {record.decision} request, but it owed {kind}"
                )
            # A pass is the sole action only on one's turn (R-TRICK-3), so the kind follows.
            if record.by_referee and not isinstance(sole_action(run.state, record.seat), Pass):
                raise ReplayMismatchError(
                    line, f"the referee passed for seat {record.seat}, which could do more than pass"
                )
        try:
            if isinstance(record, WindowRecord):
                state, events = self._window(record, line)
            else:
                state, events = apply_move(run.state, record)
        except RulesError as error:
            raise ReplayMismatchError(line, f"the engine refuses this {record.kind}: {error}") from None
        run.state = state
        run.version += 1
        run.moves += 1
        self.pending.extend((run.version, event.private_to, event) for event in events)

    def _window(self, record: WindowRecord, line: int) -> tuple[State, list[Event]]:
        state = self.run.state
        if record.order != state.window:
            raise ReplayMismatchError(
                line,
                f"a window in order {list(record.order)}, but the engine's window is {list(state.window)}",
            )
        answers = dict(record.answers)
        if list(answers) != list(record.order):
            raise ReplayMismatchError(
                line, "a window's answers must be every seat of the window, in its order"
            )
        for seat in sorted(self.silent.pop(record.version, set())):
            if not isinstance(answers.get(seat), Decline):
                raise ReplayMismatchError(
                    line, f"seat {seat} timed out in this window, so its answer is decline (R-DEF-1)"
                )
        for seat in record.referee_declined:
            declined = isinstance(answers.get(seat), Decline)
            if not declined or not isinstance(sole_action(state, seat), Decline):
                raise ReplayMismatchError(
                    line, f"the referee declined this window for seat {seat}, which could bomb or call"
                )
        outcome = resolve_window(state, answers)
        discarded = tuple(s for s, a in record.answers if s != outcome.bomb and not isinstance(a, Decline))
        found = (record.bomb, record.call, record.discarded)
        if found != (outcome.bomb, outcome.call, discarded):
            raise ReplayMismatchError(
                line,
                f"the window's answers give bomb {outcome.bomb}, call {outcome.call}, discarded "
                f"{list(discarded)}; the record says bomb {record.bomb}, call {record.call}, discarded "
                f"{list(record.discarded)}",
            )
        return outcome.state, outcome.events

    def _result(self, record: ResultRecord, line: int) -> None:
        state = self.run.state
        scores = tuple(state.scores)
        if record.scores != scores:
            raise ReplayMismatchError(
                line, f"the result says scores {list(record.scores)}, the engine {list(scores)}"
            )
        if not record.ends_unfinished_game:
            if not state.is_over:
                raise ReplayMismatchError(line, "the result ends a game the engine says is not over")
            if record.winner != state.winner:
                raise ReplayMismatchError(
                    line, f"the result names winner {_team(record.winner)}, the engine {_team(state.winner)}"
                )
        for stored, recounted in zip(record.summary, self.run.tally.summary(), strict=False):
            for key, value in recounted.counts().items():
                if stored.counts()[key] != value:
                    raise ReplayMismatchError(
                        line,
                        f"the summary says seat {stored.seat} {key} = {stored.counts()[key]!r}; "
                        f"the records count {value!r}",
                    )


def _team(team: int | None) -> str:
    return "none" if team is None else str(team)


def rerun(
    header: Header,
    records: Sequence[Record],
    *,
    check_result: bool = True,
    on_move: Callable[[int, Move, State], None] | None = None,
    seed: int | str | None = None,
    visitor: ReplayVisitor | None = None,
) -> Rerun:
    """Re-run every move of a replay and check every event; ReplayMismatchError at the first
    difference. Line numbers count the header as line 1. `visitor` sees the replay as it re-runs
    (see ReplayVisitor); `on_move(line, move, state_after)`, the older way to follow it, sees
    each move. A format-2 replay is re-run from the seed it reveals (checked against its
    commitment), or from `seed` (a resuming referee's); SeedHiddenError if neither."""
    if on_move is not None:
        if visitor is not None:
            raise TypeError("rerun takes on_move or a visitor, not both")
        visitor = _OnMove(on_move)
    if seed is None:
        seed = revealed_seed(header, records)
    checker = _Checker(header, seed, check_result)
    run = checker.run
    tally = run.tally
    if visitor is not None:
        visitor.visit_header(header)
        visitor.begin_game(run.state)
    for index, record in enumerate(records):
        line = checker.line = index + 2
        if checker.ended:
            raise ReplayMismatchError(line, "a line after the result: the match was over")
        run.last_t_ms = float(record.t_ms)
        hook = HOOKS[type(record)]  # the one dispatch on the record's kind, for every visitor
        if visitor is None:
            getattr(checker, hook)(record)
            getattr(tally, hook)(record)  # counted once it re-ran, as the live match counts it
            continue
        before, moves = run.state, run.moves
        getattr(checker, hook)(record)
        getattr(tally, hook)(record)
        getattr(visitor, hook)(record)
        if run.moves != moves:
            visitor.visit_move(line, cast(Move, record), before, run.state)
    finished = bool(records) and isinstance(records[-1], ResultRecord)
    if finished:
        checker._lacks_nothing(len(records) + 1)
    else:
        run.unwritten = [(version, event) for version, _, event in checker.pending]
    if visitor is not None:
        visitor.end_game(run)
    return run


__all__ = [
    "ReplayMismatchError",
    "Rerun",
    "SeedHiddenError",
    "WindowOutcome",
    "apply_move",
    "forfeits",
    "initial_state",
    "rerun",
    "resolve_window",
    "revealed_seed",
]
