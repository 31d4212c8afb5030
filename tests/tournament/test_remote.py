"""A remote entrant: the tournament appends its seat lines to a token file; a worker elsewhere plays them."""

from __future__ import annotations

import io
import socket
import subprocess
import sys
import threading
import time
from pathlib import Path

from referee.tournament.config import parse_config
from referee.tournament.runner import run_tournament
from referee.tournament.store import GameRow, Store
from tests.tournament.support import OUTPUTS, REPO, entrant


def _free_port() -> int:
    with socket.socket() as probe:
        probe.bind(("127.0.0.1", 0))
        port: int = probe.getsockname()[1]
        return port


def _feed(token_file: Path, worker: subprocess.Popen[bytes], stop: threading.Event) -> None:
    """`tail -f token_file | worker`: pass each new line on."""
    sent = 0
    while not stop.is_set():
        lines = token_file.read_text(encoding="utf-8").splitlines() if token_file.exists() else []
        for line in lines[sent:]:
            assert worker.stdin is not None
            worker.stdin.write(line.encode() + b"\n")
            worker.stdin.flush()
        sent = len(lines)
        time.sleep(0.05)


def _play_remote(
    tmp_path: Path, security: list[str], tls: str = "", server: str = "127.0.0.1"
) -> tuple[int, str, list[GameRow]]:
    """A tournament of a remote entrant ("far": HeuristicBot in a worker fed from its token file,
    connecting to `server` with `security`) against a local one: its exit code, output, games."""
    port = _free_port()
    config = parse_config(
        f"""
[tournament]
seed = "remote"
games_per_pairing = 2
listen = "127.0.0.1:{port}"
{tls}
{OUTPUTS}
[rules]
match_mode = "fixed_rounds:1"

[[entrants]]
name = "far"
remote = true
token_file = "tokens.txt"
{entrant("near", "clients.random_bot:RandomBot")}""",
        tmp_path / "t.toml",
    )
    worker = subprocess.Popen(
        [sys.executable, "-m", "referee.cli", "tournament", "worker", "clients.heuristic_bot:HeuristicBot",
         "--server", f"{server}:{port}", *security],
        cwd=REPO, stdin=subprocess.PIPE, stdout=subprocess.DEVNULL,
    )  # fmt: skip
    stop = threading.Event()
    feeder = threading.Thread(target=_feed, args=(tmp_path / "tokens.txt", worker, stop), daemon=True)
    feeder.start()
    out = io.StringIO()
    try:
        code = run_tournament(config, resume=False, out=out, live=False)
    finally:
        stop.set()
        feeder.join(5)
        worker.kill()
        worker.wait(10)
    tokens = (tmp_path / "tokens.txt").read_text(encoding="utf-8").splitlines()
    assert len(tokens) == 4  # two games, two seats of "far" in each
    assert all(line.split()[1] == "far" for line in tokens)
    assert out.getvalue().count("seat for far: match ") == 4
    store = Store(config.database)
    games = store.games()
    store.close()
    return code, out.getvalue(), games


def test_remote_entrant_plays_from_its_token_file(tmp_path: Path) -> None:
    code, out, games = _play_remote(tmp_path, ["--insecure"])
    assert code == 0, out
    assert [g.status for g in games] == ["finished", "finished"]
    assert not any(g.forfeit for g in games)


def _tls(tmp_path: Path, more: str = "") -> tuple[Path, str]:
    from tests.clients.test_tls import certificate

    cert, key = certificate(tmp_path, "referee", ("localhost",))
    return cert, f'tls_cert = "{cert.name}"\ntls_key = "{key.name}"\n{more}'


def test_remote_entrant_plays_over_tls_while_local_bots_use_loopback(tmp_path: Path) -> None:
    cert, tls = _tls(tmp_path)
    # The remote worker trusts only the tournament's certificate, and connects by its name.
    code, out, games = _play_remote(tmp_path, ["--ca-file", str(cert)], tls, server="localhost")
    assert code == 0, out
    assert [g.status for g in games] == ["finished", "finished"]
    assert not any(g.forfeit for g in games)  # the local bot's seats played too, on loopback


def test_a_plaintext_worker_cannot_play_a_tls_tournament(tmp_path: Path) -> None:
    _, tls = _tls(tmp_path, "start_timeout_s = 5")
    code, out, games = _play_remote(tmp_path, ["--insecure"], tls)
    assert code == 1
    assert [g.status for g in games] == ["pending", "pending"]
    assert out.count("not every seat connected within 5 s") == 2
