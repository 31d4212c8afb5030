"""The Table's input handling without gRPC: inline, one input at a time, output woken in order."""

from __future__ import annotations

import asyncio

from referee.codec import pb
from referee.rules import RulesConfig
from referee.table import ClockSettings, Connection, Outgoing, Table

PATIENT = ClockSettings(decision_ms=600_000, bank_ms=0, window_ms=600_000)


async def _seated(seed: str) -> tuple[Table, list[Connection], list[pb.DecisionRequest]]:
    """A started four-seat table, every seat connected, and each seat's Grand Tichu request."""
    table = Table("m", RulesConfig(), clock=PATIENT, seed=seed)
    table.start()
    conns = [await table.connect(seat, f"bot{seat}") for seat in range(4)]
    requests = []
    for conn in conns:
        taken = await asyncio.wait_for(conn.take(), 1)
        requests += [m.request for m in taken if isinstance(m, pb.RefereeMessage) and m.HasField("request")]
    assert [r.kind for r in requests] == [pb.DECISION_KIND_GRAND_TICHU] * 4
    return table, conns, requests


def _answer(request: pb.DecisionRequest, call: bool = False) -> pb.BotMessage:
    action = pb.Action(grand_tichu=pb.GrandTichuAnswer(call=call))
    return pb.BotMessage(
        decision=pb.Decision(
            request_id=request.request_id, action=action, state_version=request.state_version
        )
    )


def test_an_answer_is_handled_before_receive_returns_and_its_sender_is_woken_first() -> None:
    async def scenario() -> None:
        table, conns, requests = await _seated("order")
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
            messages = [m for m in taken[seat] if isinstance(m, pb.RefereeMessage)]
            events = [m.event.type for m in messages if m.HasField("event")]
            assert events[:4] == ["call_declined", "call_declined", "called", "call_declined"], events
            assert "cards_dealt" in events
            requests_now = [m.request.kind for m in messages if m.HasField("request")]
            assert requests_now == ([] if seat == 2 else [pb.DECISION_KIND_TICHU_STEP])
        await table.stop()

    asyncio.run(scenario())


def test_legal_actions_are_listed_as_the_request_leaves_or_when_its_stream_is_gone() -> None:
    async def scenario() -> None:
        table, conns, requests = await _seated("lists")
        # Queued but not yet sent: a lead can list hundreds of plays, which no other seat's
        # messages should wait for.
        assert all(len(r.legal_actions) == 0 for r in requests)
        table.delivered(0, requests[0].request_id, table.now())
        assert [a.text for a in requests[0].legal_actions] == ["grand_tichu", "no_grand_tichu"]
        # A stream that ends takes its requests' lists with it: they are made for the snapshot.
        table.disconnect(conns[1])
        assert [a.text for a in requests[1].legal_actions] == ["grand_tichu", "no_grand_tichu"]
        again = await table.connect(1, "bot1")
        taken = await asyncio.wait_for(again.take(), 1)
        (snapshot,) = [
            m.snapshot for m in taken if isinstance(m, pb.RefereeMessage) and m.HasField("snapshot")
        ]
        assert [a.text for a in snapshot.pending[0].legal_actions] == ["grand_tichu", "no_grand_tichu"]
        await table.stop()

    asyncio.run(scenario())


def test_an_input_that_arrives_while_another_is_handled_waits_its_turn() -> None:
    async def scenario() -> None:
        records: list[dict[str, object]] = []
        table: Table | None = None
        conns: list[Connection] = []

        def on_record(record: dict[str, object]) -> None:
            records.append(record)
            if record["kind"] == "decision" and record["seat"] == 3 and table is not None:
                # Arrives in the middle of seat 3's answer, which still has events to make.
                table.receive(
                    conns[1], pb.BotMessage(decision=pb.Decision(request_id=999, action=pb.Action()))
                )

        table = Table("m", RulesConfig(), clock=PATIENT, seed="turns", on_record=on_record)
        table.start()
        conns += [await table.connect(seat, f"bot{seat}") for seat in range(4)]
        requests = []
        for conn in conns:
            taken = await asyncio.wait_for(conn.take(), 1)
            requests += [
                m.request for m in taken if isinstance(m, pb.RefereeMessage) and m.HasField("request")
            ]
        for seat in range(4):
            table.receive(conns[seat], _answer(requests[seat]))
        kinds = [r["kind"] for r in records]
        answered = max(i for i, r in enumerate(records) if r["kind"] == "decision")
        rejected = kinds.index("rejection")
        # Every record of seat 3's answer (its reveals and the last cards) comes first.
        assert "event" in kinds[answered:rejected]
        assert all(kind == "rejection" for kind in kinds[rejected:])
        await table.stop()

    asyncio.run(scenario())


def test_records_stay_in_memory_only_when_asked() -> None:
    async def scenario(keep_records: bool) -> tuple[list[dict[str, object]], Table]:
        hooked: list[dict[str, object]] = []
        table = Table(
            "m", RulesConfig(), clock=PATIENT, seed="kept", on_record=hooked.append, keep_records=keep_records
        )
        table.start()
        conns = [await table.connect(seat, f"bot{seat}") for seat in range(4)]
        for conn in conns:
            for message in await asyncio.wait_for(conn.take(), 1):
                if isinstance(message, pb.RefereeMessage) and message.HasField("request"):
                    table.receive(conn, _answer(message.request))
        await table.stop()
        return hooked, table

    hooked, table = asyncio.run(scenario(keep_records=False))
    # The referee's own default: every record still goes to the hook (the replay writer) and
    # into the statistics, but none stays behind to lengthen the garbage collector's passes.
    assert [r["kind"] for r in hooked].count("decision") == 4
    assert table.records == [] and sum(s["decisions"] for s in table.statistics()["seats"]) == 4
    hooked, table = asyncio.run(scenario(keep_records=True))
    assert table.records == hooked and [r["kind"] for r in hooked].count("decision") == 4
