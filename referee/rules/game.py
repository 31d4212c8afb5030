"""The game: new_game, apply, apply_all, answer_window and the rule for each action (RULES.md §3-§16).

`apply(state, seat, action)` validates first and raises InvalidActionError or IllegalActionError
(naming the rule) without changing anything, or returns the next state and the events.
"""

from __future__ import annotations

import random
from collections.abc import Iterable, Mapping
from typing import Final

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
from referee.rules.cards import DOG, MJ, PHX, RANK_MASKS, format_cards, mask_points, rank_name
from referee.rules.combos import COMBOS, DOG_KIND, SINGLE, Combo, beats, classify
from referee.rules.config import OFFICIAL, RulesConfig
from referee.rules.errors import IllegalActionError, InvalidActionError
from referee.rules.events import (
    CallDeclined,
    Called,
    CardsDealt,
    CardsReceived,
    DragonGiftPending,
    Event,
    ExchangeCompleted,
    ExchangeSubmitted,
    LeadPassed,
    Passed,
    Played,
    TrickWon,
    WindowClosed,
    WishFulfilled,
)
from referee.rules.legal import (
    _NEXT,
    _WINDOWS,
    DOG_COMBO,
    Entry,
    _call_problem,
    _can_fulfil,
    _dog_partner_options,
    _gift_recipients,
    _owes_window,
    _sequential_gt_seat,
    _trick_complete,
    _window_bound_seat,
    exchange_recipients,
    next_active,
)
from referee.rules.round import (
    _DRAGON_KEY,
    Events,
    _after_full_deal,
    _deal,
    _give_dragon,
    _reset_trick,
    _set,
    _went_out,
)
from referee.rules.state import (
    _EXCHANGE,
    _GAME_OVER,
    _GRAND_TICHU,
    _PLAY,
    _ROUND_END,
    _TICHU_STEP,
    NO_SEAT,
    State,
    partners_of,
    team_of,
)

# Events are values: the field-less and one-field ones that occur every turn are made once.
WINDOW_CLOSED: Final = WindowClosed()
PASSED: Final = tuple(Passed(seat) for seat in range(6))


def new_game(config: RulesConfig = OFFICIAL, seed: int | str = 0) -> tuple[State, list[Event]]:
    """A new game: the first dealer is drawn from the seed (R-FLOW-2) and the first round dealt."""
    st = State.__new__(State)
    st._legal = None
    st._stamp = None
    st._leads = None
    st._stop_before_deal = False
    st.config = config
    st.seed = seed
    st.round = 0
    st.scores = (0, 0)
    st.history = ()
    st.winner = None
    st.dealer = random.Random(f"tichu-dealer/{seed}").randrange(config.players)
    events: list[Event] = []
    _deal(st, events)
    return st, events


# ----------------------------------------------------------------------------- apply


def apply(state: State, seat: int, action: Action) -> tuple[State, list[Event]]:
    """Apply `seat`'s action: the next state and its events, or an error and no change."""
    events: list[Event] = []
    return _dispatch(state, seat, action, False, events), events


def apply_all(state: State, moves: Iterable[tuple[int, Action]]) -> tuple[State, list[Event]]:
    """Apply (seat, action) moves in order, all or nothing: the same result as successive
    apply() calls, built on one copy (the referee uses it for a bomb window's answers)."""
    events: list[Event] = []
    st = state
    owned = False
    for seat, action in moves:
        st = _dispatch(st, seat, action, owned, events)
        owned = st is not state
    return st, events


