"""The arena's store: keys, bots, the life of a pair, and the schema's version."""

from __future__ import annotations

import sqlite3
from pathlib import Path

import pytest

from referee.arena.keys import KEY_PREFIX, key_matches
from referee.arena.store import INTERRUPTED, SCHEMA_VERSION, ArenaStore, ArenaStoreError, BotState, GameRow


@pytest.fixture
def store(tmp_path: Path) -> ArenaStore:
    return ArenaStore(tmp_path / "arena.sqlite")


def game(table: int, points_a: int, points_b: int) -> GameRow:
    return GameRow(table, f"m{table}", table, points_a, points_b, "played_out", "", {"timeouts": 0}, {})


def test_a_key_is_shown_once_and_stored_as_a_hash(store: ArenaStore, tmp_path: Path) -> None:
    key = store.add_bot("alpha", bot="clients.random_bot:RandomBot")
    assert key.startswith(KEY_PREFIX) and len(key) > 40
    raw = (tmp_path / "arena.sqlite").read_bytes()
    assert key.encode() not in raw
    bot = store.authenticate(key)
    assert bot is not None and bot.name == "alpha" and bot.hosted
    assert store.authenticate(key + "x") is None
    assert store.authenticate("") is None and store.authenticate("x" * 10_000) is None


def test_a_rotated_key_replaces_the_old_and_a_disabled_bot_is_let_in_by_none(store: ArenaStore) -> None:
    old = store.add_bot("alpha", bot="clients.random_bot:RandomBot")
    new = store.rotate_key("alpha")
    assert new != old and store.authenticate(old) is None
    assert store.authenticate(new) is not None
    store.set_state("alpha", BotState.DISABLED, "by its owner")
    assert store.authenticate(new) is None
    assert store.bot("alpha").reason == "by its owner"


@pytest.mark.parametrize("name", ["", "-lead", "has space", "é", "x" * 33, "a/b"])
def test_a_bot_s_name_is_checked(store: ArenaStore, name: str) -> None:
    with pytest.raises(ArenaStoreError, match="a bot's name is"):
        store.add_bot(name, bot="m:C")


def test_names_are_unique_and_unknown_names_are_said(store: ArenaStore) -> None:
    store.add_bot("alpha", bot="m:C")
    with pytest.raises(ArenaStoreError, match="exists already"):
        store.add_bot("alpha", command=("x",))
    with pytest.raises(ArenaStoreError, match="no bot named 'beta'"):
        store.rotate_key("beta")
    with pytest.raises(ArenaStoreError, match="not both"):
        store.add_bot("gamma", bot="m:C", command=("x",))


def test_a_pair_is_finished_with_its_games_or_voided_never_half(store: ArenaStore) -> None:
    for name in ("a", "b"):
        store.add_bot(name, bot="m:C", state=BotState.ACTIVE)
    done = store.start_pair("a", "b", "hosted", "s1", validation=False)
    store.finish_pair(done, [game(0, 300, 100), game(1, 150, 250)])
    pair = store.pair(done)
    assert (pair.state, pair.points_a, pair.points_b, pair.margin) == ("finished", 450, 350, 100)
    assert [g.points_a for g in store.games(done)] == [300, 150]
    cut = store.start_pair("a", "b", "hosted", "s2", validation=False)
    assert store.void_interrupted() == [cut]
    assert store.pair(cut).state == "voided" and store.pair(cut).reason == INTERRUPTED
    assert store.games(cut) == []
    # A finish that fails part way writes nothing: the games' table refuses a duplicate table.
    broken = store.start_pair("a", "b", "hosted", "s3", validation=False)
    with pytest.raises(sqlite3.IntegrityError):
        store.finish_pair(broken, [game(0, 1, 1), game(0, 2, 2)])
    assert store.pair(broken).state == "playing" and store.games(broken) == []


