"""The JSON Schema under proto/: current, valid, true of every payload the engine makes, strict
about what the wire never sends, and the same as the README's tables."""

from __future__ import annotations

import copy
import random
import re
from collections.abc import Iterator
from pathlib import Path
from typing import Any

import pytest
from jsonschema import Draft202012Validator

from referee.rules import (
    DecisionKind,
    Phase,
    RulesConfig,
    State,
    answer_window,
    apply,
    default_action,
    legal_decisions,
    new_game,
    observe,
    to_act,
)
from referee.rules.events import Event
from referee.wire.schema import SCHEMA_DIR, describe, rendered, schemas, write

ROOT = Path(__file__).resolve().parent.parent
DOCS = "".join(p.read_text(encoding="utf-8") for p in sorted((ROOT / "docs").rglob("*.md")))
VALIDATORS = {name: Draft202012Validator(schema) for name, schema in schemas().items()}


def errors(name: str, payload: Any) -> list[str]:
    """What the schema `name` finds wrong with `payload`."""
    return [f"{list(e.absolute_path)}: {e.message[:200]}" for e in VALIDATORS[name].iter_errors(payload)]


def test_the_committed_schema_is_the_generators_output(tmp_path: Path) -> None:
    write(tmp_path)
    fresh = {p.name: p.read_text(encoding="utf-8") for p in tmp_path.iterdir()}
    assert set(fresh) == {"observation.json", "event.json", "action.json"} == set(rendered())
    for name, text in fresh.items():
        committed = SCHEMA_DIR / name
        assert committed.exists(), f"{name} is not committed: run `make proto`"
        assert committed.read_text(encoding="utf-8") == text, f"{name} is stale: run `make proto` and commit"


@pytest.mark.parametrize("name", sorted(schemas()))
def test_each_schema_is_a_valid_draft_2020_12_schema(name: str) -> None:
    schema = schemas()[name]
    assert schema["$schema"] == "https://json-schema.org/draft/2020-12/schema"
    Draft202012Validator.check_schema(schema)


def played(config: RulesConfig, seed: int) -> Iterator[tuple[State, list[Event]]]:
    """Every state of a random game and the events that led to it."""
    rng = random.Random(seed)
    state, events = new_game(config, seed)
    yield state, events
    while not state.is_over:
        if state.window:
            answers = {s: rng.choice(list(legal_decisions(state, s))) for s in to_act(state)}
            state, events = answer_window(state, answers)
        else:
            seat = to_act(state)[0]
            if state.phase is Phase.EXCHANGE:
                action = default_action(state, seat)
            else:
                action = rng.choice(list(legal_decisions(state, seat)))
            state, events = apply(state, seat, action)
        yield state, events


# One round each: validating an observation checks each action it lists, hundreds on a lead.
GAMES = [
    (RulesConfig(match_mode="fixed_rounds:1"), 1),
    (RulesConfig.from_json({"preset": "tournament", "match_mode": "fixed_rounds:1"}), 2),
    (RulesConfig(players=6, match_mode="fixed_rounds:1", dog_card_pile="next_trick_winner"), 3),
    (
        RulesConfig(
            match_mode="fixed_rounds:1", tichu_call_exchange_mode="open", gt_decision_mode="sequential"
        ),
        4,
    ),
]


@pytest.mark.parametrize(("config", "seed"), GAMES, ids=["official", "tournament", "six", "open-calls"])
def test_every_observation_event_and_action_of_random_games_is_valid(config: RulesConfig, seed: int) -> None:
    kinds: set[str] = set()
    phases: set[str] = set()
    actions: set[str] = set()  # validated once each, at the end
    for state, events in played(config, seed):
        for event in events:
            data = event.to_json()
            assert not errors("event.json", data), (data, errors("event.json", data))
            kinds.add(data["type"])
        for seat in range(config.players):
            obs = observe(state, seat).to_json()
            assert not errors("observation.json", obs), errors("observation.json", obs)
            phases.add(obs["phase"])
            listing = obs["legal_actions"]
            actions.update(listing["also"] if isinstance(listing, dict) else listing)
            if isinstance(listing, dict):
                actions.add(str(default_action(state, seat)))
    for text in actions:
        assert not errors("action.json", text), text
    assert {"played", "trick_won", "round_scored", "game_over"} <= kinds
    assert {"exchange", "play", "game_over"} <= phases


def a_play_observation() -> dict[str, Any]:
    """An observation in the play, with a trick on the table and a wish."""
    for state, _ in played(RulesConfig(match_mode="fixed_rounds:1"), 7):
        obs = observe(state, 0).to_json()
        if obs["phase"] == "play" and obs["trick"]:
            return obs
    raise AssertionError("no trick in the game")