def answer_window(state: State, answers: Mapping[int, Action]) -> tuple[State, list[Event]]:
    """Apply several seats' answers (Decline or a bomb) to the open bomb window, on one copy.

    The window resolves from the answers alone (R-BOMB-9): the first bomb in window order applies
    once every seat before it has declined, and later answers are discarded. The result is the
    same as applying each answer with apply() as it arrives, in any order.

    A bomb may carry the call flag (R-CALL-7: call Tichu, then bomb). The call is made only with
    the bomb that applies; a discarded bomb's call is discarded with it (R-BOMB-9), so that a
    call never reveals a bomb. A referee holds the answers until the window resolves, and in
    between a seat may call Tichu on its own (a call is accepted while a window is open,
    R-CALL-1). Its flag is then moot and its bomb is played without a second call, as if the
    flagged answer had been applied when it was given, before the call. Any other reason why
    the seat may not call (it has played a card, called Grand Tichu...) held when it answered
    too, and is rejected as apply() rejects it. apply() itself stays strict: there, a flag from
    a seat that has already called is illegal. (Here a flag sent after the seat's own call
    cannot be told from one sent before it; a referee checks each answer as it arrives.)
    """
    if not state.window:
        raise IllegalActionError("there is no bomb window open", "R-BOMB-9")
    recorded: list[tuple[int, Play]] = []
    declined = state.window_declined
    for seat, action in answers.items():
        if type(seat) is not int or not _owes_window(state, seat):
            if isinstance(seat, int) and seat in state.window:
                raise IllegalActionError(f"seat {seat} has already answered this bomb window", "R-BOMB-9")
            raise IllegalActionError(f"seat {seat!r} is not in this bomb window", "R-BOMB-9")
        if type(action) is Decline:
            declined |= 1 << seat
        elif isinstance(action, Play):
            if action.tichu:
                _check_held_call(state, seat)
            combo, in_window = _validate_play(state, seat, action)
            assert in_window
            recorded.append((seat, Play(action.cards_mask, combo.phoenix, 0, -1, action.tichu, combo)))
        else:
            raise InvalidActionError(
                f"a bomb window is answered with 'decline' or a bomb, not {action}", "R-BOMB-9"
            )
    st = state.copy()
    st.window_declined = declined
    if recorded:
        st.window_bombs = _in_window_order(st, st.window_bombs + tuple(recorded))
    events: list[Event] = []
    _resolve_window(st, events)
    return st, events


def _check_held_call(state: State, seat: int) -> None:
    """Raise unless the call flag of `seat`'s held window answer was legal when it was given.

    A window stays open until answered, and nothing that decides whether a seat may call
    changes meanwhile but the seat's own Tichu call (R-CALL-1, R-CALL-2). So the flag was legal
    exactly when it would be without that call; with it, the flag is moot (_resolve_window makes
    no second call).
    """
    problem = _call_problem(state, seat)
    if problem is None:
        return
    if state.calls[seat] == 1:
        before = state.copy()
        before.calls = _set(state.calls, seat, 0)
        if _call_problem(before, seat) is None:
            return
    raise IllegalActionError(problem[1], problem[0])  # the reason apply() gives


def _own(state: State, owned: bool) -> State:
    """The state to mutate: a fresh copy, or the working copy apply_all already owns."""
    if owned:
        state._legal = None
        state._stamp = None
        return state
    return state.copy()


def _dispatch(state: State, seat: int, action: Action, owned: bool, events: Events) -> State:
    n = state.config.players
    if type(seat) is not int or not 0 <= seat < n:
        raise InvalidActionError(f"seat must be 0..{n - 1}, not {seat!r}")
    phase = state.phase
    if phase is _GAME_OVER:
        raise IllegalActionError("the game is over", "R-GAME-1")
    kind = type(action)
    if kind is Decline:
        return _apply_decline(state, seat, owned, events)
    if kind is Play:
        return _apply_play(state, seat, action, owned, events)  # type: ignore[arg-type]
    if kind is Pass:
        return _apply_pass(state, seat, owned, events)
    if kind is CallTichu:
        return _apply_call(state, seat, owned, events)
    if kind is DeclineTichu:
        if phase is not _TICHU_STEP:
            raise IllegalActionError(
                "no Tichu question is open: 'no_tichu' answers the pre-exchange step", "R-CALL-6"
            )
        if state.tichu_step[seat] != -1:
            raise IllegalActionError("you have already answered the pre-exchange Tichu question", "R-CALL-6")
        st = _own(state, owned)
        st.tichu_step = _set(st.tichu_step, seat, 0)
        _maybe_finish_tichu_step(st, events)
        return st
    if isinstance(action, GrandTichu):
        return _apply_grand_tichu(state, seat, action.call, owned, events)
    if isinstance(action, Exchange):
        return _apply_exchange(state, seat, action, owned, events)
    if isinstance(action, GiftDragon):
        return _apply_gift(state, seat, action.to, owned, events)
    raise InvalidActionError(f"not an action: {action!r}")