def test_a_store_from_a_newer_release_is_refused_and_an_old_one_migrates(tmp_path: Path) -> None:
    path = tmp_path / "arena.sqlite"
    ArenaStore(path).close()
    with sqlite3.connect(path) as db:
        assert db.execute("PRAGMA user_version").fetchone()[0] == SCHEMA_VERSION
        assert db.execute("PRAGMA journal_mode").fetchone()[0] == "wal"
        db.execute(f"PRAGMA user_version = {SCHEMA_VERSION + 1}")
    with pytest.raises(ArenaStoreError, match="upgrade tichu"):
        ArenaStore(path)


def test_a_schema_1_store_keeps_its_games_and_learns_where_new_ones_were_played(tmp_path: Path) -> None:
    from referee.arena.store import MIGRATIONS, _statements

    path = tmp_path / "arena.sqlite"
    with sqlite3.connect(path) as db:  # a store as the first release left it, one pair finished
        for statement in _statements(MIGRATIONS[1]):
            db.execute(statement)
        db.execute("PRAGMA user_version = 1")
        db.execute(
            "INSERT INTO bots (name, kind, key_hash, key_set_at, state, created_at)"
            " VALUES ('a', 'hosted', 'h', 0, 'active', 0), ('b', 'hosted', 'h2', 0, 'active', 0)"
        )
        db.execute(
            "INSERT INTO pairs (id, bot_a, bot_b, leaderboard, seed, state, started_at, finished_seq)"
            " VALUES (1, 'a', 'b', 'hosted', 's', 'finished', 0, 1)"
        )
        db.execute("INSERT INTO games VALUES (1, 0, 'm0', 0, 10, 90, 'played_out', '', '{}', '{}')")
    store = ArenaStore(path)
    assert store.games(1) == [GameRow(0, "m0", 0, 10, 90, "played_out", "", {}, {}, host="")]
    pair = store.start_pair("a", "b", "hosted", "s2", validation=False)
    store.finish_pair(pair, [GameRow(0, "m1", 0, 50, 50, "played_out", "", {}, {}, host="n/1/0")])
    assert [g.host for g in store.games(pair)] == ["n/1/0"]
    assert store.bot("a").forfeits_in_a_row == 0  # schema 3: nobody has forfeited yet
    store.close()


def test_a_schema_2_store_keeps_its_bots_and_starts_their_forfeits_at_none(tmp_path: Path) -> None:
    from referee.arena.store import MIGRATIONS, _statements

    path = tmp_path / "arena.sqlite"
    with sqlite3.connect(path) as db:  # a store as schema 2 left it: a paused bot, a game on a Ray host
        for version in (1, 2):
            for statement in _statements(MIGRATIONS[version]):
                db.execute(statement)
        db.execute("PRAGMA user_version = 2")
        db.execute(
            "INSERT INTO bots (name, kind, key_hash, key_set_at, state, reason, created_at)"
            " VALUES ('a', 'remote', 'h', 0, 'paused', 'forfeits', 0),"
            " ('b', 'hosted', 'h2', 0, 'active', '', 1)"
        )
        db.execute(
            "INSERT INTO pairs (id, bot_a, bot_b, leaderboard, seed, state, started_at, finished_seq)"
            " VALUES (1, 'a', 'b', 'remote', 's', 'finished', 0, 1)"
        )
        db.execute("INSERT INTO games VALUES (1, 0, 'm0', 0, 10, 90, 'played_out', '', '{}', '{}', 'n/1/0')")
    store = ArenaStore(path)
    with sqlite3.connect(path) as db:
        assert db.execute("PRAGMA user_version").fetchone()[0] == SCHEMA_VERSION == 3
    a = store.bot("a")
    assert (a.state, a.reason, a.forfeits_in_a_row) == (BotState.PAUSED, "forfeits", 0)
    assert [g.host for g in store.games(1)] == ["n/1/0"]
    assert voided_with_forfeits(store, {"a": True, "b": False}) == {"a": 1, "b": 0}
    store.close()


