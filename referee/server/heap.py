"""How a referee process's garbage collector runs: start-up's heap frozen, full collections rare.

CPython's cyclic collector pauses the whole process while it walks a generation; a full
collection walks every tracked object the process holds, so at hundreds of tables it stalls every
table at once. The referee's objects are nearly all freed by reference counting (states, actions
and messages are acyclic values), so the collector has little to find and collecting less often
costs little memory. `bench/referee_bench.py --collector both` measures the pauses both ways.
"""

from __future__ import annotations

import gc
from dataclasses import dataclass

# CPython's own thresholds are (700, 10, 10): a young collection every 700 net allocations of
# tracked objects. Objects still alive at a young collection are promoted, and enough promotions
# (a quarter of the old generation, and THRESHOLDS[2] middle collections) trigger a full one.
# A decision allocates hundreds of short-lived containers, so with 700 a collection caught each
# table's values of the moment, promoted them, and full collections followed every few seconds.
# With a larger young generation they die first (a young collection of 50,000 still takes about a
# millisecond), and fewer promotions mean fewer full collections.
REFEREE_THRESHOLDS = (50_000, 20, 100)


@dataclass(frozen=True, slots=True)
class Collector:
    """The collector's state: its thresholds, and how many objects it has frozen (exempt)."""

    thresholds: tuple[int, int, int]
    frozen: int

    @classmethod
    def now(cls) -> Collector:
        """This process's collector as it is."""
        zero, one, two = gc.get_threshold()
        return cls((zero, one, two), gc.get_freeze_count())


def tune_collector(thresholds: tuple[int, int, int] = REFEREE_THRESHOLDS) -> Collector:
    """Collect once, freeze what survives (start-up's modules, descriptors, the server: it lives
    as long as the process, and a full collection would walk it every time), and collect less
    often from now on. Call it once the server has started, and again after any other large
    allocation that lives as long as the process. The collector it leaves."""
    # Collected first, so that start-up's cyclic garbage is freed rather than frozen for good.
    gc.collect()
    gc.freeze()
    gc.set_threshold(*thresholds)
    return Collector.now()
