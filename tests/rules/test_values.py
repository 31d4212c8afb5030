"""The engine's values pickle and copy to equal values, in the pure and the compiled build."""

from __future__ import annotations

import copy
import pickle
from typing import Any

import pytest

from referee.rules import (
    CallTichu,
    Decline,
    DeclineTichu,
    Exchange,
    GiftDragon,
    GrandTichu,
    Pass,
    Play,
    State,
    legal_decisions,
    new_game,
    observe,
    to_act,
)
from referee.rules.state import PUBLIC_FIELDS


def sample_values() -> list[Any]:
    state, _ = new_game(seed="values")
    seat = to_act(state)[0]
    return [
        state,
        state.config,
        observe(state, seat),
        *legal_decisions(state, seat),
        Pass(),
        Decline(),
        GrandTichu(True),
        CallTichu(),
        DeclineTichu(),
        Exchange(((1, 5), (2, 9), (3, 40))),
        GiftDragon(1),
        Play.of("MJ 2s 3j 4p 5s", wish="7", tichu=True),
    ]


@pytest.mark.parametrize("value", sample_values(), ids=lambda value: type(value).__name__)
def test_a_value_survives_pickle_copy_and_deepcopy(value: Any) -> None:
    for made in (pickle.loads(pickle.dumps(value)), copy.copy(value), copy.deepcopy(value)):
        assert type(made) is type(value)
        assert made == value


def test_equality_compares_every_declared_field_but_the_caches() -> None:
    declared = set(getattr(State, "__annotations__", {}))
    if not declared:
        pytest.skip("a compiled State keeps no annotations to compare with")
    caches = {name for name in declared if name.startswith("_")}
    assert caches == {"_leads", "_legal", "_stamp", "_stop_before_deal"}
    assert sorted(declared - caches) == sorted(PUBLIC_FIELDS)
    assert len(set(PUBLIC_FIELDS)) == len(PUBLIC_FIELDS)
