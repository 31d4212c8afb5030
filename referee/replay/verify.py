"""What `tichu replay verify` checks, and what a replay proves.

Format 2: the hash chain from the header to the last line (any changed, dropped, inserted or
reordered line breaks it at that line), the referee's signature of the head when a public key is
given, the seed against the header's commitment, then the moves through the rules engine (as
for format 1). A redacted view proves that its lines are those of the signed match; the moves it
withholds cannot be re-run. A replay whose seed is not revealed yet (a match still running)
verifies as far as its chain goes.
"""

from __future__ import annotations

from dataclasses import dataclass

from cryptography.hazmat.primitives.asymmetric.ed25519 import Ed25519PublicKey

from referee.match.moves import ReplayMismatchError, Rerun, SeedHiddenError, rerun
from referee.match.visitor import ReplayVisitor
from referee.replay.format import Replay
from referee.replay.signing import fingerprint, signature_is_valid


@dataclass(frozen=True, slots=True)
class Verdict:
    """A replay that verified: what was checked, in words, for its OK line, and the re-run
    (None when the moves could not be re-run: a redacted view, a seed not revealed yet)."""

    text: str
    run: Rerun | None = None


def verify(
    replay: Replay, public_key: Ed25519PublicKey | None = None, visitor: ReplayVisitor | None = None
) -> Verdict:
    """Check a replay; ReplayMismatchError names the first line that fails. `visitor` sees the
    moves' re-run, when there is one (after the chain and the signature held)."""
    parts: list[str] = []
    header = replay.header
    lines = len(replay.records) + 1
    result = replay.result
    if header.chained:
        if replay.chain_break is not None:
            raise ReplayMismatchError(*replay.chain_break)
        parts.append(f"chain of {lines} lines intact, head {replay.hashes[-1][:16]}")
        parts.append(_signature(replay, public_key))
    else:
        if public_key is not None:
            raise ReplayMismatchError(1, f"a {header.format} replay is not signed (it has no chain)")
        parts.append(f"{header.format}: no chain (written before replays were chained)")
    if replay.withheld:
        parts.append(
            f"a redacted view: {replay.withheld} of {lines} lines withheld, so the moves are not re-run"
        )
        return Verdict("; ".join(parts))
    try:
        run = rerun(header, replay.records, visitor=visitor)
    except SeedHiddenError:
        parts.append("the seed is not revealed yet, so the moves are not re-run")
        return Verdict("; ".join(parts))
    if header.chained and result is not None:
        parts.append("the seed is the one committed to")
    state = "finished" if result is not None else "unfinished (verified so far)"
    parts.append(
        f"{run.moves} moves and {len(run.events)} events re-run, scores {list(run.state.scores)}, {state}"
    )
    return Verdict("; ".join(parts), run)


def _signature(replay: Replay, public_key: Ed25519PublicKey | None) -> str:
    """The signature's part of the verdict (ReplayMismatchError when it does not hold)."""
    result = replay.result
    line = len(replay.records) + 1
    if result is None:
        if public_key is not None:
            raise ReplayMismatchError(line, "the match is not over: there is no signed result yet")
        return "no result yet, so no signature"
    if not result.signature:
        if public_key is not None:
            raise ReplayMismatchError(line, "the result is not signed")
        return "not signed"
    if public_key is None:
        return "signature not checked (no --public-key)"
    if not signature_is_valid(public_key, replay.hashes[-1], result.signature):
        raise ReplayMismatchError(
            line, f"the signature is not key {fingerprint(public_key)}'s signature of the head"
        )
    return f"signed by key {fingerprint(public_key)}"
