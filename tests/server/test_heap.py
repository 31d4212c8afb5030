"""referee.server.heap: the referee process's garbage collector, frozen and tuned once it has started."""

from __future__ import annotations

import gc
import weakref
from collections.abc import Iterator

import pytest

from referee.server.heap import OLDEST_THRESHOLD, Collector, tune_collector


@pytest.fixture
def restored_collector() -> Iterator[None]:
    """Give this test process's collector back as it was."""
    thresholds = gc.get_threshold()
    yield
    gc.unfreeze()
    gc.set_threshold(*thresholds)


@pytest.mark.usefixtures("restored_collector")
def test_tuning_freezes_what_lives_and_sets_the_thresholds() -> None:
    gc.unfreeze()
    collector = tune_collector((12_345, 6, 7))
    assert gc.get_threshold() == (12_345, 6, 7)
    assert collector == Collector((12_345, 6, 7), gc.get_freeze_count()) == Collector.now()
    assert collector.frozen > 10_000  # at least this process's modules


class _Node:
    """An object that can refer to itself and be referred to weakly."""

    me: _Node | None = None


@pytest.mark.usefixtures("restored_collector")
def test_tuning_collects_before_it_freezes() -> None:
    # A cycle that start-up dropped is freed, not frozen for the life of the process.
    gc.unfreeze()
    young, middle, _ = gc.get_threshold()
    node = _Node()
    node.me = node
    dropped = weakref.ref(node)
    del node
    tune_collector()
    assert dropped() is None
    # Only the oldest generation's threshold changes: Python's young ones keep its pauses short.
    assert gc.get_threshold() == (young, middle, OLDEST_THRESHOLD)
