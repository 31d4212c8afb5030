"""What a tichu-replay/2 proves: the committed seed, the hash chain, the signature, redacted views.

One signed match (random bots with bombs and calls, two deals) is played over real gRPC; every
test works on a copy of its file. Each tampering is refused naming its line; the untouched file
and every seat's and the spectators' views verify against the same signature, and a view holds
no card its seat could not see (R-INFO-1).
"""

from __future__ import annotations

import asyncio
import gzip
import json
import random
import re
import stat
from collections.abc import Callable
from dataclasses import dataclass
from pathlib import Path
from typing import Any

import pytest
from cryptography.hazmat.primitives.asymmetric.ed25519 import Ed25519PublicKey
from structlog.testing import capture_logs

from referee.cli import main as tichu
from referee.match.digests import digest_bytes, line_hash, seed_commitment
from referee.match.moves import ReplayMismatchError
from referee.match.proof import SeedSecret
from referee.match.records import (
    EventRecord,
    Line,
    RevealRecord,
    record_from_json,
)
from referee.replay import ReplayFormatError, read_replay
from referee.replay.cli import verify_files
from referee.replay.format import parse_lines
from referee.replay.redact import redact
from referee.replay.signing import fingerprint, load_public_key, write_key_pair
from referee.replay.verify import verify
from referee.rules import OFFICIAL, new_game
from referee.scripted import random_policy
from referee.server.front import Referee
from referee.server.seeds import SealError, seal, unseal
from referee.wire.tichu.v1 import referee_pb2 as pb
from tests.replay.conftest import Played, play_recorded_match
from tests.server.support import CARD, ORGANISER, ORGANISER_METADATA, join, referee, run
from tests.server.test_hidden import allowed, known_cards

REPO = Path(__file__).resolve().parents[2]
Lines = list[bytes]


@dataclass(frozen=True)
class Signed:
    """A signed match: its replay, its key pair, a second match and another key."""

    played: Played
    public_key: Ed25519PublicKey
    public_path: Path
    other_key: Ed25519PublicKey
    second: Played  # another match of the same referee and seed, for splicing


@pytest.fixture(scope="module")
def signed(tmp_path_factory: pytest.TempPathFactory) -> Signed:
    folder = tmp_path_factory.mktemp("signed")
    public_path = write_key_pair(folder / "referee.key")
    other = write_key_pair(folder / "other.key")
    played = play_recorded_match(folder / "a", seed="proof", rounds=2, signing_key=folder / "referee.key")
    second = play_recorded_match(folder / "b", seed="proof", rounds=2, signing_key=folder / "referee.key")
    return Signed(played, load_public_key(public_path), public_path, load_public_key(other), second)


def _lines(played: Played) -> Lines:
    return played.path.read_bytes().splitlines(keepends=True)


def _refusal(lines: Lines, key: Ed25519PublicKey | None) -> tuple[int, str]:
    """The line a verifier refuses these lines at, and why (AssertionError if it accepts them)."""
    try:
        verify(parse_lines(lines), key)
    except ReplayMismatchError as error:
        return error.line, error.message
    except ReplayFormatError as error:
        found = re.match(r"replay:(\d+): (.*)", str(error))
        assert found is not None, str(error)
        return int(found[1]), found[2]
    raise AssertionError("the verifier accepted a changed replay")


def _index(lines: Lines, kind: str, nth: int = 0, where: Callable[[dict[str, Any]], bool] = bool) -> int:
    """The index of the nth line of a kind (that `where` accepts)."""
    found = [i for i, raw in enumerate(lines) if (d := json.loads(raw))["kind"] == kind and where(d)]
    return found[nth]


def _edit(lines: Lines, index: int, change: Callable[[dict[str, Any]], None]) -> Lines:
    data = json.loads(lines[index])
    change(data)
    return [*lines[:index], (json.dumps(data, separators=(",", ":")) + "\n").encode(), *lines[index + 1 :]]


def _rechain(lines: Lines) -> Lines:
    """The lines with every h recomputed: what a forger without the signing key can do."""
    out, head = [], None
    for raw in lines:
        data = json.loads(raw)
        head = line_hash(head, data)
        data["h"] = head
        out.append((json.dumps(data, separators=(",", ":")) + "\n").encode())
    return out


