"""The schedule: deterministic from the seed, duplicate tables swap the teams on the same deals."""

from __future__ import annotations

from collections import defaultdict
from pathlib import Path

from referee.rules import preset
from referee.rules.game import new_game
from referee.tournament.config import TournamentConfig, parse_config
from referee.tournament.schedule import GameSpec, board_seed, build_schedule, pairings

BASE = """\
[tournament]
seed = "{seed}"
games_per_pairing = 6
{extra}

[[entrants]]
name = "a"
bot = "clients.random_bot:RandomBot"

[[entrants]]
name = "b"
bot = "clients.random_bot:RandomBot"

[[entrants]]
name = "c"
bot = "clients.heuristic_bot:HeuristicBot"
"""


def _config(seed: str = "s", extra: str = "") -> TournamentConfig:
    return parse_config(BASE.format(seed=seed, extra=extra), Path("t.toml"))


def test_same_seed_same_schedule_other_seed_other_deals() -> None:
    first, again = build_schedule(_config()), build_schedule(_config())
    assert first == again
    other = build_schedule(_config(seed="other"))
    assert [g.game_id for g in other] == [g.game_id for g in first]
    assert {g.seed for g in other}.isdisjoint({g.seed for g in first})


def test_round_robin_duplicate_tables() -> None:
    config = _config()
    games = build_schedule(config)
    assert [p.label for p in pairings(config)] == ["a vs b", "a vs c", "b vs c"]
    assert len(games) == 3 * 6  # three pairings, six games each (three board pairs)
    boards: dict[tuple[int, int], list[GameSpec]] = defaultdict(list)
    for game in games:
        boards[(game.pairing, game.board)].append(game)
    assert len(boards) == 9
    for tables in boards.values():
        zero, one = sorted(tables, key=lambda g: g.table)
        assert (zero.table, one.table) == (0, 1)
        assert zero.seed == one.seed
        assert (zero.team_even, zero.team_odd) == (one.team_odd, one.team_even)
        # The two tables of a board are next to each other, so they are played at once.
        assert abs(games.index(zero) - games.index(one)) == 1


def test_every_pairing_plays_the_same_deals() -> None:
    games = build_schedule(_config())
    by_board: dict[int, set[str]] = defaultdict(set)
    for game in games:
        by_board[game.board].add(game.seed)
    assert all(len(seeds) == 1 for seeds in by_board.values())
    assert by_board[0] == {board_seed("s", 0)}
    assert len({seeds.pop() for seeds in by_board.values()}) == 3


def test_swapped_tables_deal_each_team_the_others_cards() -> None:
    zero, one = build_schedule(_config())[:2]
    config = preset("tournament")
    state_zero, _ = new_game(config, zero.seed)
    state_one, _ = new_game(config, one.seed)
    # Same seed: same dealer and the same hand at every seat, at both tables...
    assert state_zero.dealer == state_one.dealer
    assert state_zero.hands == state_one.hands
    # ...while the seats' entrants are swapped between the teams.
    assert zero.players[0::2] == one.players[1::2]


def test_gauntlet_meets_the_field_and_no_duplicate_alternates_seats() -> None:
    config = _config(extra='format = "gauntlet"\ncandidate = "c"\nduplicate = false')
    assert [p.label for p in pairings(config)] == ["c vs a", "c vs b"]
    games = build_schedule(config)
    assert len(games) == 2 * 6
    first_pairing = [g for g in games if g.pairing == 0]
    assert [g.team_even for g in first_pairing] == ["c", "a", "c", "a", "c", "a"]
    assert len({g.seed for g in first_pairing}) == 6