def _apply_grand_tichu(state: State, seat: int, call: bool, owned: bool, events: Events) -> State:
    if state.phase is not _GRAND_TICHU:
        raise IllegalActionError(
            "the Grand Tichu window is closed: it closes before the 9th card (7th in §16)", "R-GT-1"
        )
    if state.gt[seat] >= 0:
        raise IllegalActionError("you have already answered the Grand Tichu question", "R-GT-1")
    sequential = state.config.gt_decision_mode == "sequential"
    if sequential and seat != _sequential_gt_seat(state):
        raise IllegalActionError(
            f"Grand Tichu decisions go in dealing order; seat {_sequential_gt_seat(state)} decides first",
            "R-GT-1",
        )
    st = _own(state, owned)
    st.gt = _set(st.gt, seat, int(call))
    if sequential:
        _reveal_gt(st, seat, events)
    if min(st.gt) >= 0:
        if not sequential:
            for s in range(st.players):
                _reveal_gt(st, s, events)
        n = st.players
        st.hands = tuple(st.hands[s] | st.unseen[s] for s in range(n))
        for s in range(n):
            if events is not None:
                events.append(CardsDealt(s, st.unseen[s], "rest"))
        st.unseen = (0,) * n
        _after_full_deal(st, events)
    return st


def _reveal_gt(st: State, seat: int, events: Events) -> None:
    if st.gt[seat]:
        st.calls = _set(st.calls, seat, 2)
    if events is not None:
        events.append(Called(seat, "grand_tichu") if st.gt[seat] else CallDeclined(seat, "grand_tichu"))


def _maybe_finish_tichu_step(st: State, events: Events) -> None:
    if -1 in st.tichu_step:
        return
    for s, d in enumerate(st.tichu_step):
        if d == 1:
            st.calls = _set(st.calls, s, 1)
        if events is not None and d in (0, 1):
            events.append(Called(s, "tichu") if d == 1 else CallDeclined(s, "tichu"))
    st.phase = _EXCHANGE


def _apply_call(state: State, seat: int, owned: bool, events: Events) -> State:
    problem = _call_problem(state, seat)
    if problem is not None:
        raise IllegalActionError(problem[1], problem[0])
    st = _own(state, owned)
    if st.phase is _TICHU_STEP:
        st.tichu_step = _set(st.tichu_step, seat, 1)
        _maybe_finish_tichu_step(st, events)
    else:
        st.calls = _set(st.calls, seat, 1)
        if events is not None:
            events.append(Called(seat, "tichu"))
    return st


def _apply_exchange(state: State, seat: int, action: Exchange, owned: bool, events: Events) -> State:
    if state.phase is not _EXCHANGE:
        raise IllegalActionError("the exchange is not open now", "R-EXCH-2")
    if state.exchange[seat] is not None:
        raise IllegalActionError("your exchange is already submitted and final", "R-EXCH-5")
    recipients = exchange_recipients(state, seat)
    given_to = tuple(s for s, _ in action.gifts)
    if given_to != recipients:
        who = " and ".join(str(s) for s in recipients)
        what = "one card to each other seat" if state.players == 4 else "one card to each partner"
        raise InvalidActionError(
            f"give exactly {what}: seats {who}; got seats {' '.join(map(str, given_to)) or 'none'}",
            "R-EXCH-1" if state.players == 4 else "R-V6-4",
        )
    if len({c for _, c in action.gifts}) != len(action.gifts):
        raise InvalidActionError("the same card is given twice", "R-EXCH-1")
    missing = action.mask & ~state.hands[seat]
    if missing:
        raise IllegalActionError(f"you do not hold {format_cards(missing)}", "R-EXCH-1")
    st = _own(state, owned)
    _submit_exchange(st, seat, action.gifts, events)
    return st


