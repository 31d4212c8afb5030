"""Published seed commitments and the signing key: what a tournament promises before it plays."""

from __future__ import annotations

import asyncio
import contextlib
import io
import sqlite3
from pathlib import Path

import pytest

from referee.replay.signing import write_key_pair
from referee.server.front import Referee
from referee.tournament.commitments import commitment, game_salts, write_commitments
from referee.tournament.config import parse_config
from referee.tournament.runner import Tournament, TournamentError
from referee.tournament.schedule import build_schedule
from referee.tournament.store import Store

CONFIG = """\
[tournament]
seed = "s"
games_per_pairing = 4
database = "out/results.sqlite"
output_dir = "out"
replay_dir = "out/replays"

[[entrants]]
name = "a"
bot = "clients.random_bot:RandomBot"

[[entrants]]
name = "b"
bot = "clients.heuristic_bot:HeuristicBot"
"""


def test_signing_key_is_read_beside_the_config_and_does_not_change_the_tournament() -> None:
    plain = parse_config(CONFIG, Path("cfg/t.toml"))
    keyed = parse_config(
        CONFIG.replace('seed = "s"', 'seed = "s"\nsigning_key = "keys/ref.key"'), Path("cfg/t.toml")
    )
    assert plain.signing_key is None
    assert keyed.signing_key == Path("cfg/keys/ref.key")
    # A key can be added for the rest of a tournament: resume accepts the same store.
    assert keyed.fingerprint() == plain.fingerprint()


def test_salts_are_per_game_and_stable_across_reopening_the_store(tmp_path: Path) -> None:
    config = parse_config(CONFIG, tmp_path / "t.toml")
    schedule = build_schedule(config)
    store = Store(tmp_path / "results.sqlite")
    key = store.salt_key()
    assert key == store.salt_key()
    store.close()
    reopened = Store(tmp_path / "results.sqlite")
    assert reopened.salt_key() == key
    reopened.close()
    salts = game_salts(key, schedule)
    assert set(salts) == {g.game_id for g in schedule}
    assert len(set(salts.values())) == len(schedule)
    assert all(len(salt) == 64 and int(salt, 16) >= 0 for salt in salts.values())
    assert game_salts(key, schedule) == salts
    assert game_salts(bytes(32), schedule) != salts


def test_a_store_from_before_commitments_gains_a_salt_key(tmp_path: Path) -> None:
    config = parse_config(CONFIG, tmp_path / "t.toml")
    store = Store(tmp_path / "results.sqlite")
    store.initialise(config.fingerprint(), {}, build_schedule(config))
    store.close()
    assert _meta(tmp_path / "results.sqlite", "salt_key") == []  # as release 0.1 left it
    store = Store(tmp_path / "results.sqlite")
    key = store.salt_key()
    store.close()
    assert _meta(tmp_path / "results.sqlite", "salt_key") == [(key.hex(),)]


def test_the_published_commitment_is_the_one_the_referee_writes(tmp_path: Path) -> None:
    config = parse_config(CONFIG, tmp_path / "t.toml")
    schedule = build_schedule(config)
    salts = game_salts(b"k" * 32, schedule)
    path = tmp_path / "out" / "commitments.csv"
    write_commitments(schedule, salts, path)
    rows = [line.split(",") for line in path.read_text(encoding="utf-8").splitlines()]
    assert rows[0] == ["game_id", "pairing", "board", "table", "seed_commitment"]
    assert [row[0] for row in rows[1:]] == [g.game_id for g in schedule]

    async def create() -> list[str]:
        front = Referee("organiser-token-for-tests")
        made = []
        for game in schedule:
            table = front.create(seed=game.seed, match_id=game.game_id, salt=salts[game.game_id]).table
            made.append(table.match.header.seed_commitment)
            await table.stop("test over")
        return made

    made = asyncio.run(create())
    assert made == [row[4] for row in rows[1:]]
    assert made == [commitment(g, salts[g.game_id]) for g in schedule]
    # Duplicate tables deal the same seed, but their commitments differ (their salts do).
    assert len(set(made)) == len(made)


@pytest.mark.parametrize("salt", ["ab" * 31, "AB" * 32, "zz" * 32, "ab" * 33])
def test_a_malformed_salt_is_refused(salt: str) -> None:
    async def create() -> None:
        Referee("organiser-token-for-tests").create(seed="1", salt=salt)

    with pytest.raises(ValueError, match="a salt is 32 bytes in hex"):
        asyncio.run(create())


def test_a_bad_signing_key_is_refused_before_the_schedule_is_written(tmp_path: Path) -> None:
    (tmp_path / "public-only.key").write_bytes(b"")
    write_key_pair(tmp_path / "ref.key")
    for key, problem in (
        ("missing.key", "cannot read it"),
        ("public-only.key", "not a PEM private key"),
        ("ref.key.pub", "not a PEM private key"),
    ):
        text = CONFIG.replace('seed = "s"', f'seed = "s"\nsigning_key = "{key}"')
        config = parse_config(text, tmp_path / "t.toml")
        tournament = Tournament(config, io.StringIO())
        with pytest.raises(TournamentError, match=f"signing_key: .*{problem}"):
            tournament.prepare(resume=False)
        assert tournament.store.is_empty()
        tournament.store.close()
    assert not (tmp_path / "out" / "commitments.csv").exists()


def _meta(db: Path, key: str) -> list[tuple[str]]:
    with contextlib.closing(sqlite3.connect(db)) as conn:
        return conn.execute("SELECT value FROM meta WHERE key = ?", (key,)).fetchall()
