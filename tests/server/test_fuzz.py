"""Hypothesis over a real server: random Hellos, decisions and CreateMatch requests (strings of any
characters and sizes, numbers of any range). Nothing crashes, every refusal is typed and short,
a refusal changes nothing, and a well-behaved client is answered throughout.

Each example runs a few messages against one fresh referee; the example counts are kept small so
that the module runs in seconds (the throttle, which would soon refuse one address's many
failures, is lifted here and tested in test_bounds.py).
"""

from __future__ import annotations

import asyncio
import contextlib
import json

import grpc
from hypothesis import HealthCheck, given, settings
from hypothesis import strategies as st

from referee.match import PROTOCOL_VERSION
from referee.scripted import K
from referee.server.input_limits import invisible
from referee.wire.tichu.v1 import referee_pb2 as pb
from tests.server.support import ORGANISER_METADATA, Bot, Referee, join, referee, run

FUZZ = settings(max_examples=30, deadline=None, suppress_health_check=[HealthCheck.too_slow])
UINT32 = st.integers(0, 2**32 - 1)
UINT64 = st.integers(0, 2**64 - 1)
INT32 = st.integers(-(2**31), 2**31 - 1)
# Any character a protobuf string may hold (surrogates cannot be UTF-8), controls included.
ANY_TEXT = st.text(st.characters(codec="utf-8"), max_size=40)
WORDS = st.sampled_from(
    ["", "pass", "play 7s", "play MJ wish=7", "7s", "MJ", "PHX", "DRG", "10s", "7", "A", "{}"]
)
LONG = st.integers(60, 20_000).map(lambda n: "x" * n)
STRINGS = st.one_of(ANY_TEXT, WORDS, LONG)
# Refusals are typed: nothing ends with UNKNOWN or INTERNAL (a Python error in the referee).
TYPED = {
    grpc.StatusCode.INVALID_ARGUMENT,
    grpc.StatusCode.UNAUTHENTICATED,
    grpc.StatusCode.FAILED_PRECONDITION,
    grpc.StatusCode.ALREADY_EXISTS,
    grpc.StatusCode.RESOURCE_EXHAUSTED,
}


def _lift_the_throttle(ref: Referee) -> None:
    assert ref.server is not None
    ref.server.service.hello_throttle.burst = 10**9


async def still_answered(ref: Referee) -> None:
    """A well-behaved organiser is answered."""
    listing = await ref.stub.ListMatches(pb.ListMatchesRequest(), metadata=ORGANISER_METADATA)
    assert listing.matches


# ------------------------------------------------------------------------------------- Hello

HELLOS = st.builds(
    lambda seat, token, name, version, protocol, flags: (
        seat,
        pb.Hello(
            token=token,
            bot_name=name,
            bot_version=version,
            protocol_version=protocol,
            accept_bundles=flags[0],
            referee_declines=flags[1],
            defer_events=flags[2],
            referee_passes=flags[3],
        ),
    ),
    st.one_of(st.none(), st.integers(0, 3)),  # a real seat's token, or the random one
    STRINGS,
    STRINGS,
    STRINGS,
    st.one_of(st.just(PROTOCOL_VERSION), st.just(0), UINT32),
    st.tuples(st.booleans(), st.booleans(), st.booleans(), st.booleans()),
)


@FUZZ
@given(st.lists(HELLOS, min_size=1, max_size=5))
def test_random_hellos_are_refused_with_a_typed_status_and_change_nothing(
    hellos: list[tuple[int | None, pb.Hello]],
) -> None:
    async def scenario() -> None:
        async with referee() as ref:
            _lift_the_throttle(ref)
            response = await ref.create(seed="1")
            table = ref.table(response.match_id)
            for seat, hello in hellos:
                if seat is not None:
                    hello.token = response.seat_tokens[seat]
                before = (len(table.records), table.seat_info())
                bot = Bot(ref, hello.token)
                with contextlib.suppress(grpc.aio.AioRpcError):
                    await bot.open(hello)
                first = await bot.read()
                if first is not None:  # accepted: a Welcome; the seat is left again
                    assert first.HasField("welcome") and seat is not None
                    assert len(hello.bot_name) <= 64 and invisible(hello.bot_name) is None
                    bot.call.cancel()
                    while table.seat_info()[seat].connected:
                        await asyncio.sleep(0.01)
                    await ref.stub.ListMatches(pb.ListMatchesRequest(), metadata=ORGANISER_METADATA)
                    continue
                assert bot.error is not None and bot.error.code() in TYPED, bot.error
                assert len(bot.error.details() or "") <= 400
                assert (len(table.records), table.seat_info()) == before
            await still_answered(ref)
            others = await join(ref, list(response.seat_tokens), [None] * 4)
            assert [b.seat for b in others] == [0, 1, 2, 3]

    run(scenario())


