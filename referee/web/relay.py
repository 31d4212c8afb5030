"""The seat relay: a browser's WebSocket <-> the referee's ordinary Play stream for that seat.

The web server is one more client of the referee: for each page it opens a gRPC Play stream
with the seat token the page was handed (in its link's fragment, which no request carries), so
the referee has no second path and a person is checked exactly as a bot is. A reloaded page
opens a new stream with the same token: the referee's reconnect, within its grace. What the
messages mean is referee/web/seat.py's; this module only carries them, with bounds: each
page message's size, messages per second, and pages open at once from one address.
"""

from __future__ import annotations

import asyncio
import contextlib
import json
import time
from collections import Counter
from collections.abc import AsyncIterator, Callable
from typing import Any

import grpc
from starlette.routing import BaseRoute, WebSocketRoute
from starlette.websockets import WebSocket, WebSocketDisconnect, WebSocketState

from referee.log import get_logger
from referee.web.seat import MAX_PAGE_MESSAGE_BYTES, PageMessageError, SeatView, parse_hello
from referee.wire.tichu.v1 import referee_pb2 as pb
from referee.wire.tichu.v1 import referee_pb2_grpc

# Pages open at once from one address (a person has a tab or two; a table of four on one machine).
MAX_PAGES_PER_CLIENT = 8
# A person clicks a few times a second at most; a page past this is closed.
MAX_MESSAGES_PER_S = 20
HELLO_TIMEOUT_S = 10.0
# A reloaded page can reach the referee before it has seen the old stream go: it says the seat
# is still connected. The relay tries again for this long.
RECONNECT_RETRY_S = 5.0
RETRY_PAUSE_S = 0.25
# WebSocket close codes (RFC 6455): policy violation, message too big, normal. The page tries
# again after CLOSE_AGAIN (the seat's stream ended: a referee restarting, a network cut) and after
# a connection simply lost, never after the others: a refused seat stays refused however often
# it asks. CLOSE_REFUSED is in the range RFC 6455 leaves to applications.
CLOSE_POLICY, CLOSE_TOO_BIG, CLOSE_NORMAL, CLOSE_AGAIN, CLOSE_REFUSED = 1008, 1009, 1000, 1011, 4001
SEAT_PAGE_PATH = "/seat"
SEAT_SOCKET_PATH = "/seat/socket"

ChannelFactory = Callable[[], grpc.aio.Channel]


def seat_url(base: str, token: str) -> str:
    """The link a person is handed: the seat page, with the seat token after '#' (a fragment,
    which the browser sends in no request and no Referer: no server log or other page sees it)."""
    return f"{base.rstrip('/')}{SEAT_PAGE_PATH}#{token}"


class _RefusedError(Exception):
    """The referee ended the stream before its Welcome."""

    def __init__(self, code: grpc.StatusCode, details: str) -> None:
        super().__init__(details)
        self.code = code
        self.details = details


