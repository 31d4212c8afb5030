"""The arena's ratings: one comparison per finished pair, and a rerate that gives the same."""

from __future__ import annotations

from dataclasses import replace
from pathlib import Path

from referee.arena.ratings import fresh, rate_pair, rerate
from referee.arena.store import ArenaStore, BotState, GameRow, RatingRow


def test_rerate_folds_the_pairs_in_the_order_they_finished(tmp_path: Path) -> None:
    store = ArenaStore(tmp_path / "arena.sqlite")
    for name in ("a", "b", "c"):
        store.add_bot(name, bot="m:C", state=BotState.ACTIVE)
    # Three pairs start in id order and finish out of it; one is a validation, one is voided.
    first = store.start_pair("a", "b", "hosted", "s1", validation=False)
    second = store.start_pair("b", "c", "hosted", "s2", validation=False)
    third = store.start_pair("c", "a", "hosted", "s3", validation=True)
    fourth = store.start_pair("a", "c", "hosted", "s4", validation=False)
    store.void_pair(fourth, "cut off")
    for pair_id, (pa, pb) in ((second, (500, 300)), (third, (100, 700)), (first, (400, 400))):
        pair = store.pair(pair_id)
        games = [GameRow(0, f"m{pair_id}", 0, pa, pb, "played_out", "", {}, {})]
        ratings: tuple[RatingRow, ...] = ()
        if not pair.validation:
            before_a = store.rating(pair.bot_a, "hosted") or fresh(pair.bot_a, "hosted")
            before_b = store.rating(pair.bot_b, "hosted") or fresh(pair.bot_b, "hosted")
            update = rate_pair(replace(pair, state="finished", points_a=pa, points_b=pb), before_a, before_b)
            ratings = (update.a, update.b)
        store.finish_pair(pair_id, games, ratings)
    stored = {(r.bot, r.leaderboard): r for r in store.ratings()}
    again, history = rerate(store.pairs())
    assert {(r.bot, r.leaderboard): r for r in again} == stored
    assert [pair_id for pair_id, *_ in history] == [second, second, first, first]
    b = stored[("b", "hosted")]
    assert (b.pairs, b.wins, b.draws, b.losses, b.margin) == (2, 1, 1, 0, 200)
    assert "c" in {r.bot for r in again} and stored[("c", "hosted")].pairs == 1  # validation not rated
