"""A request's legal actions as the wire lists them, each parsed only when a bot reads it.

A lead request lists hundreds of plays and a bot sends one of them: parsing them all was most of
what the SDK did per request. ListedActions is the Sequence[Action] that Observation's
legal_decisions always was, with `find`, which the SDK's check of an answer uses to look an
action up by its canonical text (the wire's `text`, "set on every action the referee sends")
rather than parse the whole list.
"""

from __future__ import annotations

from collections.abc import Callable, Iterator, Sequence
from typing import Generic, Protocol, TypeVar, cast, overload

from referee.rules import Action


class Wired(Protocol):
    """A listed action in its wire form: what `text` the SDK reads of it (the canonical string)."""

    @property
    def text(self) -> str:
        """str() of the action, as the referee sends it."""
        ...


W = TypeVar("W", bound=Wired)


class ListedActions(Sequence[Action], Generic[W]):
    """The actions `wired` lists, each parsed by `parse` on its first read by index, or all at
    once on the first iteration, and kept (the same object on every read); equal to any sequence
    of the same actions, as the tuple it replaces was."""

    __slots__ = ("_all", "_found", "_parse", "_parsed", "_wired")

    def __init__(self, wired: Sequence[W], parse: Callable[[W], Action]) -> None:
        self._wired = wired
        self._parse = parse
        self._parsed: list[Action | None] = [None] * len(wired)
        self._all = False  # every action parsed (a bot that read the whole list)
        self._found: dict[object, int] = {}  # each action read by index: its first place

    def __len__(self) -> int:
        return len(self._parsed)

    @overload
    def __getitem__(self, index: int) -> Action: ...

    @overload
    def __getitem__(self, index: slice) -> Sequence[Action]: ...

    def __getitem__(self, index: int | slice) -> Action | Sequence[Action]:
        if isinstance(index, slice):
            return [self[i] for i in range(*index.indices(len(self)))]
        size = len(self._parsed)
        if index < 0:
            index += size
        if not 0 <= index < size:
            raise IndexError(index)
        action = self._parsed[index]
        if action is None:
            action = self._parsed[index] = self._parse(self._wired[index])
            self._found.setdefault(action, index)
        return action

    def __iter__(self) -> Iterator[Action]:
        if not self._all:
            # In one pass, as the tuple was made: a bot that reads one action reads it by index,
            # one that iterates mostly reads them all.
            parse, parsed = self._parse, self._parsed
            self._parsed = [parse(w) if a is None else a for w, a in zip(self._wired, parsed, strict=True)]
            self._all = True
        return iter(cast("list[Action]", self._parsed))  # no None left in it

    def __contains__(self, action: object) -> bool:
        return self.find(action) is not None

    def find(self, action: object) -> Action | None:
        """The listed action equal to `action` (the listing's own object), or None.

        Only the action whose text is str(action) is parsed (and checked equal): equal actions
        have the same canonical string, and the referee sends each action's as its text.
        """
        if self._all:
            return next((a for a in self._parsed if a == action), None)
        try:
            place = self._found.get(action)  # the bot's answer is mostly the action it read
            text = str(action) if place is None else ""
        except Exception:
            # An answer that cannot be hashed or shown (a Play of a list...): compared with
            # each listed action, as before, it matches none of them.
            return next((a for a in self if a == action), None)
        if place is not None:
            return self._parsed[place]
        for i, wired in enumerate(self._wired):
            if wired.text == text:
                listed = self[i]
                if listed == action:
                    return listed
        if any(not wired.text for wired in self._wired):
            # A referee that left a text out: only parsing them all tells.
            return next((a for a in self if a == action), None)
        return None

    def __eq__(self, other: object) -> bool:
        if isinstance(other, Sequence) and not isinstance(other, str):
            return len(self) == len(other) and tuple(self) == tuple(other)
        return NotImplemented

    __hash__ = None  # type: ignore[assignment]

    def __repr__(self) -> str:
        return f"ListedActions({[w.text for w in self._wired]!r})"
