"""RulesConfig: the flags of RULES.md §1 and the named presets."""

from __future__ import annotations

import dataclasses
from dataclasses import dataclass
from typing import Any, Final

from referee.rules.errors import InvalidActionError
from referee.rules.values import field_values

CHOICES: Final[dict[str, tuple[str, ...]]] = {
    "tie_at_target": ("play_on", "draw"),
    "gt_decision_mode": ("simultaneous", "sequential"),
    "tichu_call_exchange_mode": ("pre_step", "open", "after_exchange_only"),
    "bomb_timing": ("windows", "turn_only"),
    "wish_bomb_exemption": ("window_only", "any_nonlead_bomb", "none"),
    "dragon_gift_recipients": ("any_opponent", "active_opponents_only"),
    "failed_call_mode": ("deduct", "award_opponents"),
    "phoenix_ambiguity_default": ("highest", "reject_if_undeclared"),
    "dog_card_pile": ("dog_player", "receiver", "next_trick_winner"),
    "v6_deal": ("all_cards",),
    "v6_triple_victory_mode": ("replace", "bonus"),
    "v6_dog_fallback": ("next_active_after_dog_player",),
}


@dataclass(frozen=True, slots=True)
class RulesConfig:
    """Every rules flag of RULES.md §1; the defaults are the `official` preset."""

    players: int = 4
    target_score: int = 1000
    match_mode: str = "to_target"  # or "fixed_rounds:N" (R-GAME-4)
    tie_at_target: str = "play_on"
    grand_tichu_enabled: bool = True
    gt_decision_mode: str = "simultaneous"
    tichu_call_exchange_mode: str = "pre_step"
    allow_hopeless_calls: bool = True
    wish_mandatory: bool = False
    wish_fulfilled_by_own_mj_play: bool = False
    bomb_timing: str = "windows"
    wish_bomb_exemption: str = "window_only"
    wish_bomb_exemption_on_lead: bool = False
    allow_overtake_own_trick: bool = False
    dragon_gift_recipients: str = "any_opponent"
    dragon_gift_on_final_trick: bool = True
    double_victory_points: int = 200
    failed_call_mode: str = "deduct"
    phoenix_ambiguity_default: str = "highest"
    dog_card_pile: str = "dog_player"
    v6_deal: str = "all_cards"
    v6_triple_victory_mode: str = "replace"
    v6_dog_fallback: str = "next_active_after_dog_player"

    def __reduce__(self) -> tuple[type[RulesConfig], tuple[Any, ...]]:
        return (RulesConfig, field_values(self))

    def __post_init__(self) -> None:
        if not isinstance(self.players, int) or isinstance(self.players, bool):
            raise InvalidActionError(f"players must be 4 or 6, not {self.players!r}", "R-SEAT-1")
        if self.players == 3:
            raise InvalidActionError("the 3-player variant (§17) is not supported yet", "R-V3-1")
        if self.players not in (4, 6):
            raise InvalidActionError(f"players must be 4 or 6, not {self.players!r}", "R-SEAT-1")
        for name, allowed in CHOICES.items():
            if getattr(self, name) not in allowed:
                raise InvalidActionError(
                    f"{name} must be one of {', '.join(allowed)}, not {getattr(self, name)!r}"
                )
        for field in dataclasses.fields(self):
            value = getattr(self, field.name)
            if field.type in ("bool", bool) and not isinstance(value, bool):
                raise InvalidActionError(f"{field.name} must be true or false, not {value!r}")
            if field.type in ("int", int) and (not isinstance(value, int) or isinstance(value, bool)):
                raise InvalidActionError(f"{field.name} must be an integer, not {value!r}")
            if field.type in ("str", str) and not isinstance(value, str):
                raise InvalidActionError(f"{field.name} must be a string, not {value!r}")
        if self.match_mode != "to_target":
            rounds = self.fixed_rounds
            if rounds is None or rounds < 1:
                raise InvalidActionError(
                    f"match_mode must be 'to_target' or 'fixed_rounds:N' with N >= 1, "
                    f"not {self.match_mode!r}",
                    "R-GAME-4",
                )

    @property
    def fixed_rounds(self) -> int | None:
        """N for `match_mode = fixed_rounds:N`, else None."""
        prefix, _, count = self.match_mode.partition(":")
        if prefix != "fixed_rounds" or not count.isdigit():
            return None
        return int(count)

    @property
    def effective_wish_bomb_exemption(self) -> str:
        """R-WISH-6: with turn_only timing, the default window_only reads as any_nonlead_bomb."""
        if self.bomb_timing == "turn_only" and self.wish_bomb_exemption == "window_only":
            return "any_nonlead_bomb"
        return self.wish_bomb_exemption

    def to_json(self) -> dict[str, Any]:
        """Every flag by name."""
        # Not dataclasses.asdict, which deep-copies: every request's observation holds the flags.
        return {name: getattr(self, name) for name in _FLAG_NAMES}

    @classmethod
    def from_json(cls, data: dict[str, Any] | str | None) -> RulesConfig:
        """A config from a preset name, or from flags; a `preset` key names the base."""
        if data is None:
            return OFFICIAL
        if isinstance(data, str):
            return preset(data)
        if not isinstance(data, dict):
            raise InvalidActionError("a rules config is a preset name or an object of flags")
        fields = dict(data)
        base = preset(str(fields.pop("preset"))) if "preset" in fields else OFFICIAL
        known = {f.name for f in dataclasses.fields(cls)}
        unknown = sorted(set(fields) - known)
        if unknown:
            raise InvalidActionError(f"unknown rules flag(s): {', '.join(unknown)}")
        return dataclasses.replace(base, **fields)


_FLAG_NAMES: Final = tuple(field.name for field in dataclasses.fields(RulesConfig))
OFFICIAL: Final = RulesConfig()
# [ATP] German championship (§19): no Grand Tichu, a 1-2 counts 100, the Dragon trick that ends the
# deal is kept, and a table plays a fixed set of 4 deals where a draw is possible.
TOURNAMENT: Final = RulesConfig(
    match_mode="fixed_rounds:4",
    tie_at_target="draw",
    grand_tichu_enabled=False,
    double_victory_points=100,
    dragon_gift_on_final_trick=False,
)
PRESETS: Final = {"official": OFFICIAL, "tournament": TOURNAMENT}


def preset(name: str) -> RulesConfig:
    """A named preset: `official` (the defaults) or `tournament` (§19 [ATP])."""
    try:
        return PRESETS[name]
    except KeyError:
        raise InvalidActionError(
            f"unknown rules preset {name!r}: choose one of {', '.join(PRESETS)}"
        ) from None
