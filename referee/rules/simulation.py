"""Simulation: the public API for bots that search (Monte Carlo playouts, determinised rollouts).

apply() returns a new immutable State for every action, with its events, and every legal answer
is an Action object; a search that plays thousands of hands a second pays for all of that. A
Simulation plays on one working copy instead, and names each legal answer by its index in
legal_decisions(): `count(seat)` answers, `choose(seat, index)` applies one. What is listed and
applied is what legal_decisions() lists and apply() applies, by the same rule code, so nothing
illegal can be chosen (tests/rules/test_simulation.py holds the two to the same states and
events). The caller's State is never changed; `state` gives an immutable copy at any point.
"""

from __future__ import annotations

from collections.abc import Mapping, Sequence
from typing import Final

from referee.rules.actions import DECLINE, Action, CallTichu, Play
from referee.rules.combos import COMBOS, has_bomb
from referee.rules.errors import IllegalActionError, InvalidActionError
from referee.rules.events import Event
from referee.rules.game import (
    _close_unanswerable_window,
    _dispatch,
    _in_window_order,
    _perform_pass,
    _play_entry,
    _resolve_window,
)
from referee.rules.legal import Entry, _legal_decisions, _owes_window, _turn_options, _window_bombs, to_act
from referee.rules.state import _GAME_OVER, _PLAY, Phase, State

_DECLINE_ONLY_COUNT: Final = 1