def _submit_exchange(st: State, seat: int, gifts: tuple[tuple[int, int], ...], events: Events) -> None:
    """Record a validated exchange; the last one delivers them all (R-EXCH-2)."""
    st.exchange = st.exchange[:seat] + (gifts,) + st.exchange[seat + 1 :]
    if events is not None:
        events.append(ExchangeSubmitted(seat, gifts))
    if None not in st.exchange:
        _deliver_exchange(st, events)


def _deliver_exchange(st: State, events: Events) -> None:
    """R-EXCH-2: every card at once; then the Mah Jong holder leads (R-EXCH-4)."""
    n = st.players
    hands = list(st.hands)
    received: list[list[tuple[int, int]]] = [[] for _ in range(n)]
    for giver, gifts in enumerate(st.exchange):
        assert gifts is not None
        for to, card in gifts:
            hands[giver] &= ~(1 << card)
            received[to].append((giver, card))
    for to in range(n):
        for _, card in received[to]:
            hands[to] |= 1 << card
    st.hands = tuple(hands)
    st.received = tuple(tuple(sorted(r)) for r in received)
    st.exchange = (None,) * n
    for s in range(n):
        if events is not None:
            events.append(CardsReceived(s, st.received[s]))
    if events is not None:
        events.append(ExchangeCompleted())
    st.phase = _PLAY
    st.turn = next(s for s in range(n) if st.hands[s] & MJ)


def _apply_gift(state: State, seat: int, to: int, owned: bool, events: Events) -> State:
    if state.gift < 0 or state.phase not in (_PLAY, _ROUND_END):
        raise IllegalActionError("no Dragon trick is waiting to be given", "R-DRG-2")
    if seat != state.gift:
        raise IllegalActionError(f"seat {state.gift} gives the Dragon trick, not you", "R-DRG-2")
    if not isinstance(to, int) or not 0 <= to < state.players:
        raise InvalidActionError(f"gift to a seat 0..{state.players - 1}, not {to!r}", "R-DRG-2")
    allowed = _gift_recipients(state, seat)
    if to not in allowed:
        if team_of(to) == team_of(seat):
            raise IllegalActionError("the Dragon trick goes to an opponent, never to your team", "R-DRG-2")
        raise IllegalActionError(
            f"seat {to} is out; give the trick to an active opponent: {allowed}", "R-DRG-2"
        )
    st = _own(state, owned)
    _give_dragon(st, seat, to, events)
    return st


def _apply_pass(state: State, seat: int, owned: bool, events: Events) -> State:
    if state.phase is not _PLAY:
        raise IllegalActionError(f"nothing to pass on in the {state.phase.value} phase", "R-TRICK-3")
    if state.gift >= 0:
        raise IllegalActionError("the Dragon trick must be given first", "R-DRG-2")
    if state.window:
        raise IllegalActionError(
            "a bomb window is open: answer it with 'decline' (or a bomb); your turn comes after it",
            "R-BOMB-9",
        )
    if seat != state.turn:
        raise IllegalActionError(f"it is seat {state.turn}'s turn, not yours", "R-TRICK-3")
    if state.top is None:
        raise IllegalActionError("the leader must play; he cannot pass", "R-TRICK-2")
    if _can_fulfil(state, seat):
        raise IllegalActionError(
            f"you can fulfil the wish for {rank_name(state.wish)} and must play a combination containing it",
            "R-WISH-4",
        )
    st = _own(state, owned)
    _perform_pass(st, seat, events)
    return st