# ------------------------------------------------------------------------------ the untouched match


def test_a_signed_match_verifies_with_its_key_and_its_header_hides_the_seed(signed: Signed) -> None:
    played = signed.played
    replay = read_replay(played.path)
    header = json.loads(_lines(played)[0])
    assert "seed" not in header and len(header["seed_commitment"]) == 64
    # The commitment the organiser got from CreateMatch, each seat in its Welcome, and the file.
    assert played.seed_commitment == header["seed_commitment"]
    assert played.welcomed == [header["seed_commitment"]] * 4
    # The result carries the head of the chain (its own h) and the signature of it, as the
    # MatchResult message does.
    result = replay.result
    assert result is not None and result.signature
    assert played.result.chain_head == replay.hashes[-1] and played.result.signature == result.signature
    verdict = verify(replay, signed.public_key)
    assert verdict.run is not None and list(verdict.run.state.scores) == list(result.scores)
    assert f"signed by key {fingerprint(signed.public_key)}" in verdict.text
    assert "the seed is the one committed to" in verdict.text
    assert f"chain of {len(_lines(played))} lines intact" in verdict.text


def test_without_a_key_the_chain_is_checked_and_the_signature_said_not_to_be(
    signed: Signed, capsys: pytest.CaptureFixture[str]
) -> None:
    assert verify_files([signed.played.path]) == 0
    out = capsys.readouterr().out
    assert "chain of" in out and "signature not checked (no --public-key)" in out
    assert tichu(["replay", "verify", "--public-key", str(signed.public_path), str(signed.played.path)]) == 0
    assert f"signed by key {fingerprint(signed.public_key)}" in capsys.readouterr().out


def test_the_reveal_opens_the_commitment_and_the_deal_follows_from_it(signed: Signed) -> None:
    replay = read_replay(signed.played.path)
    reveal = replay.records[-2]
    assert isinstance(reveal, RevealRecord) and reveal.seed == "proof"
    assert SeedSecret(reveal.seed, reveal.salt).commitment == replay.header.seed_commitment
    # Two matches of one seed commit differently: their salts differ.
    assert read_replay(signed.second.path).header.seed_commitment != replay.header.seed_commitment


def test_the_seed_is_nowhere_before_the_match_ends(tmp_path: Path) -> None:
    seed = "secret-seed-7431"

    async def scenario() -> tuple[list[bytes], list[str]]:
        async with referee(replay_dir=tmp_path) as ref:
            response = await ref.create(rules_json='{"match_mode": "fixed_rounds:1"}', seed=seed)
            policies = [random_policy(f"s/{s}") for s in range(4)]
            bots = await join(ref, list(response.seat_tokens), policies)
            await asyncio.gather(*(bot.play() for bot in bots))
            listing = await ref.stub.ListMatches(pb.ListMatchesRequest(), metadata=ORGANISER_METADATA)
            said = [str(response), str(listing), *(str(m) for bot in bots for m in bot.received)]
        return (tmp_path / f"{response.match_id}.jsonl").read_bytes().splitlines(), said

    with capture_logs() as logs:
        lines, said = run(scenario())
    assert {"match_created", "match_started", "match_finished"} <= {entry["event"] for entry in logs}
    assert all(seed not in str(entry) for entry in logs)
    assert all(seed not in text for text in said)  # not in CreateMatch, ListMatches, any message
    assert [json.loads(raw)["kind"] for raw in lines if seed.encode() in raw] == ["reveal"]


# ------------------------------------------------------------------------------ tampering


def _flip_digit(field: str) -> Callable[[dict[str, Any]], None]:
    def change(data: dict[str, Any]) -> None:
        data[field] = data[field] + 1

    return change


def _rename_seat(data: dict[str, Any]) -> None:
    data["seats"][1]["bot_name"] = "impostor"


def _summary_figure(data: dict[str, Any]) -> None:
    data["summary"][0]["timeouts"] += 1


def _other_seed(data: dict[str, Any]) -> None:
    data["seed"] = "chosen-later"


def _other_salt(data: dict[str, Any]) -> None:
    data["salt"] = "00" * 32


