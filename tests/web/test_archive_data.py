"""The archive's data without a browser: the store's queries (filters, pages, what is published),
the replay's step data (folded window closes, the public view, the check), and the HTTP API."""

from __future__ import annotations

import importlib
import json
import sqlite3
import subprocess
import sys
import warnings
from pathlib import Path
from typing import Any

import pytest

with warnings.catch_warnings():  # starlette 1.x would rather have httpx2; httpx serves the tests
    warnings.simplefilter("ignore")
    from starlette.testclient import TestClient

from referee.replay.format import canonical_line, read_replay
from referee.tournament.config import load_config
from referee.tournament.schedule import build_schedule
from referee.tournament.store import Store
from referee.web import store_reader
from referee.web.app import create_app
from referee.web.archive import Archive
from referee.web.offline import build_archive
from referee.web.steps import page_data, replay_data
from referee.web.store_reader import GameFilter, info_from_config, info_from_store
from tests.replay.conftest import play_recorded_match
from tests.tournament.results import match_result

# bench/ is a folder of scripts: imported by name, as tests/bench does.
bench: Any = importlib.import_module("bench.web_store_bench")


@pytest.fixture(scope="module")
def store_config(tmp_path_factory: pytest.TempPathFactory) -> Path:
    """A finished duplicate round robin of 5 teams, 200 games (the bench's store, small)."""
    return Path(bench.make_store(tmp_path_factory.mktemp("store"), 200))


@pytest.fixture(scope="module")
def recorded(tmp_path_factory: pytest.TempPathFactory) -> Path:
    """A replay of a real 2-deal match over gRPC (random bots, bombs and calls)."""
    folder = tmp_path_factory.mktemp("replays")
    return play_recorded_match(folder, seed="web-data", rounds=2).path


def test_game_lists_filter_and_page(store_config: Path) -> None:
    info = info_from_config(load_config(store_config))
    db = store_reader.connect(info.database)
    everything = store_reader.game_page(db, True, GameFilter(), page=1, per_page=50)
    assert (everything.total, everything.pages) == (200, 4)
    assert [v.row.seq for v in everything.games] == list(range(50))
    last = store_reader.game_page(db, True, GameFilter(), page=99)
    assert last.page == 4 and len(last.games) == 50  # past the end: the last page
    teams = tuple(info.teams_of("charlie"))
    charlie = store_reader.game_page(db, True, GameFilter(teams=teams), per_page=200)
    assert charlie.total == 80 and all("charlie" in (v.row.team_even, v.row.team_odd) for v in charlie.games)
    forfeits = store_reader.game_page(db, True, GameFilter(forfeit=True), per_page=200)
    assert forfeits.total == 4 and all(v.row.forfeit for v in forfeits.games)
    assert store_reader.game_page(db, True, GameFilter(status="pending")).total == 0
    failures, total = store_reader.failures(db)
    assert total == 1 and failures[0].reason == "the bot process ended"
    # The archive's indexes (schema 5) serve the list: no full scan of the games for a team.
    plan = " ".join(
        str(row)
        for row in db.execute(
            "EXPLAIN QUERY PLAN SELECT * FROM games g"
            " WHERE g.team_even = 'a' OR g.team_odd = 'a' ORDER BY seq"
        )
    )
    assert "games_by_team_even" in plan and "games_by_team_odd" in plan
    db.close()


def test_a_table_whose_twin_still_plays_is_held(tmp_path: Path) -> None:
    config = load_config(bench.write_config(tmp_path, 20))
    schedule = build_schedule(config)
    store = Store(config.database)
    store.initialise(config.fingerprint(), {"name": "bench", "duplicate": True}, schedule)
    run = store.start_run("run", 1)
    first, twin = schedule[0], schedule[1]
    assert (first.pairing, first.board) == (twin.pairing, twin.board)
    for spec in (first, twin):
        store.mark_started(spec.game_id, run, f"m-{spec.game_id}", str(tmp_path / f"m-{spec.game_id}.jsonl"))
    store.mark_finished(first.game_id, match_result(300, 100, hands=4))
    db = store_reader.connect(config.database)
    view = store_reader.game(db, True, first.game_id)
    assert view is not None and view.status == "held" and not view.published
    shown = view.to_json()
    assert shown["score"] is None and shown["winner"] is None and shown["status"] == "held"
    assert store_reader.status_counts(db, True)["held"] == 1
    store.mark_finished(twin.game_id, match_result(150, 250, hands=4))
    both = store_reader.board(db, True, first.pairing, first.board)
    assert [v.status for v in both] == ["finished", "finished"]
    assert both[0].to_json()["score"] == [300, 100]
    store.close()
    db.close()


def test_a_store_alone_tells_its_tournament(store_config: Path) -> None:
    config = load_config(store_config)
    info = info_from_store(config.database)
    assert info.name == "bench" and info.duplicate and not info.sprt_from_config
    assert [t.name for t in info.teams] == [t.name for t in config.teams]
    assert info.pairing_firsts == info_from_config(config).pairing_firsts