def _perform_pass(st: State, seat: int, events: Events) -> None:
    st.passed |= 1 << seat
    st.turn = _NEXT[st.config.players][seat][st.active]
    if events is not None:
        events.append(PASSED[seat])
    _after_action(st, seat, events)


def _apply_decline(state: State, seat: int, owned: bool, events: Events) -> State:
    if not _owes_window(state, seat):
        if not state.window or seat not in state.window:
            raise IllegalActionError("there is no bomb window open for you to decline", "R-BOMB-9")
        raise IllegalActionError("you have already answered this bomb window", "R-BOMB-9")
    st = _own(state, owned)
    st.window_declined |= 1 << seat
    _resolve_window(st, events)
    return st


def _after_action(st: State, actor: int, events: Events) -> None:
    """After a play or a pass: open the bomb window (R-BOMB-5) or go straight on (R-BOMB-7)."""
    if st.config.bomb_timing == "windows":
        st.window = _WINDOWS[st.config.players][actor][st.active]
        st.window_declined = 0
        st.window_bombs = ()
    else:
        _continue_trick(st, events)


def _in_window_order(st: State, bombs: tuple[tuple[int, Play], ...]) -> tuple[tuple[int, Play], ...]:
    """Pending bombs in window order: one canonical order, whatever order they arrived in."""
    return tuple(sorted(bombs, key=lambda bomb: st.window.index(bomb[0])))


def _resolve_window(st: State, events: Events) -> None:
    """R-BOMB-9: the first bomb in window order applies once everyone before it has declined."""
    declined = st.window_declined
    for seat in st.window:
        if declined >> seat & 1:
            continue
        for bomber, play in st.window_bombs:
            if bomber == seat:
                combo = play._combo
                assert combo is not None
                if play.tichu and _call_problem(st, seat) is None:
                    st.calls = _set(st.calls, seat, 1)  # R-CALL-7: the call, then the play
                    if events is not None:
                        events.append(Called(seat, "tichu"))
                _do_play(st, seat, play.cards_mask, combo, play.wish, play.partner, True, events)
                return
        return
    if events is not None:
        events.append(WINDOW_CLOSED)
    st.window = ()
    st.window_declined = 0
    st.window_bombs = ()
    _continue_trick(st, events)


def _close_unanswerable_window(st: State, events: Events) -> None:
    """A window that no seat in it can answer with a bomb: 'decline' is every seat's only
    answer, so it closes as if all had declined (R-BOMB-9), with no answers recorded."""
    st.window = ()
    st.window_declined = 0
    st.window_bombs = ()
    if events is not None:
        events.append(WINDOW_CLOSED)
    if st.top is not None and _trick_complete(st):
        _close_trick(st, events)


def _continue_trick(st: State, events: Events) -> None:
    """The next regular action: the next turn, or collecting the trick (R-TRICK-5..8)."""
    if st.top is not None and _trick_complete(st):
        _close_trick(st, events)


def _close_trick(st: State, events: Events) -> None:
    winner = st.top_seat
    top = st.top
    assert top is not None
    if top.key == _DRAGON_KEY and top.kind == SINGLE:
        recipients = _gift_recipients(st, winner)
        if len(recipients) == 1:
            _give_dragon(st, winner, recipients[0], events)
        else:
            st.gift = winner
            st.turn = NO_SEAT
            st.window = ()
            if events is not None:
                events.append(DragonGiftPending(winner))
        return
    cards = st.table | st.dog_aside
    if st.dog_aside:
        st.dog_aside = 0
        st.dog_owner = NO_SEAT
    st.piles = _set(st.piles, winner, st.piles[winner] | cards)
    if events is not None:
        events.append(TrickWon(winner, cards, mask_points(cards)))
    _reset_trick(st)
    st.turn = winner if st.hands[winner] else next_active(st, winner)  # R-TRICK-8