def _changed(
    kind: str, change: Callable[[dict[str, Any]], None], nth: int = 0
) -> Callable[[Lines], tuple[Lines, int]]:
    def tamper(lines: Lines) -> tuple[Lines, int]:
        index = _index(lines, kind, nth)
        return _edit(lines, index, change), index + 1

    return tamper


def _deleted_connection(lines: Lines) -> tuple[Lines, int]:
    index = _index(lines, "connection")
    return [*lines[:index], *lines[index + 1 :]], index + 1  # its successor no longer chains


def _inserted_copy(lines: Lines) -> tuple[Lines, int]:
    index = _index(lines, "decision", 10)
    return [*lines[: index + 1], lines[index], *lines[index + 1 :]], index + 2


def _reordered(lines: Lines) -> tuple[Lines, int]:
    index = _index(lines, "event", 50)
    return [*lines[:index], lines[index + 1], lines[index], *lines[index + 2 :]], index + 1


def _appended(lines: Lines) -> tuple[Lines, int]:
    return [*lines, lines[-2]], len(lines) + 1


def _cut_before_the_result(lines: Lines) -> tuple[Lines, int]:
    return lines[:-2], len(lines) - 2  # its last line: a match that seems unfinished has no signature


def _flipped_byte(lines: Lines) -> tuple[Lines, int]:
    index = _index(lines, "decision", 20)
    raw = bytearray(lines[index])
    position = raw.index(b'"received_ms":') + len(b'"received_ms":')
    raw[position] = ord("1") if raw[position] != ord("1") else ord("2")
    return [*lines[:index], bytes(raw), *lines[index + 1 :]], index + 1


TAMPERINGS = {
    "a flipped byte": (_flipped_byte, "the chain breaks here"),
    "a think time": (_changed("decision", _flip_digit("time_used_ms"), 7), "the chain breaks here"),
    "a timestamp": (_changed("event", _flip_digit("t_ms"), 30), "the chain breaks here"),
    "a bot name in the header": (_changed("header", _rename_seat), "the chain breaks here"),
    "a bot name at the start": (_changed("start", _rename_seat), "the chain breaks here"),
    "a summary figure": (_changed("result", _summary_figure), "the chain breaks here"),
    "a deleted connection record": (_deleted_connection, "the chain breaks here"),
    "an inserted record": (_inserted_copy, "the chain breaks here"),
    "two records reordered": (_reordered, "the chain breaks here"),
    "the revealed seed": (_changed("reveal", _other_seed), "the chain breaks here"),
    "the revealed salt": (_changed("reveal", _other_salt), "the chain breaks here"),
    "a line after the result": (_appended, "the chain breaks here"),
    "the signed end cut off": (_cut_before_the_result, "the match is not over"),
}


@pytest.mark.parametrize("name", list(TAMPERINGS))
def test_each_change_to_a_signed_replay_is_refused_naming_its_line(signed: Signed, name: str) -> None:
    tamper, why = TAMPERINGS[name]
    lines, changed = tamper(_lines(signed.played))
    line, message = _refusal(lines, signed.public_key)
    assert (line, why in message) == (changed, True), (name, line, message)
    # The chain alone (no key) refuses each of them too, bar the cut, which is a match still running.
    if name != "the signed end cut off":
        assert _refusal(lines, None)[0] == changed


def test_any_flipped_bit_is_refused_at_its_line(signed: Signed) -> None:
    lines = _lines(signed.played)
    rng = random.Random(14)
    for _ in range(120):
        index = rng.randrange(len(lines))
        raw = bytearray(lines[index])
        position = rng.randrange(len(raw) - 1)  # not the newline
        raw[position] ^= 1 << rng.randrange(8)
        flipped = [*lines[:index], bytes(raw), *lines[index + 1 :]]
        line, message = _refusal(flipped, signed.public_key)
        assert line == index + 1, (index + 1, position, message)


def test_a_forger_who_rehashes_the_chain_is_caught_by_the_signature(signed: Signed) -> None:
    lines = _lines(signed.played)
    # The match said to be played a day earlier (nothing the engine or the summary checks).
    forged = _rechain(_edit(lines, 0, lambda header: header.update(created_at="2026-11-30T12:00:00.000Z")))
    # The chain is whole again, and the moves still re-run: only the signature tells.
    assert verify(parse_lines(forged)).run is not None
    assert _refusal(forged, signed.public_key) == (
        len(lines),
        f"the signature is not key {fingerprint(signed.public_key)}'s signature of the head",
    )


