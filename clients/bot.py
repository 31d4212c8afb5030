"""The bot SDK: subclass Bot and override play(); every other decision has a safe default.

The same Bot plays in-process against other bots (clients.local) and against a referee over gRPC
(clients.connect). Between the bot and either sits a Harness: it asks the method that matches the
decision owed, checks the answer against the legal set, replaces an illegal answer with a safe
one (and logs it), and declines bomb windows at once when the hand holds no bomb that can beat
the top, so a simple bot never spends time on them (R-BOMB-5 allows a client library to do so).
"""

from __future__ import annotations

import random
import time
from collections.abc import Sequence
from dataclasses import dataclass
from typing import Any

import structlog

from referee.rules import (
    Action,
    CallTichu,
    Combo,
    DecisionKind,
    Decline,
    DeclineTichu,
    Event,
    Exchange,
    GiftDragon,
    GrandTichu,
    InvalidActionError,
    Observation,
    Pass,
    Phase,
    Play,
    classify,
    mask_of,
)
from referee.rules.actions import make_exchange
from referee.rules.cards import DRG_INDEX, PHX, PHX_INDEX
from referee.rules.combos import has_bomb
from referee.rules.legal import kind_owed
from referee.rules.state import opponents_of, partners_of, team_of

__all__ = [
    "Bot",
    "DecisionKind",
    "Harness",
    "HarnessStats",
    "Rejection",
    "combo_of",
    "decision_kind",
    "exchange_recipients",
    "opponents",
    "safe_action",
    "sensible_exchange",
    "teammates",
]

log = structlog.get_logger("tichu.bot")

PASS = Pass()
DECLINE = Decline()


@dataclass(frozen=True, slots=True)
class Rejection:
    """A message the referee did not accept (nothing changed): why, the rule, for which request."""

    reason: str  # illegal, invalid, unknown_request, stale, late, rate_limited, out_of_order
    rule: str
    message: str
    request_id: int
    state_version: int


class Bot:
    """Subclass and override play(); every other decision has a safe default.

    Every method takes one Observation: what this seat may know now, with `legal_decisions`
    exactly what the referee accepts as the answer (never empty when a method is asked).
    Methods are plain synchronous functions; a bot may keep any state it likes between calls.
    """

    name: str = "bot"  # shown in replays and standings
    version: str = "1"
    # True raises a bot's exceptions and illegal answers instead of replacing them (development).
    strict: bool = False
    # Let the referee decline the bomb windows this bot could only decline (no bomb, no call):
    # it is not asked, which saves a round trip per window (Hello.referee_declines).
    referee_declines: bool = True
    # Let the referee pass for this bot on its turns where passing is all it could do (nothing
    # beats the table, no bomb, no Tichu call): play() is not called for them, which saves a
    # round trip per such turn (Hello.referee_passes). The Passed event still arrives.
    referee_passes: bool = True
    # True: the SDK always runs this bot's methods in a worker thread (a bot that blocks or thinks
    # long). Otherwise they run inline once its first calls have each taken under 20 ms.
    blocking: bool = False
    _rng: random.Random | None = None

    @property
    def rng(self) -> random.Random:
        """This bot's random generator; clients.local seeds it from the match seed."""
        if self._rng is None:
            self._rng = random.Random()
        return self._rng

    def play(self, obs: Observation) -> Action:
        """A regular turn, lead or follow: one of obs.legal_decisions (a Play, or Pass)."""
        raise NotImplementedError(f"{type(self).__name__} must implement play(obs)")

    def grand_tichu(self, obs: Observation) -> bool:
        """Call Grand Tichu on the first cards (obs.hand)? Default: no."""
        return False

    def tichu(self, obs: Observation) -> bool:
        """The pre-exchange step: call Tichu on the full hand? Default: no."""
        return False

    def exchange(self, obs: Observation) -> Exchange:
        """The cards to give: default, low cards to opponents and a good one to a partner."""
        return sensible_exchange(obs)

    def bomb(self, obs: Observation) -> Play | None:
        """A bomb window: a bomb from obs.legal_decisions, or None to decline (the default)."""
        return None

    def gift_dragon(self, obs: Observation) -> int:
        """Who receives the Dragon trick: default, the opponent most likely to finish last."""
        return _likely_tailender(obs)

    def call_tichu_now(self, obs: Observation) -> bool:
        """Call Tichu now, out of turn? Asked only while a call is possible. Default: no."""
        return False

    def on_event(self, event: Event) -> None:
        """Hear an event this seat may see (a play, a pass, a trick won, a score...)."""

    def on_rejection(self, rejection: Rejection) -> None:
        """The referee refused something this bot sent (the SDK has logged it already)."""


