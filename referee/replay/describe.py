"""Events in words: one line per event JSON, shared by `tichu replay show` and the HTML viewer."""

from __future__ import annotations

import json
from collections.abc import Callable
from typing import Any

PLACES = {1: "1st", 2: "2nd", 3: "3rd"}


def seat_label(seat: int) -> str:
    """`seat N`: how a seat is named when no bot name is at hand."""
    return f"seat {seat}"


def describe_event(event: dict[str, Any], name: Callable[[int], str] = seat_label) -> str:
    """One line for an event's JSON form, e.g. `seat 1 plays 3j 3s 3t 5s 5t  [full house]`.

    `name` names a seat (e.g. with its bot's name); an unknown event type is shown as its JSON.
    """
    kind = event.get("type", "?")
    seat = name(int(event["seat"])) if isinstance(event.get("seat"), int) else ""
    if kind == "round_started":
        return f"round {event['round'] + 1} starts, dealer {name(int(event['dealer']))}"
    if kind == "cards_dealt":
        verb = "is dealt the rest" if event.get("stage") == "rest" else "is dealt"
        return f"{seat} {verb}: {event['cards']}"
    if kind in ("called", "call_declined"):
        call = "GRAND TICHU" if event["call"] == "grand_tichu" else "TICHU"
        return f"{seat} calls {call}" if kind == "called" else f"{seat} does not call {call.title()}"
    if kind == "exchange_submitted":
        return f"{seat} gives " + ", ".join(f"{card} to seat {to}" for to, card in event["gifts"])
    if kind == "cards_received":
        return f"{seat} receives " + ", ".join(f"{card} from seat {frm}" for frm, card in event["received"])
    if kind == "exchange_completed":
        return "the exchange is complete"
    if kind == "played":
        return _played(event, seat)
    if kind == "passed":
        return f"{seat} passes"
    if kind == "window_closed":
        return "the bomb window closes"
    if kind == "wish_fulfilled":
        return f"the wish for {event['rank']} is fulfilled by {seat}"
    if kind == "lead_passed":
        return f"the lead passes from seat {event['seat']} to seat {event['to']}"
    if kind == "trick_won":
        return f"-> {seat} takes the trick ({event['points']} points)"
    if kind == "dragon_gift_pending":
        return f"{seat} must give the Dragon trick away"
    if kind == "dragon_given":
        return f"-> the Dragon trick ({event['points']} points) goes to {name(int(event['to']))}"
    if kind == "went_out":
        place = int(event["place"])
        return f"{seat} is out, {PLACES.get(place, f'{place}th')}"
    if kind == "round_ended":
        return f"Round over ({str(event['reason']).replace('_', ' ')}); out in order: {event['out']}"
    if kind == "round_scored":
        points = event["round_points"]
        totals = event["totals"]
        scored = f"A {points[0]:+d}, B {points[1]:+d}"
        return f"round {event['round'] + 1} scored: {scored}; totals A {totals[0]}, B {totals[1]}"
    if kind == "game_over":
        winner = event.get("winner")
        who = "a draw" if winner is None else f"team {'AB'[int(winner)]} wins"
        return f"Game over: {who} (A {event['totals'][0]}, B {event['totals'][1]})"
    return json.dumps(event, separators=(",", ":"))


def _played(event: dict[str, Any], seat: str) -> str:
    combo = event.get("combo") or {}
    what = str(combo.get("bomb") or combo.get("kind") or "?").replace("_", " ")
    extras = []
    if combo.get("phoenix"):
        extras.append(f"phoenix as {combo['phoenix']}")
    if event.get("wish"):
        extras.append(f"wishes for {event['wish']}")
    if event.get("partner") is not None:
        extras.append(f"the Dog passes the lead to seat {event['partner']}")
    if event.get("out_of_turn"):
        verb = "BOMBS out of turn with"
    else:
        verb = "BOMBS with" if "bomb" in combo else "plays"
    tail = f" ({'; '.join(extras)})" if extras else ""
    return f"{seat} {verb} {event['cards']}  [{what}]{tail}"