def test_the_api_serves_each_page_as_json(store_config: Path) -> None:
    archive = build_archive([store_config])
    client = TestClient(create_app(archive=archive))
    assert client.get("/", follow_redirects=False).headers["location"] == "/tournaments/bench"
    data = client.get("/api/tournaments/bench").json()
    assert (
        data["progress"]["counts"]["finished"] == 200 and data["progress"]["eta"] == "every game is settled"
    )
    assert [s["team"] for s in data["standings"]] and data["sprt"]["pairings"][0]["summary"]
    assert "inf" not in json.dumps(data["standings"]) + json.dumps(data["sprt"])
    assert len(data["series"]["llr"]["series"]) == 10  # one line per pairing
    games = client.get("/api/tournaments/bench/games?entrant=alpha&page=2&forfeit=0").json()
    assert games["page"] == 2 and games["total"] == 80 and games["filter"] == {"entrant": "alpha"}
    assert games["games"][0]["url"].startswith("/tournaments/bench/games/")
    # A filter the tournament does not know is dropped, not an error.
    assert client.get("/api/tournaments/bench/games?entrant=nobody&status=bogus").json()["total"] == 200
    entrant = client.get("/api/tournaments/bench/entrants/delta").json()
    assert {row["opponent"] for row in entrant["against"]} == {"alpha", "bravo", "charlie", "echo"}
    assert entrant["decisions"] > 0 and entrant["think_ms_p99"] is not None
    assert client.get("/api/tournaments/bench/entrants/nobody").status_code == 404
    assert client.get("/api/tournaments/bench/games/p00-b0000-t0").json()["replay_published"] is False
    assert client.get("/api/tournaments/nothing").status_code == 404


def test_every_page_has_a_strict_policy_and_no_inline_script(store_config: Path, recorded: Path) -> None:
    archive = build_archive([store_config, recorded.parent])
    client = TestClient(create_app(archive=archive))
    folder = next(iter(archive.collections))
    for url in ("/archive", "/tournaments/bench", "/tournaments/bench/entrants/alpha",
                f"/replays/{folder}", "/tournaments/bench/games/p00-b0000-t0"):  # fmt: skip
        response = client.get(url)
        assert response.status_code == 200, url
        policy = response.headers["content-security-policy"]
        assert "script-src 'self'" in policy and "unsafe" not in policy and "default-src 'none'" in policy
        for script in response.text.split("<script")[1:]:
            head = script.split(">", 1)[0]
            assert " src=" in head or 'type="application/json"' in head, (url, head)
    assert client.get("/static/archive/viewer.js").headers["cache-control"].startswith("public, max-age=")
    assert client.get("/replays/x/..%2f..%2fetc%2fpasswd").status_code == 404


def test_the_step_data_folds_window_closes_and_checks_the_replay(recorded: Path) -> None:
    data = replay_data(recorded)
    types = [step[7] for step in data["steps"]]
    assert data["folded"] == [i for i, kind in enumerate(types) if kind == "window_closed"] and data["folded"]
    assert data["verification"]["ok"] and data["verification"]["chain"].startswith("intact over")
    assert data["verification"]["signature"] == "not signed"
    assert [h["hand"] for h in data["hands"]] == [1, 2] and data["hands"][1]["start"] > 0
    public = replay_data(recorded, public=True)
    assert public["match"]["public"] and all(set(s[6]) == {"0"} for s in public["states"])
    assert {s[7] for s in public["steps"]} <= set(types) and "cards_dealt" not in {
        s[7] for s in public["steps"]
    }
    assert public["verification"]["ok"]  # the redacted view's chain still holds


def test_a_replay_that_does_not_verify_shows_its_public_events_and_says_so(
    recorded: Path, tmp_path: Path
) -> None:
    lines = recorded.read_text(encoding="utf-8").splitlines(keepends=True)
    dealt = next(i for i, line in enumerate(lines) if '"cards_dealt"' in line)
    record = json.loads(lines[dealt])
    record["event"]["cards"] = "2j"
    lines[dealt] = canonical_line(record).decode()
    tampered = tmp_path / "tampered.jsonl"
    tampered.write_text("".join(lines), encoding="utf-8")
    data = page_data(read_replay(tampered))
    assert not data["verification"]["ok"] and data["match"]["public"]
    assert "does not verify" in data["verification"]["checks"][0]


def test_tichu_web_refuses_a_path_with_nothing_to_serve(tmp_path: Path) -> None:
    (tmp_path / "notes.txt").write_text("hello", encoding="utf-8")
    for path in (tmp_path / "missing", tmp_path / "notes.txt", tmp_path):
        done = subprocess.run(
            [sys.executable, "-m", "referee.cli", "web", str(path), "--http", "127.0.0.1:0"],
            capture_output=True, text=True, timeout=60, check=False,
        )  # fmt: skip
        assert done.returncode == 2 and done.stderr.startswith("tichu web: "), done.stderr


def test_an_old_store_gets_the_archive_indexes(store_config: Path, tmp_path: Path) -> None:
    copy = tmp_path / "old.sqlite"
    copy.write_bytes(load_config(store_config).database.read_bytes())
    v5 = ("games_by_seq", "games_by_team_even", "games_by_team_odd", "games_by_board", "games_by_match",
          "games_by_finish", "seat_stats_by_entrant", "attempts_by_match")  # fmt: skip
    with sqlite3.connect(copy) as db:  # as schema 4 left it
        for name in v5:
            db.execute(f"DROP INDEX {name}")
        db.execute("UPDATE meta SET value = '4' WHERE key = 'schema'")
    db.close()
    archive: Archive = build_archive([copy])
    assert archive.tournaments
    with sqlite3.connect(copy) as db:
        names = {r[0] for r in db.execute("SELECT name FROM sqlite_master WHERE type = 'index'")}
    assert set(v5) <= names
