"""Every JSON payload of matches played over a real referee is valid against proto/'s schema, and
a seat that keeps nothing between requests plays a whole game from `observation_json` alone."""

from __future__ import annotations

import asyncio
import json
from typing import Any

from jsonschema import Draft202012Validator

from referee.scripted import K, Policy, ScriptedSeat, random_policy
from referee.server.codec import action_from_proto
from referee.wire.schema import schemas
from referee.wire.tichu.v1 import referee_pb2 as pb
from tests.server.support import Bot, join, referee, run

VALIDATORS = {name.removesuffix(".json"): Draft202012Validator(s) for name, s in schemas().items()}


def invalid(kind: str, payload: Any) -> list[str]:
    """What the `kind` schema finds wrong with `payload` (empty: valid)."""
    return [f"{list(e.absolute_path)}: {e.message[:200]}" for e in VALIDATORS[kind].iter_errors(payload)]


def check_request(request: pb.DecisionRequest, seat: int) -> dict[str, Any]:
    """A request's observation and actions against the schema; the observation."""
    assert request.observation_json, f"request {request.request_id} has no observation"
    obs: dict[str, Any] = json.loads(request.observation_json)
    assert not invalid("observation", obs), invalid("observation", obs)
    assert obs["seat"] == seat and seat in obs["to_act"]
    for action in request.legal_actions:
        assert not invalid("action", action.text), action.text
    if request.kind == K.DECISION_KIND_EXCHANGE:
        assert obs["legal_decisions"]["exchange_to"] == list(request.exchange_to)
        assert len(obs["hand"].split()) >= request.exchange_give
    else:
        assert obs["legal_decisions"] == [a.text for a in request.legal_actions]
    return obs


def recording(policy: Policy, into: list[pb.Action]) -> Policy:
    """`policy`, keeping each action it sends."""

    def choose(seat: ScriptedSeat, request: pb.DecisionRequest) -> pb.Action | None:
        action = policy(seat, request)
        assert not asyncio.iscoroutine(action)
        if isinstance(action, pb.Action):
            into.append(action)
        return action  # type: ignore[return-value]

    return choose


def test_every_json_payload_of_a_played_match_is_valid_against_the_schema() -> None:
    sent: list[pb.Action] = []

    async def scenario() -> list[Bot]:
        async with referee() as ref:
            response = await ref.create(rules_json='{"match_mode": "fixed_rounds:3"}', seed="schema-1")
            policies = [recording(random_policy(f"schema/{s}", call_rate=0.3), sent) for s in range(4)]
            bots = await join(ref, list(response.seat_tokens), policies)
            await asyncio.gather(*(bot.play() for bot in bots))
            return bots

    bots = run(scenario(), 120)
    counts = {"observation": 0, "event": 0, "action": 0}
    for bot in bots:
        assert bot.result is not None and bot.error is None
        for message in bot.received:
            kind = message.WhichOneof("kind")
            assert kind != "rejection", message.rejection
            if kind == "snapshot":
                obs = json.loads(message.snapshot.observation_json)
                assert not invalid("observation", obs), invalid("observation", obs)
                counts["observation"] += 1
            elif kind == "request":
                check_request(message.request, bot.seat)
                counts["observation"] += 1
                counts["action"] += len(message.request.legal_actions)
            elif kind == "event":
                event = json.loads(message.event.json)
                assert event["type"] == message.event.type
                assert not invalid("event", event), (event, invalid("event", event))
                counts["event"] += 1
    for action in sent:
        text = action.text or str(action_from_proto(action))  # a structured exchange has no text
        assert not invalid("action", text), text
    assert counts["observation"] > 100 and counts["event"] > 500 and counts["action"] > 500
    assert any(a.WhichOneof("kind") == "exchange" for a in sent) and len(sent) > 100


def stateless_policy(seat: ScriptedSeat, request: pb.DecisionRequest) -> pb.Action:
    """Reads nothing but the request (no events, no hand kept): its observation's answers."""
    obs = json.loads(request.observation_json)
    listing = obs["legal_decisions"]
    if isinstance(listing, dict):  # an exchange: one card of the hand to each recipient
        gifts = zip(listing["exchange_to"], reversed(obs["hand"].split()), strict=False)
        return pb.Action(text="exchange " + " ".join(sorted(f"{to}:{card}" for to, card in gifts)))
    # The highest play it may make (the listing is lowest first), else what there is.
    return pb.Action(text=listing[-1])


def test_a_seat_that_keeps_no_state_plays_a_whole_game_from_the_requests_alone() -> None:
    async def scenario() -> tuple[Bot, list[Bot]]:
        async with referee() as ref:
            response = await ref.create(rules_json='{"match_mode": "fixed_rounds:2"}', seed="stateless")
            tokens = list(response.seat_tokens)
            others = await join(ref, tokens[1:], [random_policy(f"sl/{s}") for s in range(1, 4)])
            stateless = Bot(ref, tokens[0], stateless_policy, name="stateless")
            # Asked as little as the protocol allows, and told events only with its requests.
            hello = pb.Hello(
                token=tokens[0],
                bot_name="stateless",
                protocol_version=1,
                accept_bundles=True,
                referee_declines=True,
                referee_passes=True,
                defer_events=True,
            )
            await stateless.open(hello)
            await asyncio.gather(stateless.play(), *(bot.play() for bot in others))
            return stateless, others

    stateless, others = run(scenario(), 120)
    assert stateless.result is not None and stateless.error is None
    assert all(bot.result == stateless.result for bot in others)
    kinds = [m.WhichOneof("kind") for m in stateless.received]
    assert "rejection" not in kinds
    requests = [m.request for m in stateless.received if m.WhichOneof("kind") == "request"]
    assert {r.kind for r in requests} >= {K.DECISION_KIND_EXCHANGE, K.DECISION_KIND_PLAY}
    assert len(requests) > 20
    summary = json.loads(stateless.result.summary_json)["seats"][0]
    assert summary["rejections"] == 0 and summary["timeouts"] == 0


def test_a_seat_whose_hello_omits_the_observation_gets_requests_without_it() -> None:
    # Hello.omit_observation (the SDK sets it: it folds events itself): that seat's requests
    # leave observation_json empty, the Snapshot still carries it, and the other seats' requests
    # keep theirs.
    async def scenario() -> tuple[Bot, list[Bot]]:
        async with referee() as ref:
            response = await ref.create(rules_json='{"match_mode": "fixed_rounds:1"}', seed="omit")
            tokens = list(response.seat_tokens)
            others = await join(ref, tokens[1:], [random_policy(f"om/{s}") for s in range(1, 4)])
            omitting = Bot(ref, tokens[0], random_policy("om/0"), name="omitting")
            hello = pb.Hello(token=tokens[0], bot_name="omitting", protocol_version=1, omit_observation=True)
            await omitting.open(hello)
            await asyncio.gather(omitting.play(), *(bot.play() for bot in others))
            return omitting, others

    omitting, others = run(scenario(), 120)
    assert omitting.result is not None and omitting.error is None
    mine = [m.request for m in omitting.received if m.WhichOneof("kind") == "request"]
    assert len(mine) > 5 and all(r.observation_json == "" for r in mine)
    snapshots = [m.snapshot for m in omitting.received if m.WhichOneof("kind") == "snapshot"]
    assert snapshots and all(json.loads(s.observation_json)["seat"] == 0 for s in snapshots)
    theirs = [m.request for bot in others for m in bot.received if m.WhichOneof("kind") == "request"]
    assert len(theirs) > 5 and all(json.loads(r.observation_json)["seat"] in (1, 2, 3) for r in theirs)
