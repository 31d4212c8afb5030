"""Seat tokens: none handed out begins with '-', and the older '-' form still opens its seat."""

from __future__ import annotations

import base64
import hashlib
import hmac
import re

import grpc

from tests.server.support import ORGANISER, Bot, referee, run
from tests.server.test_auth import hello, refused

BASE64URL = re.compile(r"[A-Za-z0-9_-]{32}")


def legacy_token(match_id: str, seat: int) -> str:
    """The token referees handed out before tokens avoided a leading '-' (written out here, so
    that a change to the derivation cannot pass unnoticed: resumed matches depend on it)."""
    digest = hmac.new(ORGANISER.encode(), f"tichu-seat/{match_id}/{seat}".encode(), hashlib.sha256)
    return base64.urlsafe_b64encode(digest.digest()[:24]).decode()


def dashed_match_id() -> str:
    """A match id whose seat 0 had a token beginning with '-' (one in 64 do)."""
    return next(f"dash-{i}" for i in range(10_000) if legacy_token(f"dash-{i}", 0).startswith("-"))


def test_no_token_handed_out_begins_with_a_dash_and_the_old_form_is_kept() -> None:
    async def scenario() -> None:
        async with referee() as ref:
            assert ref.server is not None
            service = ref.server.service
            dashed = 0
            for i in range(1000):
                for seat in range(4):
                    old = legacy_token(f"m{i}", seat)
                    tokens = service.seat_tokens(f"m{i}", seat)
                    assert service.seat_token(f"m{i}", seat) == tokens[0]
                    assert BASE64URL.fullmatch(tokens[0]) and not tokens[0].startswith("-")
                    if old.startswith("-"):
                        dashed += 1
                        assert tokens == ("_" + old[1:], old)
                    else:
                        assert tokens == (old,)
            assert dashed > 20  # about 62 expected: the '-' case was exercised

    run(scenario())


def test_a_token_in_its_old_dashed_form_still_opens_its_seat() -> None:
    async def scenario() -> None:
        async with referee() as ref:
            match_id = dashed_match_id()
            old = legacy_token(match_id, 0)
            response = await ref.create(match_id=match_id, seed="5")
            assert response.seat_tokens[0] == "_" + old[1:]
            bot = Bot(ref, old)
            await bot.open()
            welcome = await bot.until(lambda m: m.HasField("welcome"))
            assert welcome.welcome.seat == 0 and welcome.welcome.match_id == match_id
            # Both forms name the same seat: the new one is refused while the old one holds it.
            error = await refused(ref, hello(response.seat_tokens[0]))
            assert error.code() == grpc.StatusCode.UNAUTHENTICATED
            assert "already connected" in (error.details() or "")
            assert (await refused(ref, hello("_" + old))).code() == grpc.StatusCode.UNAUTHENTICATED

    run(scenario())


def test_a_forgotten_match_forgets_both_forms_of_its_tokens() -> None:
    async def scenario() -> None:
        async with referee() as ref:
            assert ref.server is not None
            match_id = dashed_match_id()
            table, tokens = ref.create_here(match_id=match_id)
            await table.stop("the test ends it")
            assert ref.server.service.forget(match_id)
            for token in (tokens[0], legacy_token(match_id, 0)):
                error = await refused(ref, hello(token))
                assert (error.code(), error.details()) == (
                    grpc.StatusCode.UNAUTHENTICATED,
                    "unknown seat token",
                )

    run(scenario())
