"""Visitors of replay records, in the shape of python-chess's `pgn.BaseVisitor`: a walker goes over
the records once and calls one hook per record kind, so that a renderer, a counter, a viewer and
the verifier each override only the hooks they need and none of them tells record kinds apart.

`visit` is the one place that dispatches on a record's type. A RecordVisitor reads records as they
come (a file that is still growing, a live match); a ReplayVisitor also sees the game that one
re-run of the replay (referee.match.moves.rerun) makes of them: the position it starts from, each
move with the states before and after it, and the re-run's end.
"""

from __future__ import annotations

from typing import TYPE_CHECKING, Final

from referee.match.records import (
    Abandoned,
    CallRecord,
    Connected,
    DecisionRecord,
    Disconnected,
    EventRecord,
    Header,
    Line,
    Move,
    RedactedRecord,
    RejectionRecord,
    ResultRecord,
    ResumeRecord,
    RevealRecord,
    Start,
    ViolationRecord,
    WindowRecord,
)
from referee.rules import State

if TYPE_CHECKING:
    from referee.match.moves import Rerun


class RecordVisitor:
    """One hook per record kind, each doing nothing unless a subclass overrides it."""

    def visit_header(self, header: Header) -> None:
        """The replay's first line."""

    def visit_start(self, record: Start) -> None:
        """The game started: every seat is connected."""

    def visit_event(self, record: EventRecord) -> None:
        """An event of the game, public or private to one seat."""

    def visit_decision(self, record: DecisionRecord) -> None:
        """A seat's answer to a decision request (a move)."""

    def visit_call(self, record: CallRecord) -> None:
        """A Tichu call sent out of turn (a move)."""

    def visit_window(self, record: WindowRecord) -> None:
        """A bomb window's answers, resolved at once (a move)."""

    def visit_violation(self, record: ViolationRecord) -> None:
        """A timeout and the default taken for it."""

    def visit_rejection(self, record: RejectionRecord) -> None:
        """A seat's message that the referee rejected."""

    def visit_connected(self, record: Connected) -> None:
        """A seat connected or reconnected."""

    def visit_disconnected(self, record: Disconnected) -> None:
        """A seat's stream ended."""

    def visit_abandoned(self, record: Abandoned) -> None:
        """A seat did not come back in time."""

    def visit_resume(self, record: ResumeRecord) -> None:
        """The referee restarted and resumed the match."""

    def visit_reveal(self, record: RevealRecord) -> None:
        """The seed and salt behind a format-2 header's commitment."""

    def visit_redacted(self, record: RedactedRecord) -> None:
        """A line that this view of the replay withholds."""

    def visit_result(self, record: ResultRecord) -> None:
        """How the match ended."""


class ReplayVisitor(RecordVisitor):
    """A visitor of one re-run: the record hooks, in file order, for records that re-ran as the
    replay says, and the game around them. The order is: visit_header, begin_game, then per
    record its hook and, for a move, visit_move after it; end_game last (not after a mismatch)."""

    def begin_game(self, state: State) -> None:
        """The game the replay starts from (dealt from its seed, or the header's position)."""

    def visit_move(self, line: int, move: Move, before: State, after: State) -> None:
        """A move re-run through the rules engine at `line` (the header is line 1)."""

    def end_game(self, run: Rerun) -> None:
        """Every record re-ran: where the game stands (for a finished replay, the result held)."""


# The hook of each kind of line, by name, so that a subclass's override is the one called.
HOOKS: Final[dict[type, str]] = {
    Header: "visit_header",
    Start: "visit_start",
    EventRecord: "visit_event",
    DecisionRecord: "visit_decision",
    CallRecord: "visit_call",
    WindowRecord: "visit_window",
    ViolationRecord: "visit_violation",
    RejectionRecord: "visit_rejection",
    Connected: "visit_connected",
    Disconnected: "visit_disconnected",
    Abandoned: "visit_abandoned",
    ResumeRecord: "visit_resume",
    RevealRecord: "visit_reveal",
    RedactedRecord: "visit_redacted",
    ResultRecord: "visit_result",
}


def visit(visitor: RecordVisitor, record: Line) -> None:
    """Call the hook of `visitor` for this record's kind (a walker of one visitor; rerun, which
    calls several per record, looks the hook up in HOOKS once)."""
    getattr(visitor, HOOKS[type(record)])(record)


__all__ = ["HOOKS", "RecordVisitor", "ReplayVisitor", "visit"]