class Simulation:
    """A game played on in place, each legal answer named by its index in legal_decisions()."""

    __slots__ = ("_entries", "_prefix", "_seat", "_st", "events", "take_forced_declines")

    def __init__(self, state: State, record_events: bool = False, take_forced_declines: bool = False) -> None:
        """Start from a copy of `state`.

        `record_events`: append every event to `events`, as apply() returns them.
        `take_forced_declines`: close at once a bomb window in which no seat holds a bomb, as
        if every seat had declined (its only answer, R-BOMB-9); to_act() then never shows it.
        """
        self._st = state.copy()
        self.events: list[Event] | None = [] if record_events else None
        self.take_forced_declines = take_forced_declines
        self._seat = -1  # the seat whose regular-turn answers are held in _prefix and _entries
        self._prefix: tuple[Action, ...] = ()
        self._entries: Sequence[Entry] = ()
        self._close_forced_window()

    @property
    def state(self) -> State:
        """The game now, as an immutable State (a copy: later choices do not change it)."""
        return self._st.copy()

    @property
    def phase(self) -> Phase:
        """The current phase."""
        return self._st.phase

    @property
    def round(self) -> int:
        """The current round number (0-based)."""
        return self._st.round

    @property
    def is_over(self) -> bool:
        """True once the game has ended."""
        return self._st.phase is _GAME_OVER

    @property
    def window(self) -> tuple[int, ...]:
        """The seats of the open bomb window in window order, () if none."""
        return self._st.window

    def to_act(self) -> tuple[int, ...]:
        """The seats that owe a decision now, as rules.to_act() gives them."""
        return to_act(self._st)

    def count(self, seat: int) -> int:
        """How many legal answers `seat` has now: len(legal_decisions(state, seat))."""
        st = self._st
        if st.phase is _PLAY and st.gift < 0:
            if st.window:
                if not _owes_window(st, seat):
                    return 0
                if not has_bomb(st.hands[seat]):
                    return _DECLINE_ONLY_COUNT
                return 1 + len(_window_bombs(st, seat))
            if seat == st.turn:
                return len(self._turn(seat)[0]) + len(self._entries)
            return 0
        return len(self._listed(seat))

    def decision(self, seat: int, index: int) -> Action:
        """The answer `choose(seat, index)` applies: legal_decisions(state, seat)[index]."""
        st = self._st
        self._check(seat, index)
        if st.phase is _PLAY and st.gift < 0:
            if st.window:
                if index == 0:
                    return DECLINE
                cards, code = _window_bombs(st, seat)[index - 1]
                combo = COMBOS[code]
                return Play(cards, combo.phoenix, 0, -1, False, combo)
            prefix, entries = self._turn(seat)
            if index < len(prefix):
                return prefix[index]
            entry = entries[index - len(prefix)]
            combo = COMBOS[entry[1]]
            if len(entry) == 2:
                return Play(entry[0], combo.phoenix, 0, -1, False, combo)
            return Play(entry[0], combo.phoenix, entry[2], entry[3], False, combo)
        return self._listed(seat)[index]

    def choose(self, seat: int, index: int) -> None:
        """Apply `seat`'s answer number `index` (in legal_decisions order), as apply() would."""
        st = self._st
        self._check(seat, index)
        events = self.events
        if st.phase is _PLAY and st.gift < 0:
            if st.window:
                self.answer_window({seat: index})
                return
            prefix, entries = self._turn(seat)
            self._seat = -1
            if index < len(prefix):
                _perform_pass(st, seat, events)
            else:
                _play_entry(st, seat, entries[index - len(prefix)], events)
            st._legal = None
            st._stamp = None
            self._close_forced_window()
            return
        action = self._listed(seat)[index]
        self._seat = -1
        self._st = _dispatch(st, seat, action, True, events)
        self._close_forced_window()

    def answer_window(self, answers: Mapping[int, int]) -> None:
        """Answer the open bomb window for several seats at once, as rules.answer_window().

        `answers` maps a seat to the index of its answer: 0 declines, i > 0 plays its i-th bomb.
        """
        st = self._st
        if not st.window:
            raise IllegalActionError("there is no bomb window open", "R-BOMB-9")
        declined = st.window_declined
        recorded: list[tuple[int, Play]] = []
        for seat, index in answers.items():
            self._check(seat, index)
            if index == 0:
                declined |= 1 << seat
            else:
                cards, code = _window_bombs(st, seat)[index - 1]
                combo = COMBOS[code]
                recorded.append((seat, Play(cards, combo.phoenix, 0, -1, False, combo)))
        st.window_declined = declined
        if recorded:
            st.window_bombs = _in_window_order(st, st.window_bombs + tuple(recorded))
        self._seat = -1
        _resolve_window(st, self.events)
        st._legal = None
        st._stamp = None
        self._close_forced_window()

    def call_tichu(self, seat: int) -> None:
        """Call Tichu for `seat` (R-CALL-1), or raise IllegalActionError as apply() does."""
        self._seat = -1
        self._st = _dispatch(self._st, seat, CallTichu(), True, self.events)

    def _check(self, seat: int, index: int) -> None:
        count = self.count(seat) if type(seat) is int else 0
        if not count:
            raise IllegalActionError(f"seat {seat!r} owes no decision now", "R-FLOW-1")
        if type(index) is not int or not 0 <= index < count:
            raise InvalidActionError(f"seat {seat} has {count} legal answers (0..{count - 1}), not {index!r}")

    def _turn(self, seat: int) -> tuple[tuple[Action, ...], Sequence[Entry]]:
        if self._seat != seat:
            self._prefix, self._entries = _turn_options(self._st, seat)
            self._seat = seat
        return self._prefix, self._entries

    def _listed(self, seat: int) -> Sequence[Action]:
        st = self._st
        cache = st._legal
        if cache is None:
            cache = st._legal = {}
        found = cache.get(seat)
        if found is None:
            found = cache[seat] = _legal_decisions(st, seat)
        return found

    def _close_forced_window(self) -> None:
        # Every seat still owed declines: a bomb answered earlier then applies (and opens the
        # next window, which is looked at in turn), or the window closes as rules.apply() would.
        st = self._st
        while self.take_forced_declines and st.window and st.phase is _PLAY and st.gift < 0:
            hands = st.hands
            owed = [seat for seat in st.window if _owes_window(st, seat)]
            if any(has_bomb(hands[seat]) for seat in owed):
                return
            if not st.window_declined and not st.window_bombs:
                _close_unanswerable_window(st, self.events)
                return
            for seat in owed:
                st.window_declined |= 1 << seat
            _resolve_window(st, self.events)


__all__ = ["Simulation"]