class SeatRelay:
    """Relays pages to the referee at `target` (host:port, plaintext: a referee's loopback port),
    or through the channels `channel` makes (for TLS)."""

    def __init__(
        self,
        target: str = "",
        *,
        channel: ChannelFactory | None = None,
        max_pages_per_client: int = MAX_PAGES_PER_CLIENT,
        max_messages_per_s: float = MAX_MESSAGES_PER_S,
    ) -> None:
        if not target and channel is None:
            raise ValueError("give the referee's address or a channel factory")
        self._make_channel: ChannelFactory = channel or (lambda: grpc.aio.insecure_channel(target))
        self._channel: grpc.aio.Channel | None = None
        self.max_pages_per_client = max_pages_per_client
        self.max_messages_per_s = max_messages_per_s
        self.pages: Counter[str] = Counter()
        self._log = get_logger()

    def routes(self) -> list[BaseRoute]:
        """The relay's WebSocket route, for the web application."""
        return [WebSocketRoute(SEAT_SOCKET_PATH, self.handle)]

    async def close(self) -> None:
        """Close the channel to the referee (the pages' streams end with it)."""
        if self._channel is not None:
            await self._channel.close()
            self._channel = None

    def _stub(self) -> Any:
        if self._channel is None:
            self._channel = self._make_channel()
        return referee_pb2_grpc.RefereeStub(self._channel)  # type: ignore[no-untyped-call]

    async def handle(self, websocket: WebSocket) -> None:
        """One page: its hello, then messages both ways until the match ends or either side goes."""
        client = websocket.client.host if websocket.client is not None else "?"
        await websocket.accept()
        if self.pages[client] >= self.max_pages_per_client:
            await _fail(
                websocket, f"too many seat pages open from this address (at most {self.max_pages_per_client})"
            )
            return
        self.pages[client] += 1
        try:
            await self._relay(websocket)
        except WebSocketDisconnect:
            pass
        finally:
            self.pages[client] -= 1
            if not self.pages[client]:
                del self.pages[client]

    async def _relay(self, websocket: WebSocket) -> None:
        try:
            first = await asyncio.wait_for(websocket.receive_text(), HELLO_TIMEOUT_S)
            token = parse_hello(first)
        except TimeoutError:
            await _fail(websocket, "no hello within 10 s")
            return
        except PageMessageError as error:
            await _fail(websocket, str(error), CLOSE_REFUSED)
            return
        view = SeatView()
        deadline = time.monotonic() + RECONNECT_RETRY_S
        while True:
            try:
                await self._play(websocket, view, token)
                return
            except _RefusedError as refused:
                retry = (
                    refused.code is grpc.StatusCode.UNAUTHENTICATED and "already connected" in refused.details
                )
                if retry and time.monotonic() < deadline:
                    await asyncio.sleep(RETRY_PAUSE_S)
                    continue
                self._log.info("seat_page_refused", code=refused.code.name, why=refused.details)
                await _fail(websocket, f"the referee refused the seat: {refused.details}", CLOSE_REFUSED)
                return

    async def _play(self, websocket: WebSocket, view: SeatView, token: str) -> None:
        """One Play stream for the page; _RefusedError if the referee refuses it before its Welcome."""
        outbox: asyncio.Queue[pb.BotMessage | None] = asyncio.Queue()
        outbox.put_nowait(SeatView.hello(token))

        async def outgoing() -> AsyncIterator[pb.BotMessage]:
            while (message := await outbox.get()) is not None:
                yield message

        call = self._stub().Play(outgoing())
        from_page = asyncio.create_task(self._from_page(websocket, view, outbox))
        from_referee = asyncio.create_task(self._from_referee(call, websocket, view, outbox))
        try:
            done, _ = await asyncio.wait({from_page, from_referee}, return_when=asyncio.FIRST_COMPLETED)
        finally:
            # Either side gone ends the other: a page that went leaves its seat away (the
            # referee's grace runs), and a stream that ended closes the page.
            call.cancel()
            outbox.put_nowait(None)
            for task in (from_page, from_referee):
                task.cancel()
                with contextlib.suppress(asyncio.CancelledError, WebSocketDisconnect):
                    await task
        if from_referee in done and from_referee.exception() is not None:
            raise from_referee.exception()  # type: ignore[misc]

    async def _from_referee(
        self, call: Any, websocket: WebSocket, view: SeatView, outbox: asyncio.Queue[pb.BotMessage | None]
    ) -> None:
        """Forward the referee's messages, as the page's, until the result or the stream's end."""
        try:
            async for envelope in call:
                step = view.from_referee(envelope)
                for message in step.referee:
                    outbox.put_nowait(message)
                for item in step.page:
                    await websocket.send_text(json.dumps(item, separators=(",", ":")))
                if step.finished:
                    await websocket.close(CLOSE_NORMAL)
                    return
        except grpc.aio.AioRpcError as error:
            if not view.welcomed:
                raise _RefusedError(error.code(), error.details() or "") from None
            await _fail(websocket, f"the referee ended the seat's stream: {error.details()}", CLOSE_AGAIN)
            return
        await _fail(websocket, "the referee ended the seat's stream", CLOSE_AGAIN)

    async def _from_page(
        self, websocket: WebSocket, view: SeatView, outbox: asyncio.Queue[pb.BotMessage | None]
    ) -> None:
        """Forward the page's messages until it goes (then the stream ends: the seat is away)."""
        window_start, count = time.monotonic(), 0
        try:
            while True:
                text = await websocket.receive_text()
                now = time.monotonic()
                if now - window_start >= 1.0:
                    window_start, count = now, 0
                count += 1
                if count > self.max_messages_per_s:
                    await _fail(websocket, "too many messages: at most 20 a second", CLOSE_POLICY)
                    break
                if len(text) > MAX_PAGE_MESSAGE_BYTES:
                    await _fail(
                        websocket, f"a message is at most {MAX_PAGE_MESSAGE_BYTES} bytes", CLOSE_TOO_BIG
                    )
                    break
                try:
                    step = view.from_page(text)
                except PageMessageError as error:
                    await websocket.send_text(json.dumps({"type": "error", "message": str(error)}))
                    continue
                for message in step.referee:
                    outbox.put_nowait(message)
                for item in step.page:
                    await websocket.send_text(json.dumps(item, separators=(",", ":")))
        except WebSocketDisconnect:
            pass


async def _fail(websocket: WebSocket, message: str, code: int = CLOSE_POLICY) -> None:
    """Tell the page why, in words, and close its socket."""
    if websocket.application_state is WebSocketState.CONNECTED:
        with contextlib.suppress(Exception):
            await websocket.send_text(json.dumps({"type": "error", "message": message}))
            await websocket.close(code)


__all__ = ["SEAT_PAGE_PATH", "SEAT_SOCKET_PATH", "SeatRelay", "seat_url"]
