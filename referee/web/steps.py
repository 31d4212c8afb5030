"""A replay as the game page steps through it: the viewer's step data, what is folded, the check.

A replay that the engine can re-run gives the viewer's full data (referee.replay.html.build_data:
every seat's hand at every step, derived by the rules engine, never by the page). A public view
(`tichu replay redact --public`, or a game's public view served by the archive), a replay whose
seed is not revealed, or one that does not verify, gives the public events only: the table shows
the cards played, the calls, who is out and the score, and no hand.
"""

from __future__ import annotations

import functools
from pathlib import Path
from typing import Any

from cryptography.hazmat.primitives.asymmetric.ed25519 import Ed25519PublicKey

from referee.match.moves import ReplayMismatchError, SeedHiddenError
from referee.match.records import EventRecord
from referee.match.visitor import ReplayVisitor
from referee.replay.format import Replay, parse_lines, read_lines
from referee.replay.html import DATA_VERSION, ViewerData, build_data
from referee.replay.redact import redacted_lines
from referee.replay.signing import KeyFileError, load_public_key
from referee.replay.text import describe
from referee.replay.verify import verify
from referee.rules.cards import CARD_NAMES, rank_name
from referee.rules.events import (
    Called,
    DragonGiven,
    LeadPassed,
    Passed,
    Played,
    RoundScored,
    RoundStarted,
    TrickWon,
    WentOut,
    WishFulfilled,
)

# The event types folded away by default: a bomb window that closed with no bomb says nothing.
FOLDED_TYPES = frozenset({"window_closed"})
CACHE_SIZE = 64


def verification(
    replay: Replay, public_key: Ed25519PublicKey | None, visitor: ReplayVisitor | None = None
) -> dict[str, Any]:
    """What `tichu replay verify` says of the replay, as the page shows it: ok, and each check.
    `visitor` sees the moves' re-run, when there is one."""
    try:
        verdict = verify(replay, public_key, visitor)
    except ReplayMismatchError as error:
        return {"ok": False, "checks": [f"does not verify: {error}"], "chain": _chain(replay)}
    # The chain's and the signature's parts are shown on lines of their own.
    checks = verdict.text.split("; ")[2 if replay.header.chained else 1 :]
    return {"ok": True, "checks": checks, "chain": _chain(replay)}


def _chain(replay: Replay) -> str:
    if not replay.header.chained:
        return f"{replay.header.format}: no hash chain (written before replays were chained)"
    if replay.chain_break is not None:
        line, why = replay.chain_break
        return f"broken at line {line}: {why}"
    head = replay.hashes[-1] if replay.hashes else ""
    return f"intact over {len(replay.records) + 1} lines, head {head[:16]}"


def _signature(replay: Replay, public_key: Ed25519PublicKey | None, ok: bool) -> str:
    result = replay.result
    if result is None:
        return "no result yet, so no signature"
    if not result.signature:
        return "not signed"
    if public_key is None:
        return "signed; not checked here (no public key given: tichu web --public-key KEY.pub)"
    return "signed by the referee's key: valid" if ok else "signed, but the signature does not hold"


def _hex(mask: int) -> str:
    return format(mask, "x")


def _combo(event: Played) -> str:
    """The combination's name (the Dog, keyed below every rank, has no rank to name)."""
    try:
        return event.combo.describe()
    except KeyError:
        return event.combo.kind.name.lower()


