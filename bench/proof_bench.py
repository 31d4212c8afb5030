"""What provable fairness costs: replay size, verification time, and the referee's hashing per line.

Run `.venv/bin/python bench/proof_bench.py` (it plays a demo match first, as `tichu demo` does:
four bot processes over gRPC, a signed replay) or `.venv/bin/python bench/proof_bench.py FILE`
for a signed tichu-replay/2 you have. The same match is also written as format 1 would have held
it (the seed in the header, no hashes, no reveal, no signature), and the two are measured side by
side, alternating, in CPU time of this process with the garbage collector on; the figures are
ratios of the two, which a loaded machine changes far less than their absolute values.
"""

from __future__ import annotations

import argparse
import json
import os
import statistics
import subprocess
import sys
import tempfile
import time
from collections.abc import Callable
from pathlib import Path

REPO = Path(__file__).resolve().parent.parent
sys.path.insert(0, str(REPO))

from referee.match.digests import head_message, line_hash  # noqa: E402
from referee.match.records import DecisionRecord, WindowRecord  # noqa: E402
from referee.replay.format import parse_lines  # noqa: E402
from referee.replay.redact import redacted_lines  # noqa: E402
from referee.replay.signing import (  # noqa: E402
    load_public_key,
    load_signer,
    signature_is_valid,
    write_key_pair,
)
from referee.replay.verify import verify  # noqa: E402


def played_demo(folder: Path, seed: str) -> Path:
    """The replay `tichu demo` writes in `folder` (its own key signed it, and is gone with it)."""
    command = [sys.executable, "-m", "referee.cli", "demo", "--seed", seed]
    subprocess.run(command, cwd=folder, check=True, stdout=subprocess.DEVNULL, timeout=900)
    return next((folder / "replays" / "out").glob("*.jsonl"))


def signed_again(lines: list[bytes], key_path: Path) -> list[bytes]:
    """The lines with the result signed by a key of this benchmark (the demo's own key is gone
    with its process): the signature is outside the chain, so the chain is unchanged."""
    data = json.loads(lines[-1])
    data["signature"] = load_signer(key_path)(head_message(data["h"])).hex()
    return [*lines[:-1], (json.dumps(data, separators=(",", ":"), ensure_ascii=False) + "\n").encode()]


def as_format_1(lines: list[bytes]) -> list[bytes]:
    """The same match as a format-1 replay: what the chain, the commitment and the reveal add."""
    records = [json.loads(raw) for raw in lines]
    reveal = next(r for r in records if r["kind"] == "reveal")
    header = records[0]
    header.update(format="tichu-replay/1", seed=reveal["seed"])
    for key in ("seed_commitment", "sealed_seed"):
        header.pop(key)
    out = []
    for data in records:
        if data["kind"] == "reveal":
            continue
        data.pop("h")
        data.pop("signature", None)
        out.append((json.dumps(data, separators=(",", ":"), ensure_ascii=False) + "\n").encode())
    return out


def cpu_ms(work: Callable[[], object]) -> float:
    """The CPU time of one call, in ms (garbage collector on, as users run)."""
    started = time.process_time()
    work()
    return (time.process_time() - started) * 1000


def main(argv: list[str] | None = None) -> int:
    """Measure and print the figures."""
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("file", nargs="?", type=Path, help="a signed tichu-replay/2 (default: play a demo)")
    parser.add_argument(
        "--public-key", type=Path, help="the key that signed FILE (default: the benchmark signs it again)"
    )
    parser.add_argument("--seed", default="2024", help="the demo's deal seed")
    parser.add_argument("--repeats", type=int, default=7)
    args = parser.parse_args(argv)
    with tempfile.TemporaryDirectory() as scratch:
        path = played_demo(Path(scratch), args.seed) if args.file is None else args.file
        lines = path.read_bytes().splitlines(keepends=True)
        if args.public_key is not None:
            key = load_public_key(args.public_key)
        else:
            key = load_public_key(write_key_pair(Path(scratch) / "bench.key"))
            lines = signed_again(lines, Path(scratch) / "bench.key")
        old = as_format_1(lines)
        new_bytes, old_bytes = sum(map(len, lines)), sum(map(len, old))
        replay = parse_lines(lines)
        moves = sum(isinstance(r, DecisionRecord | WindowRecord) for r in replay.records)
        print(f"Replay: {path.name}: {len(lines)} lines, {moves} decisions and windows")
        print(
            f"Size: format 2 {new_bytes / 1024:.0f} KB, as format 1 {old_bytes / 1024:.0f} KB: "
            f"x{new_bytes / old_bytes:.2f} ({(new_bytes - old_bytes) / len(lines):.0f} bytes per line)"
        )
        timings: dict[str, list[float]] = {name: [] for name in ("read 2", "read 1", "verify 2", "verify 1")}
        for _ in range(args.repeats):  # alternating, so that the machine's load falls on both alike
            timings["read 2"].append(cpu_ms(lambda: parse_lines(lines)))
            timings["read 1"].append(cpu_ms(lambda: parse_lines(old)))
            timings["verify 2"].append(cpu_ms(lambda: verify(parse_lines(lines), key)))
            timings["verify 1"].append(cpu_ms(lambda: verify(parse_lines(old))))
        median = {name: statistics.median(values) for name, values in timings.items()}
        print(
            f"Reading (the chain followed): {median['read 2']:.0f} ms vs {median['read 1']:.0f} ms, "
            f"x{median['read 2'] / median['read 1']:.2f}"
        )
        print(
            "Verifying (the chain, the signature, the seed, the moves): "
            f"{median['verify 2']:.0f} ms vs {median['verify 1']:.0f} ms, "
            f"x{median['verify 2'] / median['verify 1']:.2f}"
        )
        data = [json.loads(raw) for raw in lines]
        hashing = statistics.median(cpu_ms(lambda: _chain(data)) for _ in range(args.repeats))
        print(
            f"The referee's hashing: {hashing * 1000 / len(lines):.1f} us of CPU per line, "
            f"{hashing * 1000 / max(moves, 1):.1f} us per decision"
        )
        if replay.result is not None:
            head, signature = replay.hashes[-1], replay.result.signature
            checks = 200
            ms = cpu_ms(lambda: [signature_is_valid(key, head, signature) for _ in range(checks)])
            print(f"Checking a signature: {ms * 1000 / checks:.0f} us")
        views = statistics.median(
            cpu_ms(lambda: redacted_lines(replay, lines, 0)) for _ in range(args.repeats)
        )
        print(f"A seat's redacted view: {views:.0f} ms (the file already read)")
        load = os.getloadavg()
        print(f"Load average {load[0]:.1f} {load[1]:.1f} {load[2]:.1f} on {os.cpu_count()} cores")
        where = "" if args.file is None else f" {args.file}"
        if args.public_key is not None:
            where += f" --public-key {args.public_key}"
        print(f"Reproduce: .venv/bin/python bench/proof_bench.py{where} --repeats {args.repeats}")
    return 0


def _chain(data: list[dict[str, object]]) -> None:
    head = None
    for line in data:
        head = line_hash(head, line)


if __name__ == "__main__":
    sys.exit(main())
