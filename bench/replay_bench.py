"""The replay viewer on a full game: the replay's size, the page's size, how fast Chromium opens it.

Run `.venv/bin/python bench/replay_bench.py` (about 30 s: it plays a demo match first, as
`tichu demo` does, four bot processes over gRPC) or `.venv/bin/python bench/replay_bench.py FILE`
for a replay you have. It writes the page with `tichu replay html`'s code, then opens it in a
headless Chromium (Debian's `chromium`) several times: "open" runs from the navigation's start to
the moment the page's script says it is ready (its performance.now(), the page's own clock), and
"wall" from the DevTools command to the ready flag seen by this process. Bars: replay under
1 MB, page open under 1 s. The machine is shared: read the figures with the load average.
"""

from __future__ import annotations

import argparse
import os
import statistics
import subprocess
import sys
import tempfile
import time
from pathlib import Path

REPO = Path(__file__).resolve().parent.parent
sys.path.insert(0, str(REPO))

from referee.match.records import EventRecord  # noqa: E402 (after the path is set)
from referee.replay import read_replay  # noqa: E402
from referee.replay.html import render_html  # noqa: E402
from tests.replay.browser import Browser, find_chromium  # noqa: E402

READY = "window.tichuViewer !== undefined && window.tichuViewer.ready"
REPLAY_BAR_KB = 1024
OPEN_BAR_MS = 1000


def demo_replay(folder: Path, seed: str) -> Path:
    """Play one demo match (`tichu demo`) in `folder`; the replay it wrote."""
    subprocess.run(
        [sys.executable, "-m", "referee.cli", "demo", "--seed", seed],
        cwd=folder,
        check=True,
        stdout=subprocess.DEVNULL,
        timeout=900,
    )
    (path,) = (folder / "replays" / "out").glob("*.jsonl")
    return path


def open_times(browser: Browser, url: str, repeats: int) -> tuple[list[float], list[float], list[float]]:
    """Open the page `repeats` times from a blank page: ms to ready by the page's clock, ms of
    that in the viewer's script, and wall ms."""
    own: list[float] = []
    script: list[float] = []
    wall: list[float] = []
    for run in range(repeats):
        browser.navigate("about:blank")
        browser.wait_for("location.href === 'about:blank'")
        started = time.perf_counter()
        browser.navigate(f"{url}?run={run}")  # a new address each time: no cached document
        browser.wait_for(READY, timeout_s=60)
        wall.append((time.perf_counter() - started) * 1000)
        timings = browser.evaluate("window.tichuViewer.timings")
        own.append(float(timings["ready"]))
        script.append(float(timings["ready"]) - float(timings["start"]))
    return own, script, wall


def step_ms(browser: Browser, steps: int = 200) -> float:
    """The mean time the page takes to draw the next step (key presses sent inside the page)."""
    browser.evaluate("location.hash = '#step=0'")
    browser.wait_for("window.tichuViewer.step === 0")
    took = browser.evaluate(
        "(() => { const t = performance.now();"
        f" for (let i = 0; i < {steps}; i++) document.dispatchEvent("
        "new KeyboardEvent('keydown', {key: 'ArrowRight'}));"
        " document.body.getBoundingClientRect(); return performance.now() - t; })()"
    )
    return float(took) / steps


def main(argv: list[str] | None = None) -> int:
    """Measure and print the figures; 1 if a bar is missed."""
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("replay", nargs="?", type=Path, help="a replay file (default: play a demo match)")
    parser.add_argument("--seed", default="2024", help="the demo match's seed (default 2024)")
    parser.add_argument("--repeats", type=int, default=7, help="page opens to time (default 7)")
    args = parser.parse_args(argv)
    chromium = find_chromium()
    if chromium is None:
        print("no chromium binary found: `apt-get install chromium` (Debian) first", file=sys.stderr)
        return 2
    with tempfile.TemporaryDirectory(prefix="replay-bench-") as folder:
        path = args.replay or demo_replay(Path(folder), args.seed)
        replay = read_replay(path)
        started = time.perf_counter()
        html = render_html(replay)
        build_ms = (time.perf_counter() - started) * 1000
        page = Path(folder) / "viewer.html"
        page.write_text(html, encoding="utf-8")
        with Browser(chromium) as browser:
            own, script, wall = open_times(browser, page.as_uri(), args.repeats)
            per_step = step_ms(browser)
            errors = list(browser.errors)
        replay_kb = path.stat().st_size / 1024
        page_kb = page.stat().st_size / 1024
    events = sum(1 for r in replay.records if isinstance(r, EventRecord))
    rounds = replay.result.rounds if replay.result is not None else "?"
    print(f"Replay: {path.name}: {replay_kb:.0f} KB, {len(replay.records) + 1} records, {events} events, "
          f"{rounds} rounds (bar: under {REPLAY_BAR_KB} KB)")  # fmt: skip
    print(f"HTML page: {page_kb:.0f} KB, written in {build_ms:.0f} ms (replay re-run by the engine)")
    print(
        f"Open in headless Chromium, {args.repeats} times: median {statistics.median(own):.0f} ms, "
        f"best {min(own):.0f} ms to ready (bar: under {OPEN_BAR_MS} ms); wall median "
        f"{statistics.median(wall):.0f} ms, best {min(wall):.0f} ms; the viewer's script: median "
        f"{statistics.median(script):.0f} ms, best {min(script):.0f} ms"
    )
    print(f"Next step drawn in {per_step:.1f} ms on average; JavaScript errors: {len(errors)}")
    load = os.getloadavg()
    print(f"Load average {load[0]:.1f} {load[1]:.1f} {load[2]:.1f} on {os.cpu_count()} cores")
    replay_arg = f" {args.replay}" if args.replay else f" --seed {args.seed}"
    print(f"Reproduce: .venv/bin/python bench/replay_bench.py{replay_arg} --repeats {args.repeats}")
    ok = replay_kb < REPLAY_BAR_KB and statistics.median(own) < OPEN_BAR_MS and not errors
    return 0 if ok else 1


if __name__ == "__main__":
    sys.exit(main())