def test_a_seed_changed_and_rehashed_fails_its_commitment_even_without_a_key(signed: Signed) -> None:
    lines = _lines(signed.played)
    forged = _rechain(_edit(lines, len(lines) - 2, _other_seed))
    assert _refusal(forged, None) == (
        len(lines) - 1,
        "the seed and salt revealed are not what the header committed to",
    )


def test_two_matches_spliced_break_where_they_join(signed: Signed) -> None:
    first, second = _lines(signed.played), _lines(signed.second)
    half = min(len(first), len(second)) // 2
    assert _refusal([*first[:half], *second[half:]], signed.public_key)[0] == half + 1
    # The other's header with this one's body: its first record no longer chains.
    assert _refusal([second[0], *first[1:]], signed.public_key)[0] == 2


def test_another_key_is_refused(signed: Signed, capsys: pytest.CaptureFixture[str]) -> None:
    lines = _lines(signed.played)
    assert _refusal(lines, signed.other_key) == (
        len(lines),
        f"the signature is not key {fingerprint(signed.other_key)}'s signature of the head",
    )
    other_pub = signed.public_path.with_name("other.key.pub")
    assert tichu(["replay", "verify", "--public-key", str(other_pub), str(signed.played.path)]) == 1
    assert f"FAILED: line {len(lines)}: the signature is not key" in capsys.readouterr().out


def test_a_downgrade_to_format_1_is_not_accepted_as_signed(signed: Signed) -> None:
    lines = _lines(signed.played)
    header = json.loads(lines[0])
    header.update(format="tichu-replay/1", seed="proof")
    for key in ("seed_commitment", "sealed_seed", "h"):
        header.pop(key)
    body = [json.loads(raw) for raw in lines[1:] if json.loads(raw)["kind"] != "reveal"]
    for data in body:
        data.pop("h")
        data.pop("signature", None)
    downgraded = [(json.dumps(d) + "\n").encode() for d in (header, *body)]
    # It is a well-formed format-1 replay, but it says so, and no key accepts it.
    assert "no chain" in verify(parse_lines(downgraded)).text
    assert _refusal(downgraded, signed.public_key) == (
        1,
        "a tichu-replay/1 replay is not signed (it has no chain)",
    )


# ------------------------------------------------------------------------------ redacted views


def _scanned(raw: bytes) -> str:
    """A line's text without its hashes, salt, sealed seed and signature (which are not cards
    but can look like one, e.g. base64's "DOG")."""
    data = json.loads(raw)
    for key in ("h", "salt", "sealed_seed", "signature", "seed_commitment"):
        data.pop(key, None)
    return json.dumps(data)


def _leaks(full: list[Line], view: Lines, seat: int | None) -> list[str]:
    """Every card in a kept line that the seat (None: every seat) could not know at that point."""
    known = known_cards(full)
    seats = range(4) if seat is None else [seat]
    found, round_no, version = [], 0, 0
    for record, raw in zip(full[1:], view[1:], strict=True):
        if isinstance(record, EventRecord):
            version = record.version
            if record.data["type"] == "round_started":
                round_no = record.data["round"]
        if json.loads(raw)["kind"] == "redacted":
            continue
        may_know = frozenset.intersection(*(allowed(known, s, round_no, version) for s in seats))
        found += [f"{card} in {raw[:80]!r}" for card in CARD.findall(_scanned(raw)) if card not in may_know]
    return found


