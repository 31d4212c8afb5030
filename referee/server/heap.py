"""How a referee process's garbage collector runs: start-up's heap frozen, full collections rare.

CPython's cyclic collector pauses the whole process while it walks a generation; a full
collection walks every tracked object the process holds, so at hundreds of tables it stalls every
table at once. The referee's objects are nearly all freed by reference counting (states, actions
and messages are acyclic values), so the collector has little to find and collecting the old
generation rarely costs little memory. `bench/referee_bench.py --collector both` measures the
pauses both ways.
"""

from __future__ import annotations

import gc
from dataclasses import dataclass

# CPython 3.11's thresholds are (700, 10, 10): a young collection each time allocations outnumber
# deallocations of tracked objects by 700, a middle one every 10 young ones, and a full one every
# 10 middle ones once a quarter of the old generation is new. A full collection walks the whole
# heap (134 to 195 ms of CPU at 100 to 200 tables on the 2-core test machine, one every 13 to 20 s)
# and stalls every table; it finds next to nothing: the middle and full collections of a 30 to 40 s
# window freed 0 to 5 objects, since states, actions and messages die by reference counting. So
# the oldest threshold is 1,000: a full collection at most every 1,000 middle ones (tens of
# minutes). The young thresholds stay Python's: a larger first one saved 1 to 2% of the referee's
# CPU but lengthened every young and middle pause (at 200 tables, 2,000 took young collections
# from 21 to 30 ms of CPU and middle ones from 33 to 51; 20,000 made a middle one take 135), since
# the young generation holds all that is new and alive (each table's latest state), not 700
# objects. Figures: `bench/referee_bench.py --only tables --tables 200 --measure-s 30 --think-ms 100
# --collector 700/10/1000,1000/10/1000,2000/10/1000,frozen`.
OLDEST_THRESHOLD = 1_000


def referee_thresholds() -> tuple[int, int, int]:
    """What tune_collector sets: this interpreter's own young and middle thresholds, and OLDEST_THRESHOLD."""
    young, middle, _ = gc.get_threshold()
    return young, middle, OLDEST_THRESHOLD


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


def tune_collector(thresholds: tuple[int, int, int] | None = None) -> Collector:
    """Collect once, freeze what survives (start-up's modules, descriptors, the server: it lives
    as long as the process, and a full collection would walk it every time), and collect less
    often from now on. Call it once the server has started, and again after any other large
    allocation that lives as long as the process. `thresholds` are referee_thresholds() unless
    given. The collector it leaves."""
    # Collected first, so that start-up's cyclic garbage is freed rather than frozen for good.
    gc.collect()
    gc.freeze()
    gc.set_threshold(*(thresholds or referee_thresholds()))
    return Collector.now()
