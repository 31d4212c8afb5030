"""`tichu tournament export` on a real (small) tournament, read back by the `tichu replay` tools."""

from __future__ import annotations

import csv
import io
import json
import shutil
import zipfile
from pathlib import Path

import pytest

from referee.cli import main
from referee.replay.archive import sha256_hex
from referee.replay.signing import write_key_pair
from referee.tournament.config import TournamentConfig, parse_config
from referee.tournament.runner import run_tournament
from referee.tournament.store import Store
from tests.tournament.support import HEURISTIC, OUTPUTS, RANDOM

CONFIG = f"""
[tournament]
name = "arch"
seed = "archive-seed"
games_per_pairing = 2        # one duplicate board pair
concurrency = 2
signing_key = "referee.key"
{OUTPUTS}
[rules]
match_mode = "fixed_rounds:1"

[sprt]
stop_early = false
{RANDOM}{HEURISTIC}"""


@pytest.fixture(scope="module")
def played(tmp_path_factory: pytest.TempPathFactory) -> TournamentConfig:
    """One board pair of one deal each, played once for every test here (the tests copy it)."""
    folder = tmp_path_factory.mktemp("played")
    write_key_pair(folder / "referee.key")
    config = parse_config(CONFIG, folder / "arch.toml")
    (folder / "arch.toml").write_text(CONFIG, encoding="utf-8")
    assert run_tournament(config, resume=False, out=io.StringIO(), live=False) == 0
    return config


@pytest.fixture
def tournament(played: TournamentConfig, tmp_path: Path) -> Path:
    """A copy of the played tournament's folder (a test may delete or change its files); its config."""
    shutil.copytree(played.source.parent, tmp_path / "t")
    return tmp_path / "t" / "arch.toml"


def _export(config: Path, capsys: pytest.CaptureFixture[str], *extra: str) -> tuple[int, str, str]:
    code = main(["tournament", "export", str(config), *extra])
    captured = capsys.readouterr()
    return code, captured.out, captured.err


def test_export_writes_every_game_and_the_replay_tools_read_it(
    tournament: Path, capsys: pytest.CaptureFixture[str]
) -> None:
    code, out, err = _export(tournament, capsys)
    archive = tournament.parent / "out" / "arch-games.zip"
    assert (code, err) == (0, "") and out == f"wrote {archive}: 2 finished games\n"
    store = Store(tournament.parent / "out" / "results.sqlite")
    games = store.games("finished")
    store.close()
    with zipfile.ZipFile(archive) as packed:
        index = json.loads(packed.read("index.json"))
        table = list(csv.DictReader(io.StringIO(packed.read("index.csv").decode())))
        members = {name: packed.read(name) for name in packed.namelist() if name.startswith("replays/")}
    assert index["format"] == "tichu-games/1" and index["tournament"] == "arch"
    entries = index["games"]
    assert [e["game_id"] for e in entries] == [g.game_id for g in games]
    for entry, game, row in zip(entries, games, table, strict=True):
        assert entry["status"] == "ok" and entry["match_id"] == game.match_id
        assert entry["member"] == f"replays/{game.match_id}.jsonl"
        assert entry["sha256"] == sha256_hex(members[entry["member"]])
        assert members[entry["member"]] == Path(str(game.replay_path)).read_bytes()
        assert (entry["score_even"], entry["score_odd"], entry["players"]) == (
            game.score_even,
            game.score_odd,
            list(game.players),
        )
        winner = {0: game.team_even, 1: game.team_odd, -1: "draw"}[int(game.winner or 0)]
        assert entry["winner"] == winner and row["winner"] == winner
        assert (row["game_id"], row["seat_0"], row["sha256"]) == (
            game.game_id,
            game.players[0],
            entry["sha256"],
        )
    assert len(members) == 2

    public_key = tournament.parent / "referee.key.pub"
    assert main(["replay", "verify", "--public-key", str(public_key), str(archive)]) == 0
    lines = capsys.readouterr().out.splitlines()
    assert len(lines) == 2 and all(": OK: " in line and "sha256 as indexed" in line for line in lines)
    assert all("signed by key" in line for line in lines)

    # One game of the archive, by member name or by game id.
    first = entries[0]
    assert main(["replay", "verify", f"{archive}:{first['member']}"]) == 0
    assert main(["replay", "show", f"{archive}:{first['game_id']}"]) == 0
    shown = capsys.readouterr().out
    assert "Round 1" in shown or "round 1" in shown.lower()
    page = tournament.parent / "game.html"
    assert main(["replay", "html", f"{archive}:{first['member']}", "-o", str(page)]) == 0
    assert page.read_text(encoding="utf-8").startswith("<!DOCTYPE html>")
    assert main(["replay", "redact", "--public", f"{archive}:{first['member']}"]) == 0
    assert (tournament.parent / "out" / f"{first['match_id']}.public.jsonl").is_file()
    assert main(["replay", "show", f"{archive}:nothing-like-it"]) == 1
    assert "holds no replay 'nothing-like-it'" in capsys.readouterr().err


