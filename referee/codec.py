"""The one place that translates between protobuf messages and referee.rules values."""

from __future__ import annotations

import json
from collections.abc import Sequence
from typing import Any

from referee.rules import (
    Action,
    CallTichu,
    Decline,
    DeclineTichu,
    Event,
    Exchange,
    GiftDragon,
    GrandTichu,
    InvalidActionError,
    Pass,
    Play,
    RulesConfig,
    format_cards,
    parse_action,
    parse_card,
    parse_cards,
)
from referee.rules.actions import make_exchange
from referee.rules.cards import CARD_NAMES, mask_of, parse_rank, rank_name
from referee.rules.config import PRESETS
from referee.rules.events import event_from_json
from referee.wire.tichu.v1 import referee_pb2 as pb

__all__ = [
    "action_from_proto",
    "action_to_proto",
    "config_from_proto",
    "config_to_proto",
    "event_from_proto",
    "event_to_proto",
    "pb",
    "unbundle",
]


def action_to_proto(action: Action) -> pb.Action:
    """The wire form of an action, with its canonical string in `text`."""
    if isinstance(action, Play):
        return _play_to_proto(action)
    msg = pb.Action(text=str(action))
    if isinstance(action, Pass):
        msg.pass_turn.SetInParent()
    elif isinstance(action, Decline):
        msg.decline.SetInParent()
    elif isinstance(action, GrandTichu):
        msg.grand_tichu.call = action.call
    elif isinstance(action, CallTichu):
        msg.call_tichu.SetInParent()
    elif isinstance(action, DeclineTichu):
        msg.decline_tichu.SetInParent()
    elif isinstance(action, Exchange):
        for to, card in action.gifts:
            msg.exchange.gifts.add(to=to, card=format_cards([card]))
    elif isinstance(action, GiftDragon):
        msg.gift.to = action.to
    return msg


def _play_to_proto(play: Play) -> pb.Action:
    # A lead request lists hundreds of plays: the card names are looked up once and make both
    # the cards and the text, which is str(play) (tests/test_wire.py holds them equal).
    names = []
    mask = play.cards_mask
    while mask:  # lowest bit first: R-DEF-2 order, as cards_of
        low = mask & -mask
        names.append(CARD_NAMES[low.bit_length() - 1])
        mask ^= low
    words = ["play", *names]
    msg = pb.Action()
    wire = msg.play
    wire.cards.extend(names)
    if play.phoenix:
        wire.phoenix = rank_name(play.phoenix)
        words.append(f"phoenix={wire.phoenix}")
    if play.wish:
        wire.wish = rank_name(play.wish)
        words.append(f"wish={wire.wish}")
    if play.partner >= 0:
        wire.partner = play.partner
        words.append(f"partner={play.partner}")
    if play.tichu:
        wire.tichu = True
        words.append("tichu")
    msg.text = " ".join(words)
    return msg


def action_from_proto(msg: pb.Action) -> Action:
    """An action from its wire form; malformed input raises InvalidActionError."""
    kind = msg.WhichOneof("kind")
    if kind is None:
        if msg.text:
            return parse_action(msg.text)
        raise InvalidActionError("the action is empty: set one of its fields, or its text")
    if kind == "play":
        play = msg.play
        if not play.cards:
            raise InvalidActionError("a play names at least one card; to pass, send pass")
        cards = parse_cards(list(play.cards))
        return Play(
            mask_of(cards),
            parse_rank(play.phoenix) if play.phoenix else 0,
            parse_rank(play.wish) if play.wish else 0,
            play.partner if play.HasField("partner") and play.partner >= 0 else -1,
            play.tichu,
        )
    if kind == "pass_turn":
        return Pass()
    if kind == "decline":
        return Decline()
    if kind == "grand_tichu":
        return GrandTichu(msg.grand_tichu.call)
    if kind == "call_tichu":
        return CallTichu()
    if kind == "decline_tichu":
        return DeclineTichu()
    if kind == "exchange":
        return make_exchange([(gift.to, int(parse_card(gift.card))) for gift in msg.exchange.gifts])
    if kind == "gift":
        return GiftDragon(msg.gift.to)
    raise InvalidActionError(f"unknown action kind {kind!r}")


def event_to_proto(event: Event, seq: int, state_version: int) -> pb.GameEvent:
    """An engine event on the wire: its type and its JSON (the replay schema)."""
    data = event.to_json()
    return pb.GameEvent(
        seq=seq, state_version=state_version, type=data["type"], json=json.dumps(data, separators=(",", ":"))
    )


def event_from_proto(msg: pb.GameEvent) -> Event:
    """The engine event a GameEvent carries."""
    data: dict[str, Any] = json.loads(msg.json)
    return event_from_json(data)


def config_to_proto(config: RulesConfig) -> pb.RulesConfig:
    """The rules flags as JSON, with the preset name when they are exactly a preset."""
    preset = next((name for name, value in PRESETS.items() if value == config), "")
    return pb.RulesConfig(json=json.dumps(config.to_json(), sort_keys=True), preset=preset)


def config_from_proto(msg: pb.RulesConfig) -> RulesConfig:
    """The rules flags a RulesConfig message carries."""
    if msg.json:
        data = json.loads(msg.json)
        if not isinstance(data, dict):
            raise InvalidActionError("rules json must be an object of flags")
        if msg.preset:
            data = {"preset": msg.preset, **data}
        return RulesConfig.from_json(data)
    return RulesConfig.from_json(msg.preset or None)


def unbundle(message: pb.RefereeMessage) -> Sequence[pb.RefereeMessage]:
    """The messages a RefereeMessage carries: a Bundle's, in order, or the message itself."""
    if message.WhichOneof("kind") == "bundle":
        return message.bundle.messages
    return (message,)
