"""The Table's input handling without gRPC: inline, one input at a time, output woken in order."""

from __future__ import annotations

import asyncio
from collections.abc import Callable

from referee.match import ClockSettings, Match
from referee.match.messages import EventMessage, Message, Request, Snapshot
from referee.match.records import DecisionRecord, Line, RejectionRecord
from referee.rules import OFFICIAL, DecisionKind
from referee.server.codec import message_from_proto, message_to_proto
from referee.server.table import Connection, Outgoing, Table
from referee.wire.tichu.v1 import referee_pb2 as pb

# Nothing falls due while a test runs: the only deadlines are the requests' own.
PATIENT = ClockSettings(decision_ms=600_000, bank_ms=0, window_ms=600_000, heartbeat_interval_ms=0)


class FakeClock:
    """A monotonic clock that moves only when told to."""

    def __init__(self) -> None:
        self.t = 1000.0

    def __call__(self) -> float:
        return self.t


def _table(
    seed: str,
    clock: FakeClock | None = None,
    on_record: Callable[[Line], None] | None = None,
    keep_records: bool = False,
) -> Table:
    """A started four-seat table on a new Match; its clock a fake one that moves only when told."""
    now = clock or FakeClock()
    header = Match.header_for("m", OFFICIAL, clock=PATIENT, seed=seed, wall=0.0)
    # The table hands each record with its place in the hash chain ("" in format 1).
    hook = None if on_record is None else (lambda record, _h: on_record(record))
    table = Table(Match(header, now=now(), wall=0.0), now=now, on_record=hook, keep_records=keep_records)
    table.start()
    return table


def _requests(taken: list[Outgoing]) -> list[Request]:
    return [m for m in taken if isinstance(m, Request)]


async def _seated(table: Table) -> tuple[list[Connection], list[Request]]:
    """Every seat connected; each seat's Grand Tichu request."""
    conns = [table.connect(seat, f"bot{seat}") for seat in range(4)]
    requests = []
    for conn in conns:
        requests += _requests(await asyncio.wait_for(conn.take(), 1))
    assert [r.kind for r in requests] == [DecisionKind.GRAND_TICHU] * 4
    return conns, requests


def _decoded(**kind: object) -> Message:
    """A BotMessage as the service hands it to the table: decoded by the codec."""
    message = message_from_proto(pb.BotMessage(**kind))  # type: ignore[arg-type]
    assert message is not None
    return message


def _answer(request: Request, call: bool = False) -> Message:
    action = pb.Action(grand_tichu=pb.GrandTichuAnswer(call=call))
    return _decoded(
        decision=pb.Decision(
            request_id=request.request_id, action=action, state_version=request.state_version
        )
    )


def test_an_answer_is_handled_before_receive_returns_and_its_sender_is_woken_first() -> None:
    async def scenario() -> None:
        table = _table("order")
        conns, requests = await _seated(table)
        # Grand Tichu answers are revealed together (R-GT-1): the first three make no output.
        for seat in (0, 1, 3):
            table.receive(conns[seat], _answer(requests[seat]))
        woken: list[int] = []
        taken: dict[int, list[Outgoing]] = {}

        async def take(conn: Connection) -> None:
            taken[conn.seat] = await conn.take()
            woken.append(conn.seat)

        takers = [asyncio.create_task(take(conn)) for conn in conns]
        await asyncio.sleep(0)  # every writer now waits
        table.receive(conns[2], _answer(requests[2], call=True))
        # Handled in the caller, before any writer ran: the step is over.
        assert table.state.gt == (0, 0, 1, 0) and woken == []
        await asyncio.wait_for(asyncio.gather(*takers), 1)
        # The seat that answered first, then the others in play order after it.
        assert woken == [2, 3, 0, 1]
        for seat in range(4):
            # Everything the answer made comes in one take: the four reveals, the seat's last
            # cards, and its Tichu step request (not to seat 2, a Grand Tichu caller: R-CALL-2).
            events = [m.type for m in taken[seat] if isinstance(m, EventMessage)]
            assert events[:4] == ["call_declined", "call_declined", "called", "call_declined"], events
            assert "cards_dealt" in events
            kinds = [r.kind for r in _requests(taken[seat])]
            assert kinds == ([] if seat == 2 else [DecisionKind.TICHU_STEP])
        await table.stop()

    asyncio.run(scenario())


