"""The arena's lobby (tichu.v1.Arena/Lobby): where remote bots wait for their games.

A bot's call is its presence: while it is open the bot is in the lobby, ready whenever it holds
no pair; the arena's matchmaker hands it seats through `seat`, and tells it of a change of state
through `notice`. The key travels in the call's metadata only, and is never logged. A second
call with the same key replaces the first (a bot that reconnects).
"""

from __future__ import annotations

import asyncio
import contextlib
from collections.abc import AsyncIterator, Callable
from dataclasses import dataclass, field

import grpc

from referee.arena.keys import MAX_KEY_CHARS
from referee.arena.store import ArenaStore, BotRow, BotState
from referee.log import get_logger
from referee.wire.tichu.v1 import referee_pb2 as pb
from referee.wire.tichu.v1 import referee_pb2_grpc

SERVICE = "tichu.v1.Arena"
MAX_GAMES = 64
# A pair is two games at once: a remote bot that offers N games plays up to N // 2 pairs at once.
GAMES_PER_PAIR = 2
PLAYABLE = (BotState.ACTIVE, BotState.VALIDATING)


@dataclass
class Presence:
    """One bot's open lobby call: what the arena sends it, and its own bound."""

    bot: str
    games: int
    version: str
    outbox: asyncio.Queue[pb.LobbyMessage | None] = field(default_factory=asyncio.Queue)


class Lobby(referee_pb2_grpc.ArenaServicer):
    """The lobby service over the arena's store; `leaderboard` names a bot kind's leaderboard,
    `on_join` is told when a bot comes in."""

    def __init__(
        self,
        store: ArenaStore,
        leaderboard: Callable[[str], str],
        *,
        on_join: Callable[[], None] = lambda: None,
    ) -> None:
        self.store = store
        self.leaderboard = leaderboard
        self.on_join = on_join  # a bot is in the lobby now: the arena may seat it at once
        self.present: dict[str, Presence] = {}
        self._log = get_logger()

    def register(self, server: grpc.aio.Server) -> None:
        """Serve the lobby on `server` (before it starts)."""
        referee_pb2_grpc.add_ArenaServicer_to_server(self, server)  # type: ignore[no-untyped-call]

    def ready(self) -> set[str]:
        """The bots in the lobby (the arena knows which of them hold a pair)."""
        return set(self.present)

    def pairs(self, bot: str) -> int:
        """The pairs a bot in the lobby plays at once (0 if it is not here)."""
        presence = self.present.get(bot)
        return presence.games // GAMES_PER_PAIR if presence is not None else 0

    def seat(self, bot: str, seated: pb.Seated) -> bool:
        """Hand a bot a seat; whether it was in the lobby to take it."""
        presence = self.present.get(bot)
        if presence is None:
            return False
        presence.outbox.put_nowait(pb.LobbyMessage(seated=seated))
        return True

    def notice(self, bot: str, state: str, reason: str) -> None:
        """Tell a bot in the lobby that its state changed (and end its call if it may not play)."""
        presence = self.present.get(bot)
        if presence is None:
            return
        presence.outbox.put_nowait(pb.LobbyMessage(notice=pb.LobbyNotice(state=state, reason=reason)))
        if BotState(state) not in PLAYABLE:
            presence.outbox.put_nowait(None)

    async def Lobby(  # noqa: N802 (the RPC's name)
        self, request: pb.LobbyRequest, context: grpc.aio.ServicerContext
    ) -> AsyncIterator[pb.LobbyMessage]:
        """A bot's presence in the lobby: its welcome, then its seats, until either side ends."""
        bot = await self._authenticate(context)
        if not GAMES_PER_PAIR <= request.games <= MAX_GAMES:
            await context.abort(
                grpc.StatusCode.INVALID_ARGUMENT,
                f"LobbyRequest.games is {GAMES_PER_PAIR} to {MAX_GAMES} (a pair is two games at once), "
                f"not {request.games}",
            )
        if len(request.bot_version) > 64:
            await context.abort(
                grpc.StatusCode.INVALID_ARGUMENT, "LobbyRequest.bot_version is 64 characters at most"
            )
        granted = request.games // GAMES_PER_PAIR * GAMES_PER_PAIR  # whole pairs
        presence = Presence(bot.name, granted, request.bot_version)
        previous = self.present.get(bot.name)
        if previous is not None:
            previous.outbox.put_nowait(None)  # the same bot again: the newer call is the one
        self.present[bot.name] = presence
        self.on_join()
        self._log.info("lobby_joined", bot=bot.name, games=request.games)
        try:
            yield pb.LobbyMessage(
                welcome=pb.LobbyWelcome(
                    bot=bot.name,
                    leaderboard=self.leaderboard(bot.kind),
                    state=bot.state.value,
                    reason=bot.reason,
                    games=presence.games,
                )
            )
            while (message := await presence.outbox.get()) is not None:
                yield message
        finally:
            if self.present.get(bot.name) is presence:
                del self.present[bot.name]
            self._log.info("lobby_left", bot=bot.name)

    async def _authenticate(self, context: grpc.aio.ServicerContext) -> BotRow:
        key = ""
        for name, value in context.invocation_metadata() or ():
            if name == "authorization" and isinstance(value, str) and value.startswith("Bearer "):
                key = value.removeprefix("Bearer ").strip()
        if not key or len(key) > MAX_KEY_CHARS:
            await context.abort(
                grpc.StatusCode.UNAUTHENTICATED,
                "give the bot's key in the metadata: authorization: Bearer KEY (tichu arena bot add)",
            )
        bot = self.store.authenticate(key)
        if bot is None:
            await context.abort(
                grpc.StatusCode.UNAUTHENTICATED, "not a key of this arena (or its bot is disabled)"
            )
        assert bot is not None
        if bot.hosted:
            await context.abort(
                grpc.StatusCode.FAILED_PRECONDITION,
                f"{bot.name} is hosted: the arena runs it itself (its key is its owner's, not a lobby's)",
            )
        if bot.state not in PLAYABLE:
            await context.abort(
                grpc.StatusCode.PERMISSION_DENIED,
                f"{bot.name} is {bot.state.value}" + (f": {bot.reason}" if bot.reason else ""),
            )
        return bot

    async def close(self) -> None:
        """End every bot's call (the arena is stopping)."""
        for presence in list(self.present.values()):
            presence.outbox.put_nowait(None)
        with contextlib.suppress(Exception):
            await asyncio.sleep(0)


__all__ = ["GAMES_PER_PAIR", "MAX_GAMES", "SERVICE", "Lobby", "Presence"]
