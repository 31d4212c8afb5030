"""The JSON Schema (draft 2020-12) of the JSON that the wire carries in strings, made from the
engine's types: the observation (Snapshot and DecisionRequest `observation_json`), the events
(`GameEvent.json`) and the actions' canonical strings (`Action.text`, the observation's listings).

`make proto` (or `python -m referee.wire.schema`) writes them to proto/tichu/v1/schema/; a test
checks that the committed files are this module's output, and the tests of played matches
validate every payload against them. A field's schema comes from its type; MEANINGS says what
the integers and strings of a field stand for (a seat, a rank, the cards of a bit mask) where
the type alone does not.
"""

from __future__ import annotations

import ast
import dataclasses
import json
import re
import sys
import typing
from pathlib import Path
from typing import Any

from referee.rules.actions import (
    Action,
    CallTichu,
    Decline,
    DeclineTichu,
    Exchange,
    GiftDragon,
    GrandTichu,
    Pass,
    Play,
)
from referee.rules.cards import CARD_NAMES, RANK_BY_NAME
from referee.rules.combos import ComboKind
from referee.rules.config import CHOICES, RulesConfig
from referee.rules.events import EVENT_TYPES, STRING_FIELD_VALUES
from referee.rules.observation import Observation, TrickPlay
from referee.rules.state import CALL_NAMES, Phase

ROOT = Path(__file__).resolve().parents[2]
SCHEMA_DIR = ROOT / "proto" / "tichu" / "v1" / "schema"
DRAFT = "https://json-schema.org/draft/2020-12/schema"
Schema = dict[str, Any]
MAX_SEAT = 5  # six players at most (R-SEAT-1)
NULL: Schema = {"type": "null"}


def ref(name: str) -> Schema:
    """A reference to one of the shared definitions."""
    return {"$ref": f"#/$defs/{name}"}


def nullable(schema: Schema) -> Schema:
    """`schema`, or null."""
    return {"oneOf": [schema, NULL]}


def array(items: Schema) -> Schema:
    """A JSON array of `items`."""
    return {"type": "array", "items": items}


def _alternatives(words: typing.Iterable[str]) -> str:
    # Longest first, so that "10" is tried before a shorter word it begins with.
    return "|".join(re.escape(w) for w in sorted(words, key=lambda w: (-len(w), w)))


_SPECIALS = tuple(name for name in CARD_NAMES if name[:-1] not in RANK_BY_NAME)
_SUITS = sorted({name[-1] for name in CARD_NAMES if name not in _SPECIALS})
CARD = f"(?:(?:{_alternatives(RANK_BY_NAME)})[{''.join(_SUITS)}]|{_alternatives(_SPECIALS)})"
RANK = f"(?:{_alternatives(RANK_BY_NAME)})"
SEAT = f"[0-{MAX_SEAT}]"
CARDS = f"{CARD}(?: {CARD})*"


def _check_card_pattern() -> None:
    """The card pattern names exactly the deck's cards (R-DECK-1)."""
    possible = {f"{rank}{suit}" for rank in RANK_BY_NAME for suit in _SUITS} | set(_SPECIALS)
    if possible != set(CARD_NAMES) or not all(re.fullmatch(CARD, name) for name in CARD_NAMES):
        raise AssertionError("the card pattern does not describe the deck")


def _whole(pattern: str) -> str:
    return f"^{pattern}$"


# ----------------------------------------------------------------------------- definitions


def _combo() -> Schema:
    bombs = [kind for kind in ComboKind if kind.is_bomb]
    return {
        "description": "a reading of a play, as `tichu rules classify` gives it; `rank` is the R-COMB-9 "
        "key (x.5 for a Phoenix single), `phoenix` the rank the Phoenix stands for in a combination",
        "type": "object",
        "properties": {
            "kind": {"enum": sorted({kind.label for kind in ComboKind})},
            "bomb": {"enum": [kind.name.lower() for kind in bombs]},
            "length": {"type": "integer", "minimum": 1},
            "rank": {"type": "number"},
            "phoenix": nullable(ref("rank")),
        },
        "required": ["kind", "length", "rank", "phoenix"],
        "additionalProperties": False,
        "if": {"properties": {"kind": {"const": "bomb"}}},
        "then": {"required": ["bomb"]},
        "else": {"not": {"required": ["bomb"]}},
    }


