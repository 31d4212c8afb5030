"""The pure Tichu rules engine (RULES.md): standard library only, no I/O, clocks or logging."""

from referee.rules import game as _game
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
    action_from_json,
    action_to_json,
    parse_action,
)
from referee.rules.cards import Card, Suit, cards_of, format_cards, mask_of, parse_card, parse_cards
from referee.rules.combos import Combo, ComboKind, beats, classify
from referee.rules.config import OFFICIAL, PRESETS, TOURNAMENT, RulesConfig, preset
from referee.rules.defaults import action_sort_key, default_action
from referee.rules.errors import IllegalActionError, InvalidActionError, RulesError
from referee.rules.events import Event, event_from_json
from referee.rules.game import answer_window, apply, apply_all, new_game
from referee.rules.legal import (
    DecisionKind,
    can_call_tichu,
    kind_owed,
    legal_actions,
    legal_decisions,
    owed,
    to_act,
)
from referee.rules.observation import Observation, advance, answered, for_request, observe
from referee.rules.round import outcome, without_next_deal
from referee.rules.simulation import Simulation
from referee.rules.state import Phase, State, state_from_json, state_to_json, team_of

# True when the engine runs compiled by mypyc (`make fast`), False for the pure-Python sources.
COMPILED = not (_game.__file__ or "").endswith(".py")

__all__ = [
    "COMPILED",
    "OFFICIAL",
    "PRESETS",
    "TOURNAMENT",
    "Action",
    "CallTichu",
    "Card",
    "Combo",
    "ComboKind",
    "DecisionKind",
    "Decline",
    "DeclineTichu",
    "Event",
    "Exchange",
    "GiftDragon",
    "GrandTichu",
    "IllegalActionError",
    "InvalidActionError",
    "Observation",
    "Pass",
    "Phase",
    "Play",
    "RulesConfig",
    "RulesError",
    "Simulation",
    "State",
    "Suit",
    "action_from_json",
    "action_sort_key",
    "action_to_json",
    "advance",
    "answer_window",
    "answered",
    "apply",
    "apply_all",
    "beats",
    "can_call_tichu",
    "cards_of",
    "classify",
    "default_action",
    "event_from_json",
    "for_request",
    "format_cards",
    "kind_owed",
    "legal_actions",
    "legal_decisions",
    "mask_of",
    "new_game",
    "observe",
    "outcome",
    "owed",
    "parse_action",
    "parse_card",
    "parse_cards",
    "preset",
    "state_from_json",
    "state_to_json",
    "team_of",
    "to_act",
    "without_next_deal",
]