# ---------------------------------------------------------------------------------- decisions

CARDS = st.lists(
    st.one_of(st.sampled_from(["7s", "7j", "MJ", "PHX", "DOG", "DRG", "As", "10p"]), ANY_TEXT), max_size=8
)
ACTIONS = st.one_of(
    st.builds(lambda text: pb.Action(text=text), STRINGS),
    st.builds(
        lambda cards, phoenix, wish, partner, tichu: pb.Action(
            play=pb.PlayCards(cards=cards, phoenix=phoenix, wish=wish, partner=partner, tichu=tichu)
        ),
        st.one_of(CARDS, st.lists(WORDS, max_size=70)),
        STRINGS,
        STRINGS,
        INT32,
        st.booleans(),
    ),
    st.builds(
        lambda gifts: pb.Action(exchange=pb.ExchangeCards(gifts=[pb.Gift(to=t, card=c) for t, c in gifts])),
        st.lists(st.tuples(INT32, STRINGS), max_size=12),
    ),
    st.builds(lambda to: pb.Action(gift=pb.DragonGift(to=to)), INT32),
    st.builds(lambda call: pb.Action(grand_tichu=pb.GrandTichuAnswer(call=call)), st.booleans()),
    st.sampled_from(
        [pb.Action(pass_turn=pb.Empty()), pb.Action(decline=pb.Empty()), pb.Action(call_tichu=pb.Empty())]
    ),
)
MESSAGES = st.builds(
    lambda out_of_turn, action, has_action, request_id, version: (
        out_of_turn,
        action,
        has_action,
        request_id,
        version,
    ),
    st.booleans(),
    ACTIONS,
    st.booleans(),
    st.one_of(st.none(), UINT64),  # None: the open request's id
    st.one_of(st.none(), UINT64),  # None: the request's state version
)


@FUZZ
@given(st.lists(MESSAGES, min_size=1, max_size=6))
def test_random_decisions_are_rejected_or_taken_and_a_rejection_changes_nothing(
    messages: list[tuple[bool, pb.Action, bool, int | None, int | None]],
) -> None:
    async def scenario() -> None:
        async with referee() as ref:
            response = await ref.create(rules_json='{"match_mode": "fixed_rounds:1"}', seed="2")
            table = ref.table(response.match_id)
            bots = await join(ref, list(response.seat_tokens), [None] * 4)
            request = await bots[0].request(K.DECISION_KIND_GRAND_TICHU)
            taken = False
            for nonce, (out_of_turn, action, has_action, request_id, version) in enumerate(messages, 1):
                state = table.state_version if version is None else version
                if out_of_turn:
                    message = pb.BotMessage(out_of_turn=pb.OutOfTurn(state_version=state))
                    if has_action:
                        message.out_of_turn.action.CopyFrom(action)
                else:
                    rid = request.request_id if request_id is None else request_id
                    message = pb.BotMessage(decision=pb.Decision(request_id=rid, state_version=state))
                    if has_action:
                        message.decision.action.CopyFrom(action)
                before = (table.state_version, table.state)
                await bots[0].call.write(message)
                await bots[0].send(ping=pb.Ping(nonce=nonce))
                seen: list[pb.RefereeMessage] = []
                while True:
                    reply = await bots[0].read()
                    assert reply is not None, bots[0].error  # the stream goes on
                    if reply.HasField("pong") and reply.pong.nonce == nonce:
                        break
                    seen.append(reply)
                rejections = [m.rejection for m in seen if m.HasField("rejection")]
                if rejections:
                    assert len(rejections) == 1 and len(rejections[0].message) < 1_000, rejections
                    assert (table.state_version, table.state) == before
                else:
                    taken = True
            # The others are answered as before, and the seat can still answer its request.
            for bot in bots[1:]:
                await bot.send(ping=pb.Ping(nonce=99))
                await bot.until(lambda m: m.HasField("pong") and m.pong.nonce == 99)
            if taken:
                return  # a fuzzed message was a legal answer
            await bots[0].decide(request, request.legal_actions[0])
            await bots[0].send(ping=pb.Ping(nonce=100))
            reply = await bots[0].until(lambda m: m.HasField("pong") or m.HasField("rejection"))
            assert reply.HasField("pong"), reply

    run(scenario())