def test_a_request_clock_starts_when_the_shell_delivers_it() -> None:
    """Time a request waits in the table's outbox is the referee's, not the bot's (Delivered)."""

    async def scenario() -> None:
        clock = FakeClock()
        table = _table("lists", clock)
        conns, requests = await _seated(table)
        due = table.match.next_deadline()
        assert due == clock.t + 600.0 + PATIENT.grace_ms / 1000
        clock.t += 0.75
        for conn, request in zip(conns, requests, strict=True):
            table.delivered(conn, request.request_id)
        assert table.match.next_deadline() == due + 0.75
        await table.stop()

    asyncio.run(scenario())


def test_a_reconnected_seat_gets_its_open_request_with_its_legal_answers() -> None:
    async def scenario() -> None:
        table = _table("snapshot")
        conns, requests = await _seated(table)
        table.disconnect(conns[1])
        again = table.connect(1, "bot1")
        taken = await asyncio.wait_for(again.take(), 1)
        (snapshot,) = [m for m in taken if isinstance(m, Snapshot)]
        assert [p.request_id for p in snapshot.pending] == [requests[1].request_id]
        # The legal answers are listed when the message is encoded, from the request's own state.
        wire = message_to_proto(snapshot)
        assert [a.text for a in wire.snapshot.pending[0].legal_actions] == ["grand_tichu", "no_grand_tichu"]
        await table.stop()

    asyncio.run(scenario())


def test_an_input_that_arrives_while_another_is_handled_waits_its_turn() -> None:
    async def scenario() -> None:
        records: list[Line] = []
        table: Table | None = None
        conns: list[Connection] = []

        def on_record(record: Line) -> None:
            records.append(record)
            if isinstance(record, DecisionRecord) and record.seat == 3 and table is not None:
                # Arrives in the middle of seat 3's answer, which still has events to make.
                table.receive(conns[1], _decoded(decision=pb.Decision(request_id=999, action=pb.Action())))

        table = _table("turns", on_record=on_record)
        seated, requests = await _seated(table)
        conns += seated
        for seat in range(4):
            table.receive(conns[seat], _answer(requests[seat]))
        kinds = [r.kind for r in records]
        answered = max(i for i, r in enumerate(records) if isinstance(r, DecisionRecord))
        rejected = next(i for i, r in enumerate(records) if isinstance(r, RejectionRecord))
        # Every record of seat 3's answer (its reveals and the last cards) comes first.
        assert "event" in kinds[answered:rejected]
        assert all(isinstance(r, RejectionRecord) for r in records[rejected:])
        await table.stop()

    asyncio.run(scenario())


def test_records_stay_in_memory_only_when_asked() -> None:
    async def scenario(keep_records: bool) -> tuple[list[Line], Table]:
        hooked: list[Line] = []
        table = _table("kept", on_record=hooked.append, keep_records=keep_records)
        conns = [table.connect(seat, f"bot{seat}") for seat in range(4)]
        for conn in conns:
            for message in await asyncio.wait_for(conn.take(), 1):
                if isinstance(message, Request):
                    table.receive(conn, _answer(message))
        await table.stop()
        return hooked, table

    hooked, table = asyncio.run(scenario(keep_records=False))
    # The referee's own default: every record still goes to the hook (the replay writer) and
    # into the statistics, but none stays behind to lengthen the garbage collector's passes.
    assert sum(isinstance(r, DecisionRecord) for r in hooked) == 4
    assert table.records == [] and sum(s["decisions"] for s in table.statistics()["seats"]) == 4
    hooked, table = asyncio.run(scenario(keep_records=True))
    assert table.records == hooked and sum(isinstance(r, DecisionRecord) for r in hooked) == 4