def test_the_schema_refuses_the_forms_the_wire_never_sends() -> None:
    good = a_play_observation()
    assert not errors("observation.json", good)
    wrong: dict[str, Any] = {
        "wish": 7,  # a rank is a name, "7"
        "turn": -1,  # no seat is null
        "hand": good["hand"].split(),  # cards are one string in JSON
        "phase": "PLAY",
        "calls": ["none", "tichu", "grand", "none"],
        "winner": 2,
        "exchange_given": [[1, "2s"]],  # an object keyed by seat
    }
    for field, value in wrong.items():
        bad = copy.deepcopy(good) | {field: value}
        assert errors("observation.json", bad), f"{field} = {value!r} passed"
    missing = {k: v for k, v in good.items() if k != "legal_decisions"}
    assert errors("observation.json", missing)
    assert errors("observation.json", good | {"secret": 1})
    for hand in ["7S", "kj", "7s,8s", " 7s", "1j", "10j 11j"]:  # the referee writes names one way
        assert errors("observation.json", good | {"hand": hand}), hand

    played_event = {
        "type": "played",
        "seat": 1,
        "cards": "DOG",
        "combo": {"kind": "dog", "length": 1, "rank": 0, "phoenix": None},
        "wish": None,
        "partner": None,
        "out_of_turn": False,
    }
    assert not errors("event.json", played_event)
    for field, value in {"partner": -1, "wish": 0, "cards": ["DOG"], "seat": 6}.items():
        assert errors("event.json", played_event | {field: value}), f"{field} = {value!r} passed"
    bomb = {"kind": "bomb", "length": 4, "rank": 7, "phoenix": None}
    assert errors("event.json", played_event | {"combo": bomb}), "a bomb without its kind of bomb"
    assert not errors("event.json", played_event | {"combo": bomb | {"bomb": "four_of_a_kind"}})
    assert errors("event.json", {"type": "trick_taken", "seat": 1})

    for text in [
        "pass",
        "play 7s 7j",
        "play MJ 2s 3j 4p 5s wish=7 tichu",
        "exchange 1:2s 2:Ap 3:DOG",
        "gift 3",
    ]:
        assert not errors("action.json", text), text
    for text in [
        "Pass",
        "play",
        "play 7s  7j",
        "play 1s",
        "gift",
        "gift 9",
        "play 7s wish=1",
        "exchange 1:XX",
    ]:
        assert errors("action.json", text), text


def readme_table(heading: str, first_column: str) -> list[list[str]]:
    """The rows of the first table under a docs heading whose header starts with `first_column`."""
    section = DOCS.split(heading, 1)[1]
    lines = section.splitlines()
    start = next(i for i, line in enumerate(lines) if line.startswith(f"| {first_column} |"))
    rows = []
    for line in lines[start + 2 :]:
        if not line.startswith("|"):
            break
        rows.append([cell.strip() for cell in line.strip().strip("|").split(" | ")])
    return rows


def code(cell: str) -> str:
    match = re.fullmatch(r"`([^`]+)`", cell)
    assert match, f"not one `code` span: {cell!r}"
    return match.group(1)


def test_the_readme_observation_table_gives_the_schemas_fields_and_types() -> None:
    properties = schemas()["observation.json"]["properties"]
    rows = readme_table("# What a bot sees: the Observation", "Field")
    documented = {code(row[0]): code(row[1]) for row in rows}
    assert len(documented) == len(rows), "a field is listed twice"
    assert set(documented) == set(properties), (
        f"only in the README: {sorted(set(documented) - set(properties))}; "
        f"only in the schema: {sorted(set(properties) - set(documented))}"
    )
    for name, schema in properties.items():
        assert documented[name] == describe(schema), (
            f"{name}: README {documented[name]!r}, schema {describe(schema)!r}"
        )
    # Every form the table names is defined in the schema, or is a plain JSON type.
    defs = schemas()["observation.json"]["$defs"]
    words = {w for kind in documented.values() for w in re.findall(r"[a-z_]+", kind)}
    assert words <= set(defs) | {"integer", "boolean", "string", "null", "array", "of", "or"}


def test_the_readme_event_table_gives_the_schemas_events_fields_and_types() -> None:
    events = {e["properties"]["type"]["const"]: e["properties"] for e in schemas()["event.json"]["oneOf"]}
    rows = readme_table("# Event JSON", "Type")
    documented = {code(row[0]): row[1] for row in rows}
    assert set(documented) == set(events)
    for name, cell in documented.items():
        fields = re.findall(r"`(\w+)`: (.+?)(?=, `|$)", cell)
        expected = [(field, describe(schema)) for field, schema in events[name].items() if field != "type"]
        assert fields == expected, f"{name}: README {fields}, schema {expected}"


def test_a_request_observation_has_what_a_stateless_bot_needs_in_every_kind() -> None:
    # What the README promises a stateless bot: the hand and the answers, the exchange's described.
    seen: set[DecisionKind] = set()
    for state, _ in played(RulesConfig(match_mode="fixed_rounds:1"), 11):
        for seat in to_act(state):
            obs = observe(state, seat).to_json()
            listing = obs["legal_decisions"]
            if state.phase is Phase.EXCHANGE:
                seen.add(DecisionKind.EXCHANGE)
                assert listing["exchange_to"] == [s for s in range(4) if s != seat]
                assert len(obs["hand"].split()) == 14
            else:
                assert listing == [str(a) for a in legal_decisions(state, seat)] and listing
    assert DecisionKind.EXCHANGE in seen