# ----------------------------------------------------------------------------- helpers for bots


def teammates(obs: Observation) -> tuple[int, ...]:
    """This seat's partners, in seat order (the engine's R-V6-1 seating)."""
    return tuple(sorted(partners_of(obs.config.players, obs.seat)))


def opponents(obs: Observation) -> tuple[int, ...]:
    """The other team's seats, in turn order after this seat."""
    return opponents_of(obs.config.players, obs.seat)


def combo_of(play: Play, top: Combo | None = None) -> Combo | None:
    """The reading of a play (its named Phoenix rank, else the highest); None if no combination."""
    readings = classify(play.cards_mask, top)
    for reading in readings:
        if reading.phoenix == play.phoenix:
            return reading
    return readings[0] if readings else None


def exchange_recipients(obs: Observation) -> tuple[int, ...]:
    """The seats this seat gives an exchange card to, in seat order (empty outside the exchange)."""
    for action in obs.legal_decisions:
        if isinstance(action, Exchange):
            return tuple(seat for seat, _ in action.gifts)
    return ()


def sensible_exchange(obs: Observation) -> Exchange:
    """Opponents get the lowest cards, one partner the best card short of the Dragon and Phoenix.

    The Dog counts as a low card: passing it on is a common way to be rid of it.
    """
    recipients = exchange_recipients(obs)
    hand = list(obs.hand)  # lowest first (R-DEF-2)
    gifts: list[tuple[int, int]] = []
    partners = [s for s in recipients if team_of(s) == obs.team]
    if partners and len(partners) < len(recipients):
        # With six players every recipient is a partner: then all get low cards, like R-DEF-1.
        keep = [c for c in hand if c not in (DRG_INDEX, PHX_INDEX)] or hand
        best = keep[-1]
        gifts.append((partners[0], int(best)))
        hand.remove(best)
        partners = partners[1:]
    for seat in [s for s in recipients if team_of(s) != obs.team] + partners:
        gifts.append((seat, int(hand.pop(0))))
    return make_exchange(gifts)


def _likely_tailender(obs: Observation) -> int:
    """The listed recipient still in play with the most cards (R-END-5 hands his tricks back)."""
    choices = [a.to for a in obs.legal_decisions if isinstance(a, GiftDragon)]
    if not choices:
        raise ValueError("no Dragon gift is owed now")
    playing = [s for s in choices if s not in obs.out] or choices
    return max(playing, key=lambda s: obs.hand_sizes[s])


def decision_kind(obs: Observation) -> DecisionKind | None:
    """Which decision this seat owes now, from its observation; None if it owes none."""
    if obs.seat not in obs.to_act:
        return None
    # The engine's own derivation (referee.rules.owed), from what the observation holds.
    return kind_owed(obs.phase, obs.gift_pending is not None, obs.window_open)


def _listed(action: Action, legal: Sequence[Action]) -> Action | None:
    """The listed action equal to `action` (the engine's own object), or None."""
    return next((a for a in legal if a == action), None)


def safe_action(obs: Observation, kind: DecisionKind) -> Action:
    """What the SDK sends when a bot's answer is unusable: no call, decline, pass, else the first."""
    legal = obs.legal_decisions
    if not legal:
        raise ValueError(f"seat {obs.seat} owes no decision now")
    preferred: Action
    if kind is DecisionKind.GRAND_TICHU:
        preferred = GrandTichu(False)
    elif kind is DecisionKind.TICHU_STEP:
        preferred = DeclineTichu()
    elif kind is DecisionKind.EXCHANGE:
        preferred = sensible_exchange(obs)
    elif kind is DecisionKind.BOMB_WINDOW:
        preferred = DECLINE
    elif kind is DecisionKind.DRAGON_GIFT:
        preferred = GiftDragon(_likely_tailender(obs))
    else:
        preferred = PASS
    if kind is DecisionKind.EXCHANGE:
        # Exchanges are described, not listed (2,184 of them): ask membership, do not scan.
        return preferred if preferred in legal else legal[0]
    return _listed(preferred, legal) or legal[0]