def public_data(replay: Replay) -> dict[str, Any]:
    """The viewer's data from the public events alone (no hand is known): the same shape as
    build_data's, every hand empty, `match.public` set."""
    header = replay.header
    players = len(header.seats)
    names = replay.seat_names()
    state: dict[str, Any] = {
        "round": 0, "dealer": 0, "wish": "", "calls": [0] * players, "out": [], "trick": [], "top": -1,
        "passed": 0, "points": [0] * players, "scores": [0, 0],
    }  # fmt: skip

    def snapshot() -> list[Any]:
        return [
            state["round"], state["dealer"], "public view", -1, state["wish"], -1, ["0"] * players,
            ["0"] * players, list(state["calls"]), list(state["out"]), [list(t) for t in state["trick"]],
            state["top"], state["passed"], list(state["points"]), list(state["scores"]), [],
            [None] * players, [[] for _ in range(players)],
        ]  # fmt: skip

    states: list[list[Any]] = []
    steps: list[list[Any]] = []
    rounds: list[dict[str, Any]] = []
    plays: list[str] = []
    for record in replay.records:
        if not isinstance(record, EventRecord) or record.private_to is not None:
            continue
        event = record.event
        step = len(steps)
        if isinstance(event, RoundStarted):
            state.update(round=event.round, dealer=event.dealer, wish="", calls=[0] * players, out=[])
            state.update(trick=[], top=-1, passed=0, points=[0] * players)
            rounds.append({"start": step, "dealer": event.dealer, "tricks": [], "score": None})
            plays = []
        elif isinstance(event, Called):
            state["calls"][event.seat] = 2 if event.call == "grand_tichu" else 1
        elif isinstance(event, Played):
            state["trick"].append([event.seat, _hex(event.cards), _combo(event)])
            state["top"], state["passed"] = event.seat, 0
            if event.wish:
                state["wish"] = rank_name(event.wish)
            plays.append(describe(event))
        elif isinstance(event, Passed):
            state["passed"] |= 1 << event.seat
            plays.append(describe(event))
        elif isinstance(event, WishFulfilled):
            state["wish"] = ""
        elif isinstance(event, TrickWon | DragonGiven | LeadPassed):
            if isinstance(event, TrickWon | DragonGiven):
                winner = event.to if isinstance(event, DragonGiven) else event.seat
                state["points"][winner] += event.points
            state.update(trick=[], top=-1, passed=0)
            if rounds:
                rounds[-1]["tricks"].append({"plays": plays, "end": describe(event)})
            plays = []
        elif isinstance(event, WentOut):
            state["out"].append(event.seat)
        elif isinstance(event, RoundScored):
            state["scores"] = list(event.totals)
            if rounds:
                rounds[-1]["score"] = {
                    "card_points": list(event.card_points), "call_points": list(event.call_points),
                    "bonus_points": list(event.bonus_points), "round_points": list(event.round_points),
                    "totals": list(event.totals), "step": step,
                }  # fmt: skip
        states.append(snapshot())
        seat = getattr(event, "seat", -1)
        steps.append(
            [
                record.version, step, -1, round(record.t_ms), max(len(rounds) - 1, 0),
                len(rounds[-1]["tricks"]) if rounds else 0, seat if isinstance(seat, int) else -1,
                event.type, describe(event),
            ]
        )  # fmt: skip
    if not steps:
        states.append(snapshot())
        steps.append([0, 0, -1, 0, 0, 0, -1, "", "no public event yet"])
    result = replay.result
    return {
        "v": DATA_VERSION,
        "match": {
            "id": replay.match_id,
            "created_at": header.created_at,
            "players": players,
            "names": names,
            "target": None,
            "mode": "",
            "result": None if result is None else result.reason,
            "truncated": replay.truncated,
            "public": True,
        },
        "cards": list(CARD_NAMES),
        "states": states,
        "moves": [None] * (max((s[0] for s in steps), default=0) + 1),
        "steps": steps,
        "rounds": rounds,
        "think": [[] for _ in range(players)],
        "summary": [line.to_json() for line in result.summary]
        if result is not None and result.summary
        else [],
    }


def page_data(
    replay: Replay, public_key: Ed25519PublicKey | None = None, public: bool = False
) -> dict[str, Any]:
    """The game page's data: the viewer's steps (the full view when the engine can re-run the
    replay, else the public one), the steps folded by default, the score per hand, the check."""
    viewer = None if public or replay.withheld else ViewerData()
    # One re-run checks the moves and collects the viewer's steps.
    checked = verification(replay, public_key, viewer)
    why_public = ""
    if viewer is None:
        data = public_data(replay)
        why_public = "a public view: the hands are not shown" if replay.withheld or public else ""
    else:
        try:
            # The viewer's data does not need the chain or signature to hold: when the check
            # failed before the moves re-ran to their end, they are re-run for the page alone.
            data = viewer.data(replay) if viewer.run is not None else build_data(replay)
            data["match"]["public"] = False
        except SeedHiddenError:
            data = public_data(replay)
            why_public = "the seed is not revealed yet: only the public events are shown"
        except ReplayMismatchError as error:
            data = public_data(replay)
            why_public = f"the replay does not verify ({error}): only its public events are shown"
    checked["signature"] = _signature(replay, public_key, checked["ok"])
    data["verification"] = checked
    data["match"]["why_public"] = why_public
    data["folded"] = [i for i, step in enumerate(data["steps"]) if step[7] in FOLDED_TYPES]
    data["hands"] = [
        {"hand": i + 1, "start": r["start"], "totals": r["score"]["totals"] if r["score"] else None}
        for i, r in enumerate(data["rounds"])
    ]
    return data


def load_key(path: Path | None) -> Ed25519PublicKey | None:
    """The public key at `path`, or None (none given, or unreadable: the page then says not checked)."""
    if path is None:
        return None
    try:
        return load_public_key(path)
    except (OSError, KeyFileError):
        return None


def read_public_view(path: Path) -> Replay:
    """A replay's public (spectator's) view, redacted in memory as `tichu replay redact --public`."""
    raw = [line for line in read_lines(path) if line.endswith(b"\n")]
    replay = parse_lines(raw, path)
    return parse_lines(redacted_lines(replay, raw, None), path)


@functools.lru_cache(maxsize=CACHE_SIZE)
def _cached(path: str, stamp: tuple[int, int], key: str, public: bool) -> dict[str, Any]:
    source = Path(path)
    replay = read_public_view(source) if public else _read(source)
    return page_data(replay, load_key(Path(key)) if key else None, public)


def _read(path: Path) -> Replay:
    from referee.replay.format import read_replay

    return read_replay(path)


def replay_data(path: Path, public_key: Path | None = None, public: bool = False) -> dict[str, Any]:
    """The page data of the replay file at `path`, cached while the file is unchanged; OSError or
    ReplayFormatError when it cannot be read."""
    info = path.stat()
    return _cached(str(path), (info.st_mtime_ns, info.st_size), str(public_key or ""), public)


__all__ = ["FOLDED_TYPES", "page_data", "public_data", "replay_data", "verification"]
