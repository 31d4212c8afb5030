"""The web face's signed-in sessions: who holds one, expiry, the bound on how many, sign-out."""

from __future__ import annotations

from referee.web.app import MAX_SESSIONS, SESSION_TTL_S, Sessions


def test_a_session_names_who_signed_in_until_it_expires_or_is_closed() -> None:
    clock = [100.0]
    sessions = Sessions(now=lambda: clock[0])
    organiser, owner = sessions.open("organiser"), sessions.open("bot-a")
    assert organiser != owner
    assert (sessions.holder(organiser), sessions.holder(owner)) == ("organiser", "bot-a")
    assert sessions.holder(None) is None and sessions.holder("") is None and sessions.holder("forged") is None
    sessions.close(owner)
    assert sessions.holder(owner) is None and sessions.holder(organiser) == "organiser"
    clock[0] += SESSION_TTL_S
    assert sessions.holder(organiser) is None


def test_past_the_bound_the_oldest_session_goes_first() -> None:
    sessions = Sessions(now=lambda: 0.0)
    first = sessions.open("a")
    second = sessions.open("b")
    for _ in range(MAX_SESSIONS - 2):
        sessions.open("c")
    assert sessions.holder(first) == "a"
    sessions.open("d")
    assert sessions.holder(first) is None and sessions.holder(second) == "b"
