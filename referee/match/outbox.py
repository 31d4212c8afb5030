"""What a match emits as it takes an input, shared by its two halves (the links and the core):
outputs in order, replay records (counted and chained as they are written), log notes, and the
match's own time for records (milliseconds since its creation) and calendar stamps."""

from __future__ import annotations

from typing import Any

from referee.match.clock import iso_time
from referee.match.messages import Note, Output, Write
from referee.match.proof import Chain
from referee.match.records import Record
from referee.match.tally import Tally


class Outbox:
    """The outputs of a match, in the order they were made."""

    def __init__(self, chain: Chain, tally: Tally, *, now: float, wall: float) -> None:
        self.out: list[Output] = []
        self.chain = chain
        self.tally = tally  # counts every record written
        self.created_at = now  # the match's time zero (a resumed match's goes on from its file's)
        self._wall_offset = wall - now

    def rel_ms(self, t: float) -> float:
        """Monotonic time `t` as the replay's t_ms: milliseconds since the match was created."""
        return round((t - self.created_at) * 1000, 1)

    def iso(self, t: float) -> str:
        """Monotonic time `t` as a calendar time (UTC ISO 8601)."""
        return iso_time(t + self._wall_offset)

    def write(self, record: Record) -> None:
        """Append a record to the replay (counted, and linked into the chain)."""
        self.tally.add(record)
        self.out.append(Write(record, self.chain.link(record.to_json())))

    def note(self, level: str, event: str, **fields: Any) -> None:
        """A line for the referee's log."""
        self.out.append(Note(level, event, fields))

    def drain(self) -> list[Output]:
        """The outputs made so far, taken out."""
        out = self.out[:]
        self.out.clear()
        return out