def _rewrite(archive: Path, member: str, data: bytes, index_sha: str | None = None) -> None:
    """Replace one member's bytes (and, with index_sha, the index's sha256 of it)."""
    with zipfile.ZipFile(archive) as packed:
        contents = {name: packed.read(name) for name in packed.namelist()}
    contents[member] = data
    if index_sha is not None:
        index = json.loads(contents["index.json"])
        for entry in index["games"]:
            if entry["member"] == member:
                entry["sha256"] = index_sha
        contents["index.json"] = json.dumps(index).encode()
    with zipfile.ZipFile(archive, "w") as packed:
        for name, value in contents.items():
            packed.writestr(name, value)


def test_a_tampered_member_fails_verification(tournament: Path, capsys: pytest.CaptureFixture[str]) -> None:
    assert _export(tournament, capsys)[0] == 0
    archive = tournament.parent / "out" / "arch-games.zip"
    with zipfile.ZipFile(archive) as packed:
        member = sorted(n for n in packed.namelist() if n.startswith("replays/"))[0]
        original = packed.read(member)
    lines = original.splitlines(keepends=True)
    # Another bot name in the header: a change the index's sha256 and the hash chain both catch.
    lines[0] = lines[0].replace(b'"random"', b'"rand0m"', 1)
    assert lines[0] != original.splitlines(keepends=True)[0]
    tampered = b"".join(lines)
    _rewrite(archive, member, tampered)
    assert main(["replay", "verify", str(archive)]) == 1
    report = capsys.readouterr().out
    assert f"{archive}:{member}: FAILED: its sha256" in report and report.count(": OK: ") == 1
    # With the index's sha256 made to match, the replay's own chain still gives it away.
    _rewrite(archive, member, tampered, index_sha=sha256_hex(tampered))
    assert main(["replay", "verify", str(archive)]) == 1
    report = capsys.readouterr().out
    assert f"{archive}:{member}: FAILED: line 1" in report and "chain breaks" in report


def test_a_missing_replay_is_listed_and_named(tournament: Path, capsys: pytest.CaptureFixture[str]) -> None:
    store = Store(tournament.parent / "out" / "results.sqlite")
    lost = store.games("finished")[1]
    store.close()
    # The stored path is the played folder's; the copy's replay_dir is where the export finds it.
    (tournament.parent / "out" / "replays" / Path(str(lost.replay_path)).name).unlink()
    Path(str(lost.replay_path)).rename(Path(str(lost.replay_path)).with_suffix(".away"))
    try:
        out_file = tournament.parent / "elsewhere.zip"
        code, out, err = _export(tournament, capsys, "--out", str(out_file))
    finally:
        Path(str(lost.replay_path)).with_suffix(".away").rename(Path(str(lost.replay_path)))
    assert code == 1
    assert err == f"tichu tournament export: game {lost.game_id}: its replay file is missing\n"
    assert "1 without their replay" in out
    with zipfile.ZipFile(out_file) as packed:
        entries = json.loads(packed.read("index.json"))["games"]
        assert sum(n.startswith("replays/") for n in packed.namelist()) == 1
    missing = [e for e in entries if e["status"] == "missing"]
    assert [e["game_id"] for e in missing] == [lost.game_id] and missing[0]["sha256"] == ""
    assert main(["replay", "verify", str(out_file)]) == 1
    assert f"game {lost.game_id}: its replay was missing at export" in capsys.readouterr().out


def test_export_without_results(tmp_path: Path, capsys: pytest.CaptureFixture[str]) -> None:
    config = tmp_path / "none.toml"
    config.write_text(CONFIG.replace('signing_key = "referee.key"\n', ""), encoding="utf-8")
    code, _, err = _export(config, capsys)
    assert code == 1 and "no results yet" in err
    assert not (tmp_path / "out" / "results.sqlite").exists()