def _config() -> Schema:
    properties: dict[str, Schema] = {}
    for name, kind in field_types(RulesConfig).items():
        if name == "players":
            properties[name] = {"enum": [4, 6]}  # R-SEAT-1 (§16 for six)
        elif name == "match_mode":
            properties[name] = {"type": "string", "pattern": "^(?:to_target|fixed_rounds:0*[1-9][0-9]*)$"}
        elif name in CHOICES:
            properties[name] = {"enum": list(CHOICES[name])}
        elif kind in ("int", "bool"):
            properties[name] = {"type": "integer" if kind == "int" else "boolean"}
        else:
            raise TypeError(f"RulesConfig.{name}: no JSON form for {kind}")
    return {
        "description": "every rules flag of RULES.md §1 (README 'Rules configuration')",
        "type": "object",
        "properties": properties,
        "required": list(properties),
        "additionalProperties": False,
    }


def _action_patterns() -> dict[type, tuple[str, str]]:
    """Each action class's canonical strings (README 'Action notation') and what it does."""
    # The descriptions are written here: a compiled engine's classes keep no docstrings.
    keyword = {cls: re.escape(str(cls())) for cls in (Pass, Decline, CallTichu, DeclineTichu)}
    return {
        Pass: (keyword[Pass], "pass on a regular turn (R-TRICK-3)"),
        Decline: (keyword[Decline], "let a bomb window go by (R-BOMB-9); not a pass"),
        GrandTichu: (
            f"(?:{re.escape(str(GrandTichu(True)))}|{re.escape(str(GrandTichu(False)))})",
            "the answer to the Grand Tichu question (R-GT-1)",
        ),
        CallTichu: (
            keyword[CallTichu],
            "call Tichu (R-CALL-1), or yes to the pre-exchange question (R-CALL-6)",
        ),
        DeclineTichu: (keyword[DeclineTichu], "no to the pre-exchange question (R-CALL-6)"),
        Play: (
            f"play {CARDS}(?: phoenix={RANK})?(?: wish={RANK})?(?: partner={SEAT})?(?: tichu)?",
            "a lead, a follow, a bomb or the Dog: the Phoenix's rank, the Mah Jong's wish, the Dog's "
            "partner (six players), and a Tichu call first (R-CALL-7)",
        ),
        Exchange: (
            f"exchange {SEAT}:{CARD}(?: {SEAT}:{CARD})*",
            "the exchange: one card to each recipient, in seat order (R-EXCH-1, R-V6-4)",
        ),
        GiftDragon: (f"gift {SEAT}", "the Dragon trick goes to that seat (R-DRG-2)"),
    }


def _action() -> Schema:
    patterns = _action_patterns()
    missing = set(typing.get_args(Action)) - set(patterns)
    if missing:
        raise TypeError(f"no canonical string pattern for {sorted(c.__name__ for c in missing)}")
    return {
        "description": "an action's canonical string (README 'Action notation'); parse_action(s) reads it",
        "oneOf": [
            {"title": cls.__name__, "description": description, "type": "string", "pattern": _whole(pattern)}
            for cls, (pattern, description) in patterns.items()
        ],
    }


def _shared() -> dict[str, Schema]:
    _check_card_pattern()
    return {
        "seat": {
            "description": "a seat, 0..3 (0..5 with six players), in turn order",
            "type": "integer",
            "minimum": 0,
            "maximum": MAX_SEAT,
        },
        "team": {"description": "a team: 0 = A (the even seats), 1 = B", "enum": [0, 1]},
        "card": {
            "description": 'a card: rank then suit letter ("7j", "10s", "Kp", "At"), or MJ, DOG, PHX, DRG',
            "type": "string",
            "pattern": _whole(CARD),
        },
        "cards": {
            "description": "cards in one string, separated by single spaces, lowest first (R-DEF-2): "
            '"2j 7s PHX"; "" for none (the proto has a repeated string instead)',
            "type": "string",
            "pattern": f"^(?:{CARDS})?$",
        },
        "rank": {"description": "a natural rank", "enum": list(RANK_BY_NAME)},
        "call": {"description": "a seat's call", "enum": list(CALL_NAMES)},
        "combo": _combo(),
        "config": _config(),
        "action": _action(),
    }


# ----------------------------------------------------------------------------- fields


def field_types(cls: type) -> dict[str, str]:
    """Each dataclass field of `cls` and its type, as the source writes it.

    Read from the module's source, not from the class: a compiled engine's classes hold their
    fields' types evaluated, and without their parameters (`tuple`).
    """
    written: dict[str, str] = {}
    for klass in reversed(cls.__mro__):
        if not klass.__module__.startswith("referee."):
            continue
        # The source beside the package (a compiled module keeps its .py next to it).
        source = ROOT.joinpath(*klass.__module__.split(".")).with_suffix(".py")
        for node in ast.parse(source.read_text(encoding="utf-8")).body:
            if isinstance(node, ast.ClassDef) and node.name == klass.__name__:
                for statement in node.body:
                    if isinstance(statement, ast.AnnAssign) and isinstance(statement.target, ast.Name):
                        written[statement.target.id] = ast.unparse(statement.annotation)
    return {field.name: written[field.name] for field in dataclasses.fields(cls)}


