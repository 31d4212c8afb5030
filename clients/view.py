"""SeatView: one seat's Observation kept current from its events between the referee's snapshots.

Over the network a bot receives its whole observation only in a Snapshot (when it joins and when
it reconnects); then come events and decision requests. SeatView folds the seat's events into
the last observation, so that every Bot method gets a current Observation, as it does
in-process. This is bookkeeping of what the seat has seen, not rules: what may be done comes
from each request, and a test checks the result against referee.rules.observe().
"""

from __future__ import annotations

from collections.abc import Sequence
from dataclasses import replace

from clients.bot import DecisionKind
from referee.rules import (
    Action,
    CallTichu,
    DeclineTichu,
    Event,
    GrandTichu,
    Observation,
    Phase,
    RulesConfig,
    cards_of,
    mask_of,
)
from referee.rules.cards import DOG
from referee.rules.events import (
    CallDeclined,
    Called,
    CardsDealt,
    CardsReceived,
    DragonGiftPending,
    DragonGiven,
    ExchangeCompleted,
    ExchangeSubmitted,
    GameOver,
    LeadPassed,
    Passed,
    Played,
    RoundEnded,
    RoundScored,
    RoundStarted,
    TrickWon,
    WentOut,
    WishFulfilled,
)
from referee.rules.observation import TrickPlay
from referee.rules.state import full_hand_size

__all__ = ["SeatView"]

_PHASES = {
    DecisionKind.GRAND_TICHU: Phase.GRAND_TICHU,
    DecisionKind.TICHU_STEP: Phase.TICHU_STEP,
    DecisionKind.EXCHANGE: Phase.EXCHANGE,
    DecisionKind.PLAY: Phase.PLAY,
    DecisionKind.BOMB_WINDOW: Phase.PLAY,
}  # a Dragon gift keeps the view's phase: PLAY, or ROUND_END after the last trick (R-DRG-5)

# Fields that only the referee can fill in (whose turn, the window's order, what is legal): a
# view shows them as "nothing owed" until a request says otherwise.
_IDLE = {
    "turn": None,
    "window_open": False,
    "window_order": (),
    "must_answer_window": False,
    "to_act": (),
    "legal_actions": (),
    "legal_decisions": (),
    "can_call_tichu": False,
}


def _blank(seat: int, config: RulesConfig) -> Observation:
    n = config.players
    return Observation(
        seat=seat,
        team=seat % 2,
        config=config,
        phase=Phase.GRAND_TICHU,
        round=0,
        dealer=0,
        scores=(0, 0),
        history=(),
        hand=(),
        hand_sizes=(0,) * n,
        calls=("none",) * n,
        my_grand_tichu=None,
        my_tichu_step=None,
        exchange_given=None,
        exchange_received=(),
        played=(False,) * n,
        won_cards=((),) * n,
        out=(),
        trick=(),
        top=None,
        top_seat=None,
        passed=(),
        turn=None,
        window_open=False,
        window_order=(),
        must_answer_window=False,
        wish=0,
        gift_pending=None,
        to_act=(),
        legal_actions=(),
        legal_decisions=(),
        can_call_tichu=False,
        winner=None,
    )