def _validate_play(st: State, seat: int, play: Play) -> tuple[Combo, bool]:
    """Check a play; return its reading and whether it is an out-of-turn (window) bomb."""
    cards = play.cards_mask
    if not isinstance(cards, int) or cards <= 0:
        raise InvalidActionError("a play names at least one card; to pass, send 'pass'", "R-COMB-1")
    if st.phase is not _PLAY:
        raise IllegalActionError(f"no cards can be played in the {st.phase.value} phase", "R-FLOW-1")
    hand = st.hands[seat]
    if not hand:
        raise IllegalActionError("you are out and take no further part", "R-END-2")
    missing = cards & ~hand
    if missing:
        raise IllegalActionError(f"you do not hold {format_cards(missing)}", "R-INFO-2")
    top = st.top
    readings = classify(cards, top)
    if not readings:
        raise IllegalActionError(f"{format_cards(cards)} is not a valid combination", "R-COMB-1")
    combo = _choose_reading(st, cards, play, readings)
    in_window = False
    if st.gift >= 0:
        raise IllegalActionError("no play is accepted while a Dragon gift is pending", "R-DRG-2")
    if st.window:
        if seat not in st.window:
            raise IllegalActionError("you are not in this bomb window", "R-BOMB-9")
        if st.window_declined >> seat & 1 or any(s == seat for s, _ in st.window_bombs):
            raise IllegalActionError("you have already answered this bomb window", "R-BOMB-9")
        if not combo.is_bomb:
            raise IllegalActionError(
                "a bomb window is open: only a bomb (or 'decline') is accepted; "
                "your regular turn comes after it",
                "R-BOMB-9",
            )
        in_window = True
    elif seat != st.turn:
        if combo.is_bomb:
            if st.config.bomb_timing == "turn_only":
                raise IllegalActionError(
                    "bombs are played only in your own turn (bomb_timing = turn_only)", "R-BOMB-7"
                )
            if st.top is None:
                raise IllegalActionError(
                    "no bomb out of turn before a lead: the leader leads first", "R-BOMB-2"
                )
            raise IllegalActionError(
                f"no bomb during seat {st.turn}'s turn: bomb in a bomb window, or on your own turn",
                "R-BOMB-9",
            )
        raise IllegalActionError(f"it is seat {st.turn}'s turn, not yours", "R-TRICK-3")
    if combo.kind is DOG_KIND:
        if top is not None:
            raise IllegalActionError("the Dog can only be led", "R-DOG-1")
    elif play.partner >= 0:
        raise InvalidActionError("only a Dog play names a partner", "R-V6-5")
    if top is not None:
        if cards == PHX and top.kind == SINGLE and top.key == _DRAGON_KEY:
            raise IllegalActionError("the Phoenix may not be played on the Dragon", "R-PHX-2")
        if not beats(combo, top):
            rule = "R-BEAT-4" if top.is_bomb else ("R-BEAT-2" if combo.is_bomb else "R-BEAT-1")
            raise IllegalActionError(
                f"{combo.describe()} does not beat the {top.describe()} on the table", rule
            )
    if play.wish:
        if not cards & MJ:
            raise InvalidActionError("a wish is made only with a play containing the Mah Jong", "R-WISH-1")
        if not 2 <= play.wish <= 14:
            raise InvalidActionError("the wished rank must be 2..A", "R-WISH-1")
    elif cards & MJ and st.config.wish_mandatory:
        raise IllegalActionError("a play with the Mah Jong must name a wish (wish_mandatory)", "R-WISH-1")
    if combo.kind is DOG_KIND and st.players == 6:
        options = _dog_partner_options(st, seat)
        if play.partner not in options:
            if play.partner < 0:
                raise IllegalActionError("name which active partner leads after your Dog", "R-V6-5")
            raise IllegalActionError(f"the Dog's lead goes to an active partner: one of {options}", "R-V6-5")
    elif combo.kind is DOG_KIND and play.partner >= 0:
        raise InvalidActionError("in the 4-player game the Dog names no partner (R-DOG-2 decides)", "R-DOG-2")
    _check_wish(st, seat, cards, combo, in_window)
    return combo, in_window