def _split(text: str, separator: str) -> list[str]:
    """`text` split at `separator` outside brackets."""
    parts, depth, start = [], 0, 0
    for i, char in enumerate(text):
        depth += {"[": 1, "]": -1}.get(char, 0)
        if depth == 0 and text.startswith(separator, i):
            parts.append(text[start:i])
            start = i + len(separator)
    parts.append(text[start:])
    return [part.strip() for part in parts if part.strip()]


# The engine's named types and their JSON forms.
_NAMED: dict[str, Schema] = {
    "int": {"type": "integer"},
    "bool": {"type": "boolean"},
    "str": {"type": "string"},
    "Card": ref("card"),
    "Combo": ref("combo"),
    "RulesConfig": ref("config"),
    "Phase": ref("phase"),
    "TrickPlay": ref("trick_play"),
}


def schema_of_type(text: str) -> Schema:
    """The JSON form of a field of type `text`, as the engine's to_json writes it."""
    options = _split(text, "|")
    if len(options) > 1:
        rest = [schema_of_type(o) for o in options if o != "None"]
        if len(rest) != 1 or "None" not in options:
            raise TypeError(f"no JSON form for the union {text}")
        return nullable(rest[0])
    if text in _NAMED:
        return _NAMED[text]
    if text == "Sequence[Action]":
        return ref("listing")
    if text == "tuple[Card, ...]":
        return ref("cards")  # one string: every card list of the JSON payloads
    if text == "tuple[tuple[int, Card], ...]":
        # (seat, card) pairs, as an object keyed by the seat: the observation's exchanges
        return {
            "type": "object",
            "propertyNames": {"pattern": _whole(SEAT)},
            "additionalProperties": ref("card"),
        }
    match = re.fullmatch(r"tuple\[(.*)\]", text)
    if match:
        items = _split(match.group(1), ",")
        if items[-1] == "...":
            return array(schema_of_type(", ".join(items[:-1])))
        return {"type": "array", "prefixItems": [schema_of_type(i) for i in items], "items": False}
    raise TypeError(f"no JSON form for the type {text}")


Meaning = Schema | tuple[Schema, ...]
_SEAT, _TEAM, _RANK_OR_NONE = ref("seat"), ref("team"), nullable(ref("rank"))
# What a field's integers (or strings) stand for, by field name; a tuple means each position of
# a fixed pair. Every other integer is a count, points or a round number.
MEANINGS: dict[str, Meaning] = {
    **dict.fromkeys(("seat", "dealer", "top_seat", "turn", "gift_pending", "dog_aside", "to"), _SEAT),
    **dict.fromkeys(("out", "passed", "window_order", "to_act"), _SEAT),  # lists of seats
    **dict.fromkeys(("team", "winner"), _TEAM),
    "wish": _RANK_OR_NONE,  # a rank name; 0, no wish, is null
    "rank": ref("rank"),
    "partner": nullable(_SEAT),  # the Dog's partner (six players); -1, none, is null
    "cards": ref("cards"),  # an event's cards: a bit mask in the engine, cards on the wire
    "gifts": (_SEAT, ref("card")),
    "received": (_SEAT, ref("card")),
    "calls": ref("call"),
    **{name: {"enum": list(values)} for name, values in STRING_FIELD_VALUES.items()},
}


def _with_meaning(schema: Schema, meaning: Meaning) -> Schema:
    """`schema` with each of its integer or string leaves replaced by what they stand for."""
    if schema.get("type") in ("integer", "string") and "pattern" not in schema:
        if isinstance(meaning, tuple):
            raise TypeError("a pair meaning for a single value")
        return meaning
    if "oneOf" in schema:
        return {
            "oneOf": [
                option if option == NULL else _with_meaning(option, meaning) for option in schema["oneOf"]
            ]
        }
    if "prefixItems" in schema and isinstance(meaning, tuple):
        return schema | {
            "prefixItems": [_with_meaning(s, m) for s, m in zip(schema["prefixItems"], meaning, strict=True)]
        }
    if schema.get("type") == "array" and isinstance(schema.get("items"), dict):
        return schema | {"items": _with_meaning(schema["items"], meaning)}
    return schema