class SeatView:
    """One seat's observation: reset from a snapshot, advanced by events, completed by requests."""

    def __init__(self, seat: int, config: RulesConfig) -> None:
        self.seat = seat
        self.config = config
        self.obs = _blank(seat, config)
        self._snapshot_version = -1
        self._dog_owner: int | None = None  # the Dog lying aside (dog_card_pile = next_trick_winner)

    @property
    def snapshot_version(self) -> int:
        """The state version of the last snapshot (-1 before any)."""
        return self._snapshot_version

    def reset(self, obs: Observation, state_version: int) -> None:
        """Start again from a snapshot; events up to its state version are already in it."""
        self.obs = replace(obs, **_IDLE)  # type: ignore[arg-type]
        self.config = obs.config
        self._snapshot_version = state_version

    def for_request(self, kind: DecisionKind, legal: Sequence[Action], can_call_tichu: bool) -> Observation:
        """The observation to decide on: the view plus what the request says is owed and legal."""
        phase = _PHASES.get(kind, self.obs.phase)
        with_call: Sequence[Action] = legal
        if can_call_tichu and phase in (Phase.PLAY, Phase.EXCHANGE):
            # legal_actions = legal_decisions + a spontaneous call, as observe() lists them.
            with_call = (*legal, CallTichu())
        window = kind is DecisionKind.BOMB_WINDOW
        return replace(
            self.obs,
            phase=phase,
            turn=self.seat if kind is DecisionKind.PLAY else None,
            window_open=window,
            must_answer_window=window,
            to_act=(self.seat,),
            legal_actions=with_call,
            legal_decisions=legal,
            can_call_tichu=can_call_tichu,
        )

    def answered(self, action: Action) -> None:
        """Record this seat's own answer, which its events reveal only later (or never)."""
        o = self.obs
        if isinstance(action, GrandTichu):
            self.obs = replace(o, my_grand_tichu=action.call)
        elif isinstance(action, DeclineTichu):
            self.obs = replace(o, my_tichu_step=False)
        elif isinstance(action, CallTichu) and o.phase is Phase.TICHU_STEP:
            self.obs = replace(o, my_tichu_step=True)
        elif isinstance(action, CallTichu):
            # A spontaneous call is public at once (R-CALL-4): the bot decides knowing it.
            calls = list(o.calls)
            calls[self.seat] = "tichu"
            self.obs = replace(o, calls=tuple(calls))

    def apply(self, event: Event, state_version: int | None = None) -> None:
        """Fold one event into the view (skipped if the last snapshot already holds it)."""
        if state_version is not None and state_version <= self._snapshot_version:
            return
        o = self.obs
        n = self.config.players
        me = self.seat
        if isinstance(event, RoundStarted):
            blank = _blank(me, self.config)
            phase = Phase.GRAND_TICHU if self.config.grand_tichu_enabled else Phase.EXCHANGE
            self.obs = replace(
                blank, round=event.round, dealer=event.dealer, scores=o.scores, history=o.history, phase=phase
            )
            self._dog_owner = None
        elif isinstance(event, CardsDealt):
            if event.seat != me:
                return
            hand = cards_of(mask_of(o.hand) | event.cards)
            if event.stage == "first":
                # Everyone is dealt the same number of first cards.
                self.obs = replace(o, hand=hand, hand_sizes=(len(hand),) * n)
                return
            sizes = tuple(full_hand_size(self.config, o.dealer, s) for s in range(n))
            pre_step = self.config.tichu_call_exchange_mode == "pre_step" and "none" in o.calls
            self.obs = replace(
                o,
                hand=hand,
                hand_sizes=sizes,
                phase=Phase.TICHU_STEP if pre_step else Phase.EXCHANGE,
                my_grand_tichu=False if event.stage == "all" else o.my_grand_tichu,
            )
        elif isinstance(event, Called | CallDeclined):
            called = isinstance(event, Called)
            calls = list(o.calls)
            if called:
                calls[event.seat] = event.call
            changes: dict[str, object] = {"calls": tuple(calls)}
            if event.call == "grand_tichu" and event.seat == me:
                changes["my_grand_tichu"] = called
            if event.call == "tichu" and o.phase is Phase.TICHU_STEP:
                # The step's answers are revealed together when it ends (R-CALL-6).
                changes["phase"] = Phase.EXCHANGE
                if event.seat == me:
                    changes["my_tichu_step"] = called
            self.obs = replace(o, **changes)  # type: ignore[arg-type]
        elif isinstance(event, ExchangeSubmitted):
            if event.seat == me:
                given = tuple((s, cards_of(1 << c)[0]) for s, c in event.gifts)
                self.obs = replace(o, exchange_given=given)
        elif isinstance(event, CardsReceived):
            if event.seat == me:
                gone = mask_of(c for _, c in o.exchange_given or ())
                got = mask_of(c for _, c in event.received)
                received = tuple((s, cards_of(1 << c)[0]) for s, c in event.received)
                hand = cards_of(mask_of(o.hand) & ~gone | got)
                self.obs = replace(o, hand=hand, exchange_received=received, exchange_given=None)
        elif isinstance(event, ExchangeCompleted):
            self.obs = replace(o, phase=Phase.PLAY)
        elif isinstance(event, Played):
            self._played(event)
        elif isinstance(event, Passed):
            self.obs = replace(o, passed=tuple(sorted({*o.passed, event.seat})))
        elif isinstance(event, WishFulfilled):
            self.obs = replace(o, wish=0)
        elif isinstance(event, LeadPassed):
            if self.config.dog_card_pile == "receiver":
                self._win(event.to, DOG)
        elif isinstance(event, TrickWon):
            self._win(event.seat, event.cards)
            self._clear_trick()
        elif isinstance(event, DragonGiftPending):
            self.obs = replace(o, gift_pending=event.seat)
        elif isinstance(event, DragonGiven):
            self._win(event.to, event.cards)
            self._clear_trick()
            self.obs = replace(self.obs, gift_pending=None)
        elif isinstance(event, WentOut):
            self.obs = replace(o, out=(*o.out, event.seat))
        elif isinstance(event, RoundEnded):
            self.obs = replace(o, phase=Phase.ROUND_END, wish=0)  # R-WISH-9
            if self._dog_owner is not None:
                self._win(self._dog_owner, DOG)  # the Dog still lying aside goes to its player
                self._dog_owner = None
            if event.reason != "normal":
                # A 1-2 scores no cards; the engine keeps the table's cards in the top player's pile.
                top_seat = self.obs.top_seat
                if top_seat is not None:
                    self._win(top_seat, mask_of(tuple(c for p in self.obs.trick for c in p.cards)))
                self._clear_trick()
        elif isinstance(event, RoundScored):
            totals = (event.totals[0], event.totals[1])
            self.obs = replace(o, scores=totals, history=(*o.history, _pair(event)))
        elif isinstance(event, GameOver):
            self.obs = replace(
                o, phase=Phase.GAME_OVER, winner=event.winner, scores=(event.totals[0], event.totals[1])
            )

    def _played(self, event: Played) -> None:
        o = self.obs
        sizes = list(o.hand_sizes)
        sizes[event.seat] -= event.cards.bit_count()
        played = list(o.played)
        played[event.seat] = True
        hand = cards_of(mask_of(o.hand) & ~event.cards) if event.seat == self.seat else o.hand
        self.obs = replace(o, hand=hand, hand_sizes=tuple(sizes), played=tuple(played))
        if event.cards == DOG:
            # The Dog makes no trick (R-DOG-2); where it is kept depends on dog_card_pile.
            if self.config.dog_card_pile == "dog_player":
                self._win(event.seat, DOG)
            elif self.config.dog_card_pile == "next_trick_winner":
                self._dog_owner = event.seat
            return
        play = TrickPlay(event.seat, cards_of(event.cards), event.combo)
        self.obs = replace(
            self.obs,
            trick=(*self.obs.trick, play),
            top=event.combo,
            top_seat=event.seat,
            passed=(),
            wish=event.wish or self.obs.wish,
        )

    def _win(self, seat: int, cards: int) -> None:
        piles = [mask_of(p) for p in self.obs.won_cards]
        piles[seat] |= cards
        self.obs = replace(self.obs, won_cards=tuple(cards_of(p) for p in piles))

    def _clear_trick(self) -> None:
        self._dog_owner = None
        self.obs = replace(self.obs, trick=(), top=None, top_seat=None, passed=())


def _pair(event: RoundScored) -> tuple[int, int]:
    return (event.round_points[0], event.round_points[1])