# ----------------------------------------------------------------------------- the harness


@dataclass(slots=True)
class HarnessStats:
    """What a Harness counted for its bot."""

    decisions: int = 0  # requests answered, however (not the referee's own passes and declines)
    auto_declines: int = 0  # bomb window requests the SDK declined without asking the bot
    replaced: int = 0  # illegal or malformed answers replaced by safe_action
    errors: int = 0  # exceptions raised by the bot (their answers were replaced too)
    calls: int = 0  # spontaneous Tichu calls the bot made
    think_s: float = 0.0  # time spent in the bot's methods


_METHODS = {
    DecisionKind.GRAND_TICHU: "grand_tichu",
    DecisionKind.TICHU_STEP: "tichu",
    DecisionKind.EXCHANGE: "exchange",
    DecisionKind.PLAY: "play",
    DecisionKind.BOMB_WINDOW: "bomb",
    DecisionKind.DRAGON_GIFT: "gift_dragon",
}


class _UnusableError(Exception):
    """A bot's answer that cannot be sent; the message says why."""


class Harness:
    """Runs one Bot for the SDK: asks the right method, checks the answer, auto-declines windows."""

    def __init__(self, bot: Bot, seat: int | None = None) -> None:
        self.bot = bot
        self.seat = seat
        self.stats = HarnessStats()
        self._log = log.bind(bot=bot.name, seat=seat)
        # A bot that keeps the default call_tichu_now is never asked: nothing to spend time on.
        self._asks_calls = type(bot).call_tichu_now is not Bot.call_tichu_now
        self._hears = type(bot).on_event is not Bot.on_event

    @property
    def asks_calls(self) -> bool:
        """Whether the bot overrides call_tichu_now (else it is never asked)."""
        return self._asks_calls

    @property
    def hears_events(self) -> bool:
        """Whether the bot overrides on_event (else events are not passed on)."""
        return self._hears

    def auto_answer(self, obs: Observation, kind: DecisionKind) -> Action | None:
        """The answer the SDK gives without asking the bot (a bombless window), or None."""
        if kind is not DecisionKind.BOMB_WINDOW:
            return None
        # The referee's list decides: with wish_bomb_exemption = none it can hold fewer bombs
        # than the hand; has_bomb() skips the scan for the common bombless hand.
        if not has_bomb(mask_of(obs.hand)) or not any(isinstance(a, Play) for a in obs.legal_decisions):
            return DECLINE
        return None

    def declines_unseen(self, hand_mask: int, can_call_tichu: bool) -> bool:
        """Whether a window can be declined before the observation is even built; counts it.

        True for a hand without a bomb when no Tichu call is to be offered to the bot: the
        local driver uses it to skip observe() for most window seats.
        """
        if has_bomb(hand_mask) or (can_call_tichu and self._asks_calls):
            return False
        self.stats.decisions += 1
        self.stats.auto_declines += 1
        return True

    def decide(self, obs: Observation, kind: DecisionKind | None = None) -> Action:
        """The answer to the decision `obs` owes: the bot's own if legal, else a safe one."""
        kind = kind or decision_kind(obs)
        if kind is None:
            raise ValueError(f"seat {obs.seat} owes no decision now")
        self.stats.decisions += 1
        auto = self.auto_answer(obs, kind)
        if auto is not None:
            self.stats.auto_declines += 1
            return auto
        answer = self._ask(_METHODS[kind], obs)
        try:
            return self._check(kind, answer, obs)
        # Anything a malformed answer makes fail (a Play of a string...) is the bot's mistake too.
        except (_UnusableError, InvalidActionError, TypeError, ValueError, AttributeError) as problem:
            if self.bot.strict:
                raise ValueError(f"{self.bot.name}: {problem}") from None
            fallback = safe_action(obs, kind)
            self.stats.replaced += 1
            self._log.warning(
                "answer_replaced", kind=str(kind), answer=_show(answer), why=str(problem), sent=str(fallback)
            )
            return fallback

    def wants_tichu_call(self, obs: Observation) -> bool:
        """Whether the bot calls Tichu now, out of turn (asked only when a call is accepted)."""
        if not self._asks_calls or not obs.can_call_tichu or obs.phase not in (Phase.PLAY, Phase.EXCHANGE):
            return False
        answer = self._ask("call_tichu_now", obs)
        if answer is True:
            self.stats.calls += 1
            return True
        if answer is not False and answer is not _FAILED:
            self._log.warning("answer_replaced", kind="call_tichu_now", answer=_show(answer), sent="no call")
        return False

    def event(self, event: Event) -> None:
        """Pass an event to the bot; an exception there is logged, not raised (unless strict)."""
        if self._hears:
            self._ask("on_event", event)

    def rejection(self, rejection: Rejection) -> None:
        """Log a rejection and tell the bot."""
        self._log.warning(
            "answer_rejected",
            reason=rejection.reason,
            rule=rejection.rule,
            message=rejection.message,
            request_id=rejection.request_id,
        )
        self._ask("on_rejection", rejection)

    def _ask(self, method: str, arg: Any) -> object:
        start = time.perf_counter()
        try:
            result: object = getattr(self.bot, method)(arg)
        except Exception:
            if self.bot.strict:
                raise
            self.stats.errors += 1
            self._log.exception("bot_failed", method=method)
            return _FAILED
        finally:
            self.stats.think_s += time.perf_counter() - start
        return result

    def _check(self, kind: DecisionKind, answer: object, obs: Observation) -> Action:
        """The action to send for a bot's answer, or _UnusableError."""
        if answer is _FAILED:
            raise _UnusableError("the bot raised an exception")
        legal = obs.legal_decisions
        if kind is DecisionKind.GRAND_TICHU or kind is DecisionKind.TICHU_STEP:
            if not isinstance(answer, bool):
                raise _UnusableError(f"{_METHODS[kind]}() must return True or False")
            if kind is DecisionKind.GRAND_TICHU:
                action: Action = GrandTichu(answer)
            else:
                action = CallTichu() if answer else DeclineTichu()
            return _require(action, legal)
        if kind is DecisionKind.EXCHANGE:
            if not isinstance(answer, Exchange):
                raise _UnusableError("exchange() must return an Exchange")
            ordered = make_exchange(answer.gifts)  # in seat order, as the legal set lists them
            if ordered not in legal:
                raise _UnusableError("not one card from the hand for each recipient")
            return ordered
        if kind is DecisionKind.DRAGON_GIFT:
            if isinstance(answer, GiftDragon):
                return _require(answer, legal)
            if not isinstance(answer, int) or isinstance(answer, bool):
                raise _UnusableError("gift_dragon() must return a seat number")
            return _require(GiftDragon(answer), legal)
        if kind is DecisionKind.BOMB_WINDOW and (answer is None or isinstance(answer, Decline)):
            return DECLINE
        if isinstance(answer, Play):
            return self._check_play(answer, obs)
        if isinstance(answer, Action):
            return _require(answer, legal)
        raise _UnusableError(f"{_METHODS[kind]}() must return an action")

    def _check_play(self, answer: Play, obs: Observation) -> Action:
        """A legal play for the bot's Play: the listed one, its Phoenix reading filled in."""
        legal = obs.legal_decisions
        plain = Play(answer.cards_mask, answer.phoenix, answer.wish, answer.partner)
        found = _listed(plain, legal)
        if found is None and not plain.phoenix and plain.cards_mask & PHX and plain.cards_mask != PHX:
            # phoenix=0 means "the highest reading" (R-PHX-5); the list names the rank.
            for reading in classify(plain.cards_mask, obs.top):
                found = _listed(Play(plain.cards_mask, reading.phoenix, plain.wish, plain.partner), legal)
                if found is not None:
                    break
        if not isinstance(found, Play):
            raise _UnusableError("not a legal play now")
        if not answer.tichu:
            return found
        if obs.can_call_tichu:
            return Play(found.cards_mask, found.phoenix, found.wish, found.partner, True)
        # The play itself is legal: send it without the call rather than a different action.
        self._log.warning("tichu_flag_dropped", answer=str(answer), why="no Tichu call is accepted now")
        return found


_FAILED = object()


def _require(action: Action, legal: Sequence[Action]) -> Action:
    found = _listed(action, legal)
    if found is None:
        raise _UnusableError(f"{action} is not legal now")
    return found


def _show(answer: object) -> str:
    """The bot's answer for the log; a malformed one may not even print."""
    if answer is _FAILED:
        return "<exception>"
    try:
        return repr(answer)[:200]
    except Exception:
        return f"<unprintable {type(answer).__name__}>"
