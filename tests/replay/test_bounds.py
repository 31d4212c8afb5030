"""The replay tools read hostile files within bounds (referee.replay.bounds): a zip bomb, a deeply
nested line, an endless line, duplicate members, and a signed replay's bytes made malleable are
each refused with one clear line, never a traceback or a machine out of memory."""

from __future__ import annotations

import json
import subprocess
import sys
import zipfile
from collections.abc import Callable
from pathlib import Path

import pytest

from referee.replay.bounds import MAX_LINE_BYTES, MAX_REPLAY_BYTES
from referee.replay.format import ReplayFormatError, read_replay
from tests.replay.conftest import Played


def tichu(*args: str) -> subprocess.CompletedProcess[str]:
    """`tichu ARGS` in a process of its own."""
    return subprocess.run(
        [sys.executable, "-m", "referee.cli", *args], capture_output=True, text=True, timeout=300, check=False
    )


# Runs a command and reports its peak memory: measured in a parent of its own, as the largest
# child of this test process would count any other test's child that ended meanwhile too.
_PEAK = """
import json, resource, subprocess, sys
done = subprocess.run(sys.argv[1:], capture_output=True, text=True, timeout=300, check=False)
peak = resource.getrusage(resource.RUSAGE_CHILDREN).ru_maxrss
print(json.dumps([done.returncode, done.stdout, done.stderr, peak]))
"""


def tichu_with_peak(*args: str) -> tuple[subprocess.CompletedProcess[str], int]:
    """`tichu ARGS` in a process of its own, and its peak resident memory in KiB."""
    wrapper = subprocess.run(
        [sys.executable, "-c", _PEAK, sys.executable, "-m", "referee.cli", *args],
        capture_output=True,
        text=True,
        timeout=320,
        check=True,
    )
    code, out, err, peak_kib = json.loads(wrapper.stdout)
    return subprocess.CompletedProcess(args, code, out, err), peak_kib


def refused_in_one_line(done: subprocess.CompletedProcess[str], words: str) -> None:
    """The command failed with `words` in one line of its error, and no traceback."""
    assert done.returncode != 0, done.stdout
    assert "Traceback" not in done.stderr + done.stdout, done.stderr
    lines = [line for line in (done.stderr + done.stdout).splitlines() if words in line]
    assert len(lines) == 1, (words, done.stdout, done.stderr)


def test_a_line_nested_100_000_deep_is_refused_by_every_tool(played: Played, tmp_path: Path) -> None:
    deep = tmp_path / "deep.jsonl"
    header = played.path.read_bytes().splitlines(keepends=True)[0]
    deep.write_bytes(header + b"[" * 100_000 + b"]" * 100_000 + b"\n")
    for command in (("verify",), ("show",), ("html", "-o", str(tmp_path / "page.html"))):
        refused_in_one_line(tichu("replay", *command[:1], str(deep), *command[1:]), "nested too deeply")


def test_a_line_past_the_bound_is_refused_before_it_is_read_whole(tmp_path: Path) -> None:
    endless = tmp_path / "endless.jsonl"
    endless.write_bytes(b"{" + b" " * (MAX_LINE_BYTES + 10) + b"}\n")
    with pytest.raises(ReplayFormatError, match="a line over 1,048,576 bytes"):
        read_replay(endless)


def test_a_signed_replay_with_a_duplicate_key_or_extra_spaces_is_refused(
    played: Played, tmp_path: Path
) -> None:
    lines = played.path.read_bytes().splitlines(keepends=True)
    assert read_replay(played.path).header.chained  # a chained (and signable) replay
    edits: dict[str, Callable[[bytes], bytes]] = {
        "duplicate": lambda line: line.replace(b'{"kind":', b'{"kind":"x","kind":', 1),
        "spaces": lambda line: line.replace(b'":', b'": ', 1),
    }
    for name, edit in edits.items():
        forged = tmp_path / f"{name}.jsonl"
        # The same meaning in other bytes: its chain still holds, so only the byte form tells.
        forged.write_bytes(b"".join([lines[0], edit(lines[1]), *lines[2:]]))
        assert json.loads(edit(lines[1])) == json.loads(lines[1])
        refused_in_one_line(tichu("replay", "verify", str(forged)), "not the byte form the referee writes")


def test_a_zip_bomb_is_refused_within_100_mb(tmp_path: Path) -> None:
    bomb = tmp_path / "bomb.zip"
    with (
        zipfile.ZipFile(bomb, "w", compression=zipfile.ZIP_DEFLATED) as packed,
        packed.open("game.jsonl", "w", force_zip64=True) as member,
    ):
        chunk = b"\0" * (1 << 20)
        for _ in range(256):  # 256 MiB of zeros: about 250 KB packed
            member.write(chunk)
    assert bomb.stat().st_size < 2 << 20
    done, peak_kib = tichu_with_peak("replay", "verify", str(bomb))
    refused_in_one_line(done, "a replay is never that large or that compressible")
    assert peak_kib < 100 * 1024, f"{peak_kib} KiB"
    assert MAX_REPLAY_BYTES < 256 << 20


def test_an_archive_with_a_member_twice_is_refused(played: Played, tmp_path: Path) -> None:
    twice = tmp_path / "twice.zip"
    with pytest.warns(UserWarning, match="Duplicate name"), zipfile.ZipFile(twice, "w") as packed:
        packed.writestr("game.jsonl", played.path.read_bytes())
        packed.writestr("game.jsonl", played.path.read_bytes())
    refused_in_one_line(tichu("replay", "verify", str(twice)), "is there twice")
