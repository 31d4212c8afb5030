"""A referee with its web face, running in an event loop of its own thread, for tests whose
browser (Playwright's sync API) runs in the test's thread."""

from __future__ import annotations

import asyncio
import threading
from collections.abc import Callable, Coroutine, Iterator
from concurrent.futures import Future
from contextlib import contextmanager
from typing import Any, TypeVar

from referee.server.front import Referee as Front
from referee.web.app import RunningWeb, start_web
from tests.server.support import Referee, referee

T = TypeVar("T")


class LiveReferee:
    """The referee (`ref`, as tests/server/support makes it), its front door and its web face."""

    def __init__(self, loop: asyncio.AbstractEventLoop, ref: Referee, web: RunningWeb) -> None:
        self.loop = loop
        self.ref = ref
        self.web = web
        self.url = web.url
        assert ref.server is not None
        self.front: Front = ref.server.service.referee

    def run(self, coro: Coroutine[Any, Any, T], timeout_s: float = 300.0) -> T:
        """Run a coroutine in the referee's loop and wait for its value."""
        return asyncio.run_coroutine_threadsafe(coro, self.loop).result(timeout_s)

    def start(self, coro: Coroutine[Any, Any, T]) -> Future[T]:
        """Start a coroutine in the referee's loop; its future."""
        return asyncio.run_coroutine_threadsafe(coro, self.loop)

    def call(self, function: Callable[[], T]) -> T:
        """Call a function in the referee's loop (the front door is not thread-safe)."""

        async def inside() -> T:
            return function()

        return self.run(inside())


@contextmanager
def live_referee() -> Iterator[LiveReferee]:
    """A referee and its web face on free local ports, stopped at the end."""
    ready: Future[LiveReferee] = Future()
    stopping: list[asyncio.Event] = []

    async def body() -> None:
        stop = asyncio.Event()
        stopping.append(stop)
        async with referee() as ref:
            assert ref.server is not None
            web = await start_web(ref.server.service.referee)
            ready.set_result(LiveReferee(asyncio.get_running_loop(), ref, web))
            await stop.wait()
            await web.stop()

    def thread_main() -> None:
        try:
            asyncio.run(body())
        except BaseException as error:
            if not ready.done():
                ready.set_exception(error)
            raise

    thread = threading.Thread(target=thread_main, name="live-referee", daemon=True)
    thread.start()
    live = ready.result(60)
    try:
        yield live
    finally:
        live.loop.call_soon_threadsafe(stopping[0].set)
        thread.join(60)