def voided_with_forfeits(store: ArenaStore, forfeited: dict[str, bool]) -> dict[str, int]:
    """A pair of `a` and `b` cut off with these forfeits: the bots' new counts in a row."""
    return store.void_pair(store.start_pair("a", "b", "hosted", "s", validation=False), "cut", forfeited)


def test_forfeits_in_a_row_are_written_with_the_pair_s_end_or_not_at_all(store: ArenaStore) -> None:
    for name in ("a", "b"):
        store.add_bot(name, bot="m:C", state=BotState.ACTIVE)
    done = store.start_pair("a", "b", "hosted", "s1", validation=False)
    counts = store.finish_pair(done, [game(0, 0, 200), game(1, 100, 100)], forfeited={"a": True, "b": False})
    assert counts == {"a": 1, "b": 0} and store.bot("a").forfeits_in_a_row == 1
    # A finish that fails part way counts nothing either.
    broken = store.start_pair("a", "b", "hosted", "s2", validation=False)
    with pytest.raises(sqlite3.IntegrityError):
        store.finish_pair(broken, [game(0, 1, 1), game(0, 2, 2)], forfeited={"a": True, "b": True})
    assert (store.bot("a").forfeits_in_a_row, store.bot("b").forfeits_in_a_row) == (1, 0)
    # A voided pair counts too (a table forfeited, the other cut off), but only the once.
    cut = store.start_pair("a", "b", "hosted", "s3", validation=False)
    assert store.void_pair(cut, "a table failed", {"a": True, "b": True}) == {"a": 2, "b": 1}
    assert store.void_pair(cut, "again", {"a": True, "b": True}) == {}
    assert (store.bot("a").forfeits_in_a_row, store.bot("b").forfeits_in_a_row) == (2, 1)
    assert store.pair(cut).reason == "a table failed"
    # Without a verdict (the arena stopping), nobody's count moves.
    stopped = store.start_pair("a", "b", "hosted", "s4", validation=False)
    assert store.void_pair(stopped, "the arena was stopped") == {}
    assert store.bot("a").forfeits_in_a_row == 2


def test_forfeits_in_a_row_are_counted_reset_and_kept(tmp_path: Path) -> None:
    path = tmp_path / "arena.sqlite"
    store = ArenaStore(path)
    store.add_bot("a")
    store.add_bot("b")
    assert voided_with_forfeits(store, {"a": True, "b": False}) == {"a": 1, "b": 0}
    assert voided_with_forfeits(store, {"a": True, "b": True}) == {"a": 2, "b": 1}
    store.close()
    store = ArenaStore(path)  # a restart reads them back
    assert (store.bot("a").forfeits_in_a_row, store.bot("b").forfeits_in_a_row) == (2, 1)
    assert voided_with_forfeits(store, {"b": False}) == {"b": 0}
    assert store.bot("a").forfeits_in_a_row == 2  # a bot not in the pair keeps its count
    store.close()


def test_key_matching_is_exact() -> None:
    from referee.arena.keys import key_hash, new_key

    key = new_key()
    assert key_matches(key, key_hash(key)) and not key_matches(key, key_hash(new_key()))
    assert not key_matches(key, "")


def test_processes_that_open_a_new_store_at_once_make_its_schema_once(tmp_path: Path) -> None:
    """The arena and a command started together (CI saw 'table bots already exists')."""
    import subprocess
    import sys

    path = tmp_path / "arena.sqlite"
    code = (
        "import sys; from pathlib import Path; from referee.arena.store import ArenaStore; "
        "ArenaStore(Path(sys.argv[1])).close()"
    )
    root = Path(__file__).resolve().parents[2]
    runs = [
        subprocess.Popen([sys.executable, "-c", code, str(path)], cwd=root, stderr=subprocess.PIPE)
        for _ in range(8)
    ]
    ends = [(run.wait(60), run.stderr.read() if run.stderr else b"") for run in runs]
    assert all(status == 0 for status, _ in ends), ends
    with sqlite3.connect(path) as db:
        assert db.execute("PRAGMA user_version").fetchone()[0] == SCHEMA_VERSION