def _choose_reading(st: State, cards: int, play: Play, readings: tuple[Combo, ...]) -> Combo:
    """R-PHX-5: the named Phoenix reading, else the highest (or a rejection if so configured)."""
    if play.phoenix:
        if not cards & PHX:
            raise InvalidActionError("phoenix= names a rank only when the Phoenix is in the play", "R-PHX-5")
        if cards == PHX:
            raise InvalidActionError("a Phoenix single takes its value from the table, not a name", "R-PHX-2")
        for reading in readings:
            if reading.phoenix == play.phoenix:
                return reading
        raise IllegalActionError(
            f"the Phoenix cannot stand for {rank_name(play.phoenix)} in {format_cards(cards)}", "R-PHX-5"
        )
    if len(readings) > 1 and st.config.phoenix_ambiguity_default == "reject_if_undeclared":
        options = ", ".join(rank_name(r.phoenix) for r in readings)
        raise IllegalActionError(f"name the Phoenix's rank: phoenix= one of {options}", "R-PHX-5")
    return readings[0]


def _check_wish(st: State, seat: int, cards: int, combo: Combo, in_window: bool) -> None:
    """R-WISH-4/6: a seat that can fulfil must play the wished rank on its regular turn."""
    wish = st.wish
    if not wish or cards & RANK_MASKS[wish]:
        return
    if in_window:
        if (
            st.config.wish_bomb_exemption == "none"
            and seat == _window_bound_seat(st)
            and _can_fulfil(st, seat)
        ):
            raise IllegalActionError(
                f"your turn is next and you can fulfil the wish for {rank_name(wish)}: "
                "a bomb must contain it (wish_bomb_exemption = none)",
                "R-WISH-6",
            )
        return
    if not _can_fulfil(st, seat):
        return
    if st.top is None:
        if combo.is_bomb and st.config.wish_bomb_exemption_on_lead:
            return
        what = "the Dog" if combo.kind is DOG_KIND else format_cards(cards)
        raise IllegalActionError(
            f"you hold a {rank_name(wish)} and must lead a combination containing it, not {what}", "R-WISH-4"
        )
    if combo.is_bomb and st.config.effective_wish_bomb_exemption == "any_nonlead_bomb":
        return
    raise IllegalActionError(
        f"you can fulfil the wish for {rank_name(wish)} and must play a combination containing it",
        "R-WISH-6" if combo.is_bomb else "R-WISH-4",
    )


def _apply_play(state: State, seat: int, play: Play, owned: bool, events: Events) -> State:
    combo = play._combo
    origin = play._origin
    if (
        combo is not None
        and origin is not None
        and origin is state._stamp
        and play._seat == seat
        and not play.tichu
    ):
        in_window = bool(state.window)
    else:
        if play.tichu:
            problem = _call_problem(state, seat)
            if problem is not None:
                raise IllegalActionError(problem[1], problem[0])
        combo, in_window = _validate_play(state, seat, play)
    st = _own(state, owned)
    if play.tichu and not in_window:
        st.calls = _set(st.calls, seat, 1)
        if events is not None:
            events.append(Called(seat, "tichu"))
    if in_window:
        # Recorded, not yet public: it applies once every seat before it has declined. A call
        # it carries is made only if it applies, else the call would reveal a submitted bomb.
        trusted = Play(play.cards_mask, combo.phoenix, 0, -1, play.tichu, combo)
        st.window_bombs = _in_window_order(st, st.window_bombs + ((seat, trusted),))
        _resolve_window(st, events)
        return st
    _do_play(st, seat, play.cards_mask, combo, play.wish, play.partner, False, events)
    return st


