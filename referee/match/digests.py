"""The hash chain's primitives: canonical JSON, a line's h, the seed commitment, the signed bytes.

Defined once here and read through referee.match.records, which re-exports them with the schema.
"""

from __future__ import annotations

import base64
import hashlib
import re
from collections.abc import Mapping
from typing import Any

from referee.match.jsonbytes import compact_json

# Keys a line's hash does not cover: the hash itself, and the signature of the head.
UNHASHED = frozenset({"h", "signature"})
SALT_BYTES = 32
# 32 bytes in unpadded base64url: 42 characters, then one whose last two bits are zero (so each
# digest has exactly one spelling).
DIGEST = re.compile(r"[A-Za-z0-9_-]{42}[AEIMQUYcgkosw048]")


def canonical_json(value: Any) -> bytes:
    """The one byte form that is hashed: JSON with sorted keys, no spaces, UTF-8."""
    # json.dumps's bytes (sort_keys, ensure_ascii=False), which every chain so far hashed.
    return compact_json(value, sort_keys=True)


def line_hash(previous: str | None, line: Mapping[str, Any]) -> str:
    """A line's `h`: SHA-256 of the previous line's h (its 32 bytes; none for the header) and
    the line's canonical JSON without its h and signature, in unpadded base64url."""
    content = canonical_json({key: value for key, value in line.items() if key not in UNHASHED})
    chained = b"" if previous is None else digest_bytes(previous)
    # Base64url, not hex: 21 bytes fewer on each of thousands of lines (a game stays under 1 MB).
    return base64.urlsafe_b64encode(hashlib.sha256(chained + content).digest()).rstrip(b"=").decode("ascii")


def digest_bytes(h: str) -> bytes:
    """The 32 bytes an h (unpadded base64url) stands for; ValueError if it is not one."""
    if not DIGEST.fullmatch(h):
        raise ValueError(f"{h!r} is not a SHA-256 digest in unpadded base64url (43 characters)")
    return base64.urlsafe_b64decode(h + "=")


def seed_commitment(seed: int | str, salt: str) -> str:
    """SHA-256 of the seed's JSON (so 7 and "7", which deal differently, differ) and the salt's
    bytes (`salt` in hex), in hex: what a header publishes instead of the seed."""
    return hashlib.sha256(canonical_json(seed) + bytes.fromhex(salt)).hexdigest()


def head_message(head: str) -> bytes:
    """The bytes a referee signs: a label for this use, then the chain's head (the result's h)
    as its 32 bytes."""
    return b"tichu-replay/2 head\n" + digest_bytes(head)