@pytest.mark.parametrize("seat", [0, 1, 2, 3, None])
def test_every_view_verifies_against_the_same_signature_and_holds_no_hidden_card(
    signed: Signed, tmp_path: Path, seat: int | None
) -> None:
    out = tmp_path / "view.jsonl"
    withheld = redact(signed.played.path, out, seat)
    view = out.read_bytes().splitlines(keepends=True)
    full_lines = _lines(signed.played)
    full = [read_replay(signed.played.path).header, *read_replay(signed.played.path).records]
    assert len(view) == len(full_lines) and withheld > 0
    # What is kept is kept byte for byte; what is withheld is its h alone.
    for raw, original in zip(view, full_lines, strict=True):
        data = json.loads(raw)
        if data["kind"] == "redacted":
            assert data == {"kind": "redacted", "h": json.loads(original)["h"]}
        else:
            assert raw == original
    verdict = verify(read_replay(out), signed.public_key)
    assert verdict.run is None and f"{withheld} of {len(view)} lines withheld" in verdict.text
    assert f"signed by key {fingerprint(signed.public_key)}" in verdict.text
    assert _leaks(full, view, seat) == []
    # The full file is not a view of itself: its hands would leak.
    if seat is not None:
        assert _leaks(full, full_lines, seat) != []
    # What every view withholds: the bomb windows and the reveal (another table may deal this seed).
    kinds = {json.loads(raw)["kind"] for raw in view}
    assert not kinds & {"window", "reveal"} and {"header", "start", "event", "result"} <= kinds
    if seat is None:
        assert not kinds & {"decision", "violation", "rejection"}


def test_a_view_cannot_be_filled_in_or_changed(signed: Signed, tmp_path: Path) -> None:
    out = tmp_path / "seat2.jsonl"
    redact(signed.played.path, out, 2)
    view = out.read_bytes().splitlines(keepends=True)
    hidden = next(i for i, raw in enumerate(view) if json.loads(raw)["kind"] == "redacted")
    kept = next(i for i, raw in enumerate(view) if i > hidden and json.loads(raw)["kind"] == "event")
    # A withheld line replaced by a made-up record; a kept line changed.
    forged = [*view[:hidden], _lines(signed.played)[kept], *view[hidden + 1 :]]
    assert _refusal(forged, signed.public_key)[0] == hidden + 1
    changed = _edit(view, kept, _flip_digit("t_ms"))
    assert _refusal(changed, signed.public_key)[0] == kept + 1


def test_the_redact_command_names_its_output_and_refuses_what_has_no_chain(
    signed: Signed, tmp_path: Path, capsys: pytest.CaptureFixture[str]
) -> None:
    copy = tmp_path / "match.jsonl.gz"
    copy.write_bytes(gzip.compress(signed.played.path.read_bytes()))
    assert tichu(["replay", "redact", "--public", str(copy)]) == 0
    assert "the public view" in capsys.readouterr().out
    assert verify_files([tmp_path / "match.public.jsonl"], signed.public_key) == 0
    assert tichu(["replay", "redact", "--seat", "1", str(copy), "-o", str(tmp_path / "s1.jsonl")]) == 0
    assert (tmp_path / "s1.jsonl").exists()
    assert tichu(["replay", "redact", "--seat", "4", str(copy)]) == 1
    assert "there is no seat 4" in capsys.readouterr().err
    golden = REPO / "replays" / "golden" / "golden-4p-2-deals.jsonl"
    assert tichu(["replay", "redact", "--public", str(golden), "-o", str(tmp_path / "g.jsonl")]) == 1
    assert "has no chain to redact" in capsys.readouterr().err


def test_a_match_from_a_given_position_has_no_view(tmp_path: Path) -> None:
    async def create() -> None:
        front = Referee(ORGANISER, replay_dir=tmp_path)
        table = front.create(initial_state=new_game(OFFICIAL, 5)[0], match_id="from-position").table
        await table.stop("test over")

    asyncio.run(create())
    with pytest.raises(ReplayFormatError, match="whose header shows every hand"):
        redact(tmp_path / "from-position.jsonl", tmp_path / "view.jsonl", 0)


def test_redacting_a_view_again_keeps_it_verifiable(signed: Signed, tmp_path: Path) -> None:
    redact(signed.played.path, tmp_path / "seat0.jsonl", 0)
    # A seat's view made public withholds the seat's own records as well.
    more = redact(tmp_path / "seat0.jsonl", tmp_path / "public.jsonl", None)
    assert more > 0
    assert (tmp_path / "public.jsonl").read_bytes() == _public_bytes(signed, tmp_path)
    assert verify(read_replay(tmp_path / "public.jsonl"), signed.public_key).run is None


def _public_bytes(signed: Signed, tmp_path: Path) -> bytes:
    redact(signed.played.path, tmp_path / "direct.jsonl", None)
    return (tmp_path / "direct.jsonl").read_bytes()


# ------------------------------------------------------------------------------ format 1, keys, seals