def _play_entry(st: State, seat: int, entry: Entry, events: Events) -> None:
    """Play a regular turn's listed entry (legal._turn_options), which needs no validation."""
    if len(entry) == 2:
        _do_play(st, seat, entry[0], COMBOS[entry[1]], 0, -1, False, events)
    else:
        _do_play(st, seat, entry[0], COMBOS[entry[1]], entry[2], entry[3], False, events)


def _do_play(
    st: State, seat: int, cards: int, combo: Combo, wish: int, partner: int, out_of_turn: bool, events: Events
) -> None:
    """Put a validated play on the table (or lead the Dog) and move the game on."""
    hands = st.hands
    left = hands[seat] & ~cards
    st.hands = hands[:seat] + (left,) + hands[seat + 1 :]
    st.played |= 1 << seat
    if combo.kind is DOG_KIND:
        _play_dog(st, seat, partner, events)
        return
    if not cards & MJ:
        wish = 0
    if events is not None:
        events.append(Played(seat, cards, combo, wish, -1, out_of_turn))
    st.trick = st.trick + ((seat, cards, combo),)
    st.table |= cards
    st.top = combo
    st.top_seat = seat
    st.passed = 0
    st.window = ()
    st.window_declined = 0
    st.window_bombs = ()
    if wish:
        if st.config.wish_fulfilled_by_own_mj_play and cards & RANK_MASKS[wish]:
            if events is not None:
                events.append(WishFulfilled(seat, wish))
            st.wish = 0
        else:
            st.wish = wish
    elif st.wish and cards & RANK_MASKS[st.wish]:
        if events is not None:
            events.append(WishFulfilled(seat, st.wish))
        st.wish = 0
    st.turn = _NEXT[st.config.players][seat][st.active]
    if not left and _went_out(st, seat, events):
        return
    _after_action(st, seat, events)


def _play_dog(st: State, seat: int, partner: int, events: Events) -> None:
    """R-DOG-1..5 and R-V6-5: the lead passes; no trick, no window."""
    if events is not None:
        events.append(Played(seat, DOG, DOG_COMBO, 0, partner, False))
    active = st.active if st.hands[seat] else st.active & ~(1 << seat)
    receiver = _dog_receiver(st.players, seat, partner, active)
    owner = _dog_pile(st.config.dog_card_pile, seat, receiver)
    if owner < 0:
        st.dog_aside = DOG
        st.dog_owner = seat
    else:
        st.piles = _set(st.piles, owner, st.piles[owner] | DOG)
    if not st.hands[seat] and _went_out(st, seat, events):
        return
    if events is not None:
        events.append(LeadPassed(seat, receiver))
    st.turn = receiver


# The Dog's two effects below are read from public information only (the seats holding cards,
# the partner named), so a seat's view of the table (observation.advance) derives them the same.


def _dog_receiver(players: int, seat: int, partner: int, active: int) -> int:
    """Who leads after `seat`'s Dog (R-DOG-2/3, R-V6-5), `partner` being the one named (-1: none)
    and `active` the seat bits of the seats that hold cards once the Dog has left the hand."""
    if players == 4:
        receiver = (seat + 2) % 4
        if not active >> receiver & 1:
            receiver = _NEXT[4][receiver][active]  # R-DOG-3
        return receiver
    if partner >= 0:
        return partner
    named = [p for p in partners_of(players, seat) if active >> p & 1]
    return named[0] if named else _NEXT[players][seat][active]  # R-V6-5 fallback


def _dog_pile(mode: str, seat: int, receiver: int) -> int:
    """Whose pile the Dog card joins (R-DOG-4, `dog_card_pile`); -1 while it lies aside."""
    if mode == "next_trick_winner":
        return NO_SEAT
    return receiver if mode == "receiver" and receiver >= 0 else seat


__all__ = ["answer_window", "apply", "apply_all", "new_game"]