# -------------------------------------------------------------------------------- CreateMatch

JSON_VALUES = st.recursive(
    st.none() | st.booleans() | st.integers() | st.floats(allow_nan=False) | ANY_TEXT,
    lambda inner: st.lists(inner, max_size=3) | st.dictionaries(ANY_TEXT, inner, max_size=3),
    max_leaves=8,
)
FLAGS = st.dictionaries(
    st.sampled_from(["target_score", "players", "match_mode", "double_victory_points", "bomb_timing", "x"]),
    st.one_of(
        st.integers(-(10**12), 10**12), JSON_VALUES, st.sampled_from(["fixed_rounds:3", "fixed_rounds:0"])
    ),
    max_size=3,
)
RULES = st.one_of(
    STRINGS, FLAGS.map(json.dumps), JSON_VALUES.map(json.dumps), st.just("[" * 3000 + "]" * 3000)
)
CLOCK_FIELDS = [f.name for f in pb.ClockSettings.DESCRIPTOR.fields if f.type != f.TYPE_BOOL]


def _clock(fields: dict[str, int]) -> pb.ClockSettings:
    clock = pb.ClockSettings()
    for name, value in fields.items():
        setattr(clock, name, value)
    return clock


CLOCKS = st.dictionaries(st.sampled_from(CLOCK_FIELDS), UINT32, max_size=4).map(_clock)
SEEDS = st.one_of(STRINGS, st.integers(0, 6_000).map(lambda n: "9" * n))
CREATES = st.builds(
    lambda preset, rules, clock, seed, names, delay, match_id: pb.CreateMatchRequest(
        preset=preset,
        rules_json=rules,
        clock=clock,
        seed=seed,
        bot_names=names,
        watch_delay_events=delay,
        match_id=match_id,
    ),
    st.one_of(st.sampled_from(["", "official", "tournament"]), STRINGS),
    st.one_of(st.just(""), RULES),
    CLOCKS,
    SEEDS,
    st.one_of(
        st.just([]),
        st.lists(st.one_of(ANY_TEXT, st.sampled_from(["a", "b"])), min_size=4, max_size=4),
        st.lists(STRINGS, max_size=8),
    ),
    st.one_of(st.integers(0, 200), UINT32),
    st.one_of(st.just(""), st.sampled_from(["m1", "m-2.x"]), STRINGS),
)


@FUZZ
@given(st.lists(CREATES, min_size=1, max_size=6))
def test_random_create_match_requests_are_refused_or_made_and_a_refusal_changes_nothing(
    requests: list[pb.CreateMatchRequest],
) -> None:
    async def scenario() -> None:
        async with referee() as ref:
            assert ref.server is not None
            front = ref.server.service.referee

            def held() -> set[str]:
                return {entry.table.match_id for entry in front}

            for request in requests:
                before = held()
                try:
                    made = await ref.stub.CreateMatch(request, metadata=ORGANISER_METADATA)
                except grpc.aio.AioRpcError as error:
                    assert error.code() in TYPED, (error.code(), error.details(), request)
                    assert len(error.details() or "") <= 300
                    assert held() == before
                    continue
                assert held() == before | {made.match_id} and len(made.seat_tokens) in (4, 6)
                assert all(len(name) <= 64 and invisible(name) is None for name in request.bot_names)
            await ref.create(seed="3")
            await still_answered(ref)

    run(scenario())