@pytest.mark.parametrize("path", sorted((REPO / "replays" / "golden").glob("*.jsonl")), ids=lambda p: p.name)
def test_format_1_replays_verify_and_say_they_have_no_chain(
    signed: Signed, path: Path, capsys: pytest.CaptureFixture[str]
) -> None:
    assert verify_files([path]) == 0
    assert "tichu-replay/1: no chain (written before replays were chained)" in capsys.readouterr().out
    line, message = _refusal(path.read_bytes().splitlines(keepends=True), signed.public_key)
    assert (line, message) == (1, "a tichu-replay/1 replay is not signed (it has no chain)")


def test_keygen_writes_a_private_key_only_its_owner_reads_and_refuses_to_overwrite(
    tmp_path: Path, capsys: pytest.CaptureFixture[str]
) -> None:
    key = tmp_path / "keys" / "referee.key"
    assert tichu(["keygen", "--out", str(key)]) == 0
    said = capsys.readouterr().out
    public = load_public_key(key.with_name("referee.key.pub"))
    assert fingerprint(public) in said and "keep it secret" in said
    assert stat.S_IMODE(key.stat().st_mode) == 0o600
    before = key.read_bytes()
    assert tichu(["keygen", "--out", str(key)]) == 1
    assert "exists already" in capsys.readouterr().err and key.read_bytes() == before


def test_serve_refuses_a_signing_key_it_cannot_use(
    tmp_path: Path, capsys: pytest.CaptureFixture[str]
) -> None:
    (tmp_path / "not-a-key").write_text("hello")
    for path, why in (
        (tmp_path / "missing.key", "cannot read it"),
        (tmp_path / "not-a-key", "not a PEM private key"),
    ):
        code = tichu(
            [
                "serve",
                "--insecure",
                "--organiser-token",
                ORGANISER,
                "--listen",
                "127.0.0.1:0",
                "--signing-key",
                str(path),
            ]
        )
        assert code == 1 and why in capsys.readouterr().err


def test_the_sealed_seed_opens_only_with_its_token_and_match() -> None:
    secret = SeedSecret(2024, "ab" * 32)
    sealed = seal(b"organiser", "m1", secret)
    assert unseal(b"organiser", "m1", sealed) == secret
    assert seal(b"organiser", "m1", secret) != sealed  # a fresh nonce each time
    tampered = sealed[:-4] + ("AAAA" if sealed[-4:] != "AAAA" else "BBBB")
    for token, match_id, blob in (
        (b"other", "m1", sealed),
        (b"organiser", "m2", sealed),
        (b"organiser", "m1", tampered),
    ):
        with pytest.raises(SealError, match="does not open with this organiser token"):
            unseal(token, match_id, blob)
    assert unseal(b"organiser", "m1", seal(b"organiser", "m1", SeedSecret("7", "00" * 32))).seed == "7"
    # 7 and "7" deal differently, so they commit differently.
    assert seed_commitment(7, "00" * 32) != seed_commitment("7", "00" * 32)


def test_an_h_has_one_spelling_and_a_malformed_one_is_refused(signed: Signed) -> None:
    lines = _lines(signed.played)
    h = json.loads(lines[5])["h"]
    assert len(h) == 43 and len(digest_bytes(h)) == 32
    # The same 32 bytes with the unused low bits of the last character set: not a valid h.
    alias = (
        h[:-1]
        + "ABCDEFGHIJKLMNOPQRSTUVWXYZabcdefghijklmnopqrstuvwxyz0123456789-_"[
            "ABCDEFGHIJKLMNOPQRSTUVWXYZabcdefghijklmnopqrstuvwxyz0123456789-_".index(h[-1]) + 1
        ]
    )
    with pytest.raises(ValueError, match="not a SHA-256 digest"):
        digest_bytes(alias)
    for bad in (alias, "00" * 32, h + "="):
        view = [*lines[:5], (json.dumps({"kind": "redacted", "h": bad}) + "\n").encode(), *lines[6:]]
        assert _refusal(view, None) == (
            6,
            "redacted record: 'h' must be a SHA-256 digest in unpadded base64url (43 characters)",
        )


def test_a_reveal_record_reads_back_as_written() -> None:
    reveal = RevealRecord("proof", "cd" * 32, 12.5)
    assert record_from_json(reveal.to_json()) == reveal
