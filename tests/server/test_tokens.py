"""Seat tokens: none handed out begins with '-', and the older '-' form still opens its seat."""

from __future__ import annotations

import re

import grpc

from referee.server.service import RefereeService
from tests.server.support import Bot, referee, run
from tests.server.test_auth import hello, refused

BASE64URL = re.compile(r"[A-Za-z0-9_-]{32}")


def legacy_token(service: RefereeService, match_id: str, seat: int) -> str:
    """The form referees handed out before tokens avoided a leading '-' (tokens now come from the
    server's seat secret, referee.server.tokens; the '-' form of each still opens its seat)."""
    return service.referee.tokens.unescaped(match_id, seat)


def dashed_match_id(service: RefereeService) -> str:
    """A match id whose seat 0 has a token beginning with '-' (one in 64 do)."""
    return next(f"dash-{i}" for i in range(10_000) if legacy_token(service, f"dash-{i}", 0).startswith("-"))


def test_no_token_handed_out_begins_with_a_dash_and_the_old_form_is_kept() -> None:
    async def scenario() -> None:
        async with referee() as ref:
            assert ref.server is not None
            service = ref.server.service
            dashed = 0
            for i in range(1000):
                for seat in range(4):
                    old = legacy_token(service, f"m{i}", seat)
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
            assert ref.server is not None
            match_id = dashed_match_id(ref.server.service)
            old = legacy_token(ref.server.service, match_id, 0)
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
            match_id = dashed_match_id(ref.server.service)
            table, tokens = ref.create_here(match_id=match_id)
            await table.stop("the test ends it")
            assert ref.server.service.forget(match_id)
            for token in (tokens[0], legacy_token(ref.server.service, match_id, 0)):
                error = await refused(ref, hello(token))
                assert (error.code(), error.details()) == (
                    grpc.StatusCode.UNAUTHENTICATED,
                    "unknown seat token",
                )

    run(scenario())
