"""The bot SDK: subclass Bot and override play(); every other decision has a safe default.

The same Bot plays in-process against other bots (clients.local) and against a referee over gRPC
(clients.connect). Between the bot and either sits a Harness: it asks the method that matches the
decision owed, checks the answer against the legal set, replaces an illegal answer with a safe
one (and logs it), and declines bomb windows at once when the hand holds no bomb that can beat
the top, so a simple bot never spends time on them (R-BOMB-5 allows a client library to do so).

Each answer the Harness had to replace, and each exception a bot method raised, is also told to
the observers of `observe_replacements` as a Replacement (`tichu check-bot` grades the bot on
them: with TICHU_SDK_REPORT=stderr in its environment, the SDK writes each as a line to stderr).
"""

from __future__ import annotations

import json
import os
import random
import sys
import time
import traceback
from collections.abc import Callable, Sequence
from dataclasses import asdict, dataclass
from typing import Any

import structlog

from clients.listed import ListedActions
from referee.bot_commands import SDK_REPORT_ENV, SDK_REPORT_PREFIX

# What on_rejection is told: the match core's own value, as the referee made it.
from referee.match.messages import Rejection
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
from referee.rules.cards import DRG_INDEX, PHX, PHX_INDEX, RANK_MASKS, format_cards, rank_name
from referee.rules.combos import has_bomb
from referee.rules.legal import kind_owed
from referee.rules.state import opponents_of, partners_of, team_of

__all__ = [
    "Bot",
    "Harness",
    "HarnessStats",
    "Replacement",
    "combo_of",
    "decision_kind",
    "exchange_recipients",
    "observe_replacements",
    "opponents",
    "safe_action",
    "sensible_exchange",
    "teammates",
]

log = structlog.get_logger("tichu.bot")

PASS = Pass()
DECLINE = Decline()


@dataclass(frozen=True, slots=True)
class Replacement:
    """An answer of the bot that the SDK did not send as it was, or an exception a method raised."""

    method: str  # the Bot method asked, e.g. "play"
    situation: str  # the decision owed and what the seat saw, on one line
    problem: str  # why the answer could not be sent as it was
    answer: str = ""  # what the method returned ("" when it raised)
    sent: str = ""  # what the SDK sent instead ("" when nothing was owed: on_event, ...)
    rule: str = ""  # the rule the answer broke, where one is known
    traceback: tuple[str, ...] = ()  # the bot's own frames, when the method raised
    fault: str = "answer_replaced"  # or "bot_raised", or "method_missing"

    def describe(self) -> str:
        """The replacement on one line: the method, the problem, the situation, what was sent."""
        sent = f"; the SDK sent {self.sent} instead" if self.sent else ""
        answer = f" (it returned {self.answer})" if self.answer else ""
        return f"{self.method}(): {self.problem}{answer}, in {self.situation}{sent}"


# Told of every Replacement, in order; see observe_replacements.
_observers: list[Callable[[Replacement], None]] = []


def observe_replacements(observer: Callable[[Replacement], None]) -> Callable[[], None]:
    """Tell `observer` of every answer a Harness replaces from now on; returns what undoes it."""
    _observers.append(observer)
    return lambda: _observers.remove(observer)


def _to_stderr(replacement: Replacement) -> None:
    sys.stderr.write(SDK_REPORT_PREFIX + json.dumps(asdict(replacement)) + "\n")
    sys.stderr.flush()