def field_schema(name: str, kind: str) -> Schema:
    """The JSON form of one field of an engine type."""
    schema = schema_of_type(kind)
    meaning = MEANINGS.get(name)
    return schema if meaning is None else _with_meaning(schema, meaning)


def _object(cls: type, description: str | None, extra: dict[str, Schema] | None = None) -> Schema:
    properties = dict(extra or {})
    for name, kind in field_types(cls).items():
        properties[name] = field_schema(name, kind)
    return {
        **({} if description is None else {"description": description}),
        "type": "object",
        "properties": properties,
        "required": list(properties),
        "additionalProperties": False,
    }


# ----------------------------------------------------------------------------- the documents


def _document(name: str, title: str, description: str, body: Schema, defs: dict[str, Schema]) -> Schema:
    return {
        "$schema": DRAFT,
        "$id": f"urn:tichu:v1:schema:{name}",
        "title": title,
        "description": description,
        **body,
        "$defs": defs,
    }


def observation_schema() -> Schema:
    """The schema of an observation (Observation.to_json())."""
    listing = {
        "description": "the actions accepted now, as canonical strings; an exchange's are described "
        "(recipients in seat order, and the other actions also accepted), not listed",
        "oneOf": [
            array(ref("action")),
            {
                "type": "object",
                "properties": {"exchange_to": array(ref("seat")), "also": array(ref("action"))},
                "required": ["exchange_to", "also"],
                "additionalProperties": False,
            },
        ],
    }
    defs = _shared() | {
        "phase": {
            "description": "where the round stands (R-FLOW-1)",
            "enum": [phase.value for phase in Phase],
        },
        "listing": listing,
        "trick_play": _object(TrickPlay, "one play of the current trick"),
    }
    body = _object(Observation, "what one seat may know now (R-INFO-1)")
    del body["description"]
    return _document(
        "observation",
        "Observation",
        "One seat's observation: Snapshot.observation_json and DecisionRequest.observation_json "
        "(README 'What a bot sees: the Observation')",
        body,
        defs,
    )


def event_schema() -> Schema:
    """The schema of an event (Event.to_json()): one object per event type."""
    events: list[Schema] = []
    for type_name, cls in EVENT_TYPES.items():
        schema = _object(cls, None, {"type": {"const": type_name}})
        events.append({"title": cls.__name__} | schema)
    defs = _shared()
    del defs["action"], defs["config"], defs["call"]
    return _document(
        "event",
        "Event",
        "A game event: GameEvent.json, and the events of replays (README 'Event JSON')",
        {"oneOf": events},
        defs,
    )


def action_schema() -> Schema:
    """The schema of an action's canonical string (Action.text)."""
    action = _action()  # self-contained: its patterns spell the cards and ranks out
    return _document(
        "action",
        "Action",
        "An action's canonical string: Action.text, and each entry of an observation's listings",
        action,
        {},
    )


def schemas() -> dict[str, Schema]:
    """Every schema document by file name."""
    return {
        "observation.json": observation_schema(),
        "event.json": event_schema(),
        "action.json": action_schema(),
    }


def rendered() -> dict[str, str]:
    """Each schema file's text, as committed."""
    return {
        name: json.dumps(schema, indent=2, ensure_ascii=False) + "\n" for name, schema in schemas().items()
    }


def write(folder: Path = SCHEMA_DIR) -> None:
    """Write the schema files into `folder`."""
    folder.mkdir(parents=True, exist_ok=True)
    for name, text in rendered().items():
        (folder / name).write_text(text, encoding="utf-8")


def describe(schema: Schema) -> str:
    """A schema in a few words, as the README's tables write a field's JSON type."""
    if "$ref" in schema:
        return str(schema["$ref"]).rsplit("/", 1)[-1]
    if "oneOf" in schema:
        return " or ".join(describe(option) for option in schema["oneOf"])
    if "const" in schema:
        return json.dumps(schema["const"])
    if "enum" in schema:  # the values are in the schema; the tables say what each means
        kinds = {type(value).__name__ for value in schema["enum"]}
        return "string" if kinds == {"str"} else "integer"
    kind = schema.get("type")
    if kind == "array" and "prefixItems" in schema:
        return "[" + ", ".join(describe(item) for item in schema["prefixItems"]) + "]"
    if kind == "array":
        return f"array of {describe(schema['items'])}"
    if kind == "object" and "additionalProperties" in schema and "properties" not in schema:
        return f"{{seat: {describe(schema['additionalProperties'])}}}"
    return str(kind)


if __name__ == "__main__":
    write(Path(sys.argv[1]) if len(sys.argv) > 1 else SCHEMA_DIR)
