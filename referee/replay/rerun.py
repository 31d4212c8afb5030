"""Re-running a replay through the rules engine: `tichu replay verify`, and a resumed table.

The moves are the records that change the game (a decision, a Tichu call sent out of turn, a
default taken after a timeout, a bomb window's resolution); the engine replays each one and
must produce exactly the event records that follow it, in order, with the same state version
and the same audience. The result record's scores, winner and summary must follow too.
"""

from __future__ import annotations

from collections import deque
from collections.abc import Callable
from dataclasses import dataclass, field
from typing import Any

from referee.replay.format import MOVE_KINDS, Record, Replay
from referee.replay.tally import Tally
from referee.rules import (
    Action,
    CallTichu,
    Event,
    RulesConfig,
    RulesError,
    State,
    answer_window,
    apply,
    new_game,
    parse_action,
    state_from_json,
)

Expected = tuple[int, int | None, dict[str, Any]]  # (state version, private_to, event JSON)


class ReplayMismatchError(Exception):
    """The replay differs from what the rules engine does; names the line and the difference."""

    def __init__(self, line: int, message: str) -> None:
        super().__init__(f"line {line}: {message}")
        self.line = line
        self.message = message


@dataclass(slots=True)
class Rerun:
    """Where a replay's game stands after its records: the state, its version, the events."""

    state: State
    tally: Tally  # the per-seat counts of every record re-run
    version: int = 0
    started: bool = False
    moves: int = 0
    events: list[tuple[int, Event]] = field(default_factory=list)  # (state version, event)
    max_request_id: int = 0
    last_t_ms: float = 0.0


def initial_state(header: Record) -> tuple[State, list[Event]]:
    """The game a replay starts from: its given position, or a new game from config and seed."""
    given = header.get("initial_state")
    if given is not None:
        return state_from_json(given), []
    return new_game(RulesConfig.from_json(header["config"]), header["seed"])


def _action(record: Record, key: str, line: int) -> Action:
    try:
        return parse_action(str(record[key]))
    except (RulesError, KeyError) as error:
        raise ReplayMismatchError(line, f"unreadable action {record.get(key)!r}: {error}") from None


def apply_move(state: State, record: Record, line: int) -> tuple[State, list[Event]]:
    """Apply one move record as the table did."""
    kind = record["kind"]
    try:
        if kind == "window":
            answers: dict[int, Action] = {}
            for seat_key, text in record["answers"].items():
                answers[int(seat_key)] = parse_action(text)
            events: list[Event] = []
            caller = record.get("call")
            if caller is not None:
                # R-CALL-7: the bomb's Tichu call went first.
                state, events = apply(state, int(caller), CallTichu())
            state, more = answer_window(state, answers)
            return state, events + more
        key = "default" if kind == "violation" else "action"
        return apply(state, int(record["seat"]), _action(record, key, line))
    except RulesError as error:
        raise ReplayMismatchError(line, f"the engine refuses this {kind}: {error}") from None


def _describe(expected: Expected) -> str:
    version, owner, data = expected
    audience = "public" if owner is None else f"private to seat {owner}"
    return f"{data.get('type')} at state {version} ({audience}): {data}"


def rerun(
    replay: Replay,
    *,
    check_result: bool = True,
    on_move: Callable[[int, Record, State], None] | None = None,
) -> Rerun:
    """Re-run every move of `replay` and check every event; raises ReplayMismatchError at the first
    difference. `on_move(line, record, state_after)` sees each move as it is replayed."""
    header = replay.header
    state, deal_events = initial_state(header)
    players = state.config.players
    tally = Tally(players, [s.get("bot_name", "") for s in header["seats"]])
    run = Rerun(state, tally)
    pending: deque[Expected] = deque()
    produced: deque[Event] = deque()
    for index, record in enumerate(replay.records):
        line = index + 2
        kind = record["kind"]
        run.last_t_ms = float(record.get("t_ms", run.last_t_ms))
        run.max_request_id = max(run.max_request_id, int(record.get("request_id", 0)))
        if kind == "start":
            if run.started:
                raise ReplayMismatchError(line, "a second start record")
            run.started = True
            for event in deal_events:
                pending.append((0, event.private_to, event.to_json()))
                produced.append(event)
        elif kind == "event":
            if not pending:
                raise ReplayMismatchError(line, f"an event the engine did not produce: {record.get('event')}")
            expected = pending.popleft()
            event = produced.popleft()
            found = (record.get("version"), record.get("private_to"), record.get("event"))
            if found != expected:
                raise ReplayMismatchError(
                    line,
                    f"the engine produced {_describe(expected)}; the replay has "
                    f"{_describe((int(found[0] or 0), found[1], dict(found[2] or {})))}",
                )
            run.events.append((expected[0], event))
            tally.add(record, event)
            continue
        elif kind in MOVE_KINDS:
            if kind == "violation" and record.get("decision") == "bomb_window":
                pass  # the silent seat's decline is one of its window's answers
            else:
                if not run.started:
                    raise ReplayMismatchError(line, f"a {kind} before the game started")
                if pending:
                    raise ReplayMismatchError(line, f"the replay lacks an event: {_describe(pending[0])}")
                if int(record.get("version", run.version)) != run.version:
                    raise ReplayMismatchError(
                        line,
                        f"a {kind} for state {record.get('version')}, but the game is at state {run.version}",
                    )
                state, events = apply_move(run.state, record, line)
                run.state = state
                run.version += 1
                run.moves += 1
                for event in events:
                    pending.append((run.version, event.private_to, event.to_json()))
                    produced.append(event)
                if on_move is not None:
                    on_move(line, record, state)
        elif kind == "result" and check_result:
            if pending:
                raise ReplayMismatchError(line, f"the replay lacks an event: {_describe(pending[0])}")
            _check_result(run, record, line)
        tally.add(record)
    if pending and replay.result is not None:
        raise ReplayMismatchError(
            len(replay.records) + 1, f"the replay lacks an event: {_describe(pending[0])}"
        )
    return run


def _check_result(run: Rerun, record: Record, line: int) -> None:
    state = run.state
    scores = list(state.scores)
    if list(record.get("scores", [])) != scores:
        raise ReplayMismatchError(line, f"the result says scores {record.get('scores')}, the engine {scores}")
    # A forfeit, a start timeout (its absent seats) or a referee error ends a game that is not over.
    forfeit = int(record.get("forfeiting_team", -1)) >= 0 or bool(record.get("absent"))
    if not forfeit and not str(record.get("reason", "")).startswith("referee error"):
        if not state.is_over:
            raise ReplayMismatchError(line, "the result ends a game the engine says is not over")
        winner = -1 if state.winner is None else state.winner
        if record.get("winner") != winner:
            raise ReplayMismatchError(
                line, f"the result names winner {record.get('winner')}, the engine {winner}"
            )
    summary = record.get("summary")
    if summary is not None:
        counted = run.tally.summary()
        for stored, recounted in zip(summary, counted, strict=False):
            for key, value in recounted.items():
                if stored.get(key) != value:
                    raise ReplayMismatchError(
                        line,
                        f"the summary says seat {stored.get('seat')} {key} = {stored.get(key)!r}; "
                        f"the records count {value!r}",
                    )


__all__ = ["ReplayMismatchError", "Rerun", "apply_move", "initial_state", "rerun"]