# `tichu check-bot` asks for them so (referee.bot_commands).
if os.environ.get(SDK_REPORT_ENV) == "stderr":
    _observers.append(_to_stderr)


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
    if isinstance(legal, ListedActions):
        return legal.find(action)  # parses the one action, not the list
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
            rule = "" if isinstance(answer, _Raised) else _rule_broken(obs, kind)
            self._tell(_METHODS[kind], obs, answer, str(problem), str(fallback), rule)
            return fallback

    def wants_tichu_call(self, obs: Observation) -> bool:
        """Whether the bot calls Tichu now, out of turn (asked only when a call is accepted)."""
        if not self._asks_calls or not obs.can_call_tichu or obs.phase not in (Phase.PLAY, Phase.EXCHANGE):
            return False
        answer = self._ask("call_tichu_now", obs)
        if answer is True:
            self.stats.calls += 1
            return True
        if answer is not False and not isinstance(answer, _Raised):
            self._log.warning("answer_replaced", kind="call_tichu_now", answer=_show(answer), sent="no call")
        if answer is not False:
            self._tell("call_tichu_now", obs, answer, "call_tichu_now() must return True or False", "no call")
        return False

    def event(self, event: Event) -> None:
        """Pass an event to the bot; an exception there is logged, not raised (unless strict)."""
        if self._hears:
            self._tell("on_event", event, self._ask("on_event", event))

    def rejection(self, rejection: Rejection) -> None:
        """Log a rejection and tell the bot."""
        self._log.warning(
            "answer_rejected",
            reason=rejection.reason,
            rule=rejection.rule,
            message=rejection.message,
            request_id=rejection.request_id,
        )
        self._tell("on_rejection", rejection, self._ask("on_rejection", rejection))

    def _ask(self, method: str, arg: Any) -> object:
        start = time.perf_counter()
        try:
            result: object = getattr(self.bot, method)(arg)
        except Exception as error:
            if self.bot.strict:
                raise
            self.stats.errors += 1
            self._log.exception("bot_failed", method=method)
            # The bot's own frames: those below this one.
            frames = traceback.format_tb(error.__traceback__)[1:]
            return _Raised(error, tuple(line.rstrip() for f in frames for line in f.splitlines()))
        finally:
            self.stats.think_s += time.perf_counter() - start
        return result

    def _tell(
        self, method: str, arg: object, answer: object, problem: str = "", sent: str = "", rule: str = ""
    ) -> None:
        """Tell the observers of a replaced answer or a raised exception (nothing else)."""
        if not _observers or not (problem or isinstance(answer, _Raised)):
            return
        raised = answer if isinstance(answer, _Raised) else None
        frames = raised.frames if raised else ()
        fault = "bot_raised" if raised else "answer_replaced"
        if raised:
            problem = f"raised {raised}"
            if isinstance(raised.error, NotImplementedError) and getattr(type(self.bot), method) is getattr(
                Bot, method
            ):
                problem = f"is missing: {type(self.bot).__name__} must define {method}(obs)"
                frames, fault = (), "method_missing"  # the SDK's own lines, not the bot's
        replacement = Replacement(
            method=method,
            situation=_situation(arg),
            problem=problem,
            answer="" if raised else _show(answer),
            sent=sent,
            rule=rule,
            traceback=frames,
            fault=fault,
        )
        for observer in list(_observers):
            observer(replacement)

    def _check(self, kind: DecisionKind, answer: object, obs: Observation) -> Action:
        """The action to send for a bot's answer, or _UnusableError."""
        if isinstance(answer, _Raised):
            raise _UnusableError(f"the bot raised {answer}")
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


@dataclass(frozen=True, slots=True)
class _Raised:
    """What a bot method raised instead of answering, with the bot's own traceback lines."""

    error: Exception
    frames: tuple[str, ...]

    def __str__(self) -> str:
        return f"{type(self.error).__name__}: {self.error}".rstrip(": ")


def _situation(arg: object) -> str:
    """What a bot method was asked about, on one line: the decision and what the seat saw."""
    if not isinstance(arg, Observation):
        return f"the {type(arg).__name__} {_show(arg)}"
    kind = decision_kind(arg)
    parts = [f"the {kind.name} decision" if kind is not None else "a moment with no decision owed"]
    parts.append(f"seat {arg.seat}, hand {format_cards(arg.hand) or 'empty'}")
    if arg.trick:
        parts.append(f"on the table {format_cards(arg.trick[-1].cards)} of seat {arg.trick[-1].seat}")
    if arg.wish:
        parts.append(f"the wish {rank_name(arg.wish)}")
    return " (".join(parts[:2]) + "".join(f", {p}" for p in parts[2:]) + ")"


def _rule_broken(obs: Observation, kind: DecisionKind) -> str:
    """The rule an unusable PLAY answer broke, where the legal list shows it: R-WISH-4 when every
    legal play holds the wished rank (bombs aside, R-WISH-6)."""
    if kind is not DecisionKind.PLAY or not obs.wish:
        return ""
    wished = RANK_MASKS[obs.wish]
    plays = [a for a in obs.legal_decisions if isinstance(a, Play)]
    bound = len(plays) == len(obs.legal_decisions) and all(
        p.cards_mask & wished or has_bomb(p.cards_mask) for p in plays
    )
    return "R-WISH-4" if bound and any(p.cards_mask & wished for p in plays) else ""


def _require(action: Action, legal: Sequence[Action]) -> Action:
    found = _listed(action, legal)
    if found is None:
        raise _UnusableError(f"{action} is not legal now")
    return found


def _show(answer: object) -> str:
    """The bot's answer for the log; a malformed one may not even print."""
    if isinstance(answer, _Raised):
        return "<exception>"
    try:
        return repr(answer)[:200]
    except Exception:
        return f"<unprintable {type(answer).__name__}>"
