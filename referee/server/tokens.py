"""The referee's secrets: how strong an organiser token must be, and where seat tokens come from.

Seat tokens were derived from the organiser token (an HMAC of the match and seat under it), so a
bot could guess a weak organiser token offline from its own seat token, and from it every other
seat's token. Now they come from a random server secret of their own (SeatTokens), which says
nothing about the organiser token, and a seat token says nothing about another's. The secret is
kept in the replay folder (mode 0600), so a restarted referee that resumes its matches accepts the
tokens it handed out before; the old, derived form is still accepted for the matches of a replay
folder written before the secret existed.
"""

from __future__ import annotations

import base64
import hashlib
import hmac
import math
import os
import secrets
import string
from pathlib import Path

MIN_ORGANISER_BITS = 128
MIN_DISTINCT = 10  # a long token of few characters ("aaaa...") is a pattern, not a secret
MAKE_ONE = "python3 -c 'import secrets; print(secrets.token_urlsafe(32))'"
SECRET_FILE = ".seat-secret"
SECRET_BYTES = 32
_HEX = frozenset(string.hexdigits)
_URLSAFE = frozenset(string.ascii_letters + string.digits + "-_")


class WeakTokenError(ValueError):
    """An organiser token too short or too simple to be a secret."""


def token_bits(token: str) -> float:
    """An upper bound on a token's strength: its length times the bits of the smallest usual
    alphabet that holds all its characters (hex, base64url, printable ASCII)."""
    characters = set(token)
    size = 16 if characters <= _HEX else 64 if characters <= _URLSAFE else 95
    return len(token) * math.log2(size)


def check_organiser_token(token: str) -> None:
    """WeakTokenError, saying how to make a good one, unless `token` carries 128 bits or more."""
    bits = token_bits(token)
    if bits < MIN_ORGANISER_BITS or len(set(token)) < MIN_DISTINCT:
        raise WeakTokenError(
            f"the organiser token is too weak ({len(token)} characters, at most {bits:.0f} bits; it must "
            f"carry at least {MIN_ORGANISER_BITS}, from at least {MIN_DISTINCT} different characters): "
            f"a bot could guess it. Make one with: {MAKE_ONE}"
        )


def new_organiser_token() -> str:
    """A fresh organiser token: 256 random bits, base64url."""
    return secrets.token_urlsafe(32)


def token_file() -> Path:
    """Where `tichu serve` keeps the organiser token it made: $XDG_CONFIG_HOME/tichu/organiser-token
    (~/.config/tichu/organiser-token by default)."""
    base = os.environ.get("XDG_CONFIG_HOME") or str(Path.home() / ".config")
    return Path(base) / "tichu" / "organiser-token"


def stored_organiser_token(path: Path) -> tuple[str, bool]:
    """The token kept in `path`, or a new one written there (mode 0600); and whether it is new."""
    if path.exists():
        return path.read_text(encoding="ascii").strip(), False
    path.parent.mkdir(mode=0o700, parents=True, exist_ok=True)
    token = new_organiser_token()
    descriptor = os.open(path, os.O_WRONLY | os.O_CREAT | os.O_EXCL, 0o600)
    with os.fdopen(descriptor, "w", encoding="ascii") as out:
        out.write(token + "\n")
    return token, True


def _urlsafe(digest: bytes) -> str:
    return base64.urlsafe_b64encode(digest[:24]).decode()


def _options(token: str) -> tuple[str, ...]:
    """A token as handed out ('_' for a leading '-', which a command line takes for an option),
    then the '-' form referees before that handed out."""
    return ("_" + token[1:], token) if token.startswith("-") else (token,)


class SeatTokens:
    """Seat tokens: HMAC-SHA256 of the match and seat under a random server secret."""

    def __init__(self, secret: bytes, legacy_key: bytes | None = None) -> None:
        self._secret = secret
        self._legacy_key = legacy_key  # the organiser token, for matches of an older replay folder

    @classmethod
    def in_folder(cls, folder: Path | None, organiser_token: str) -> SeatTokens:
        """The secret kept in `folder` (made there, mode 0600, if it has none); a random one that
        lives as long as this process without a folder. The old derived tokens stay good for the
        matches resumed from a folder that held replays before it held a secret."""
        if folder is None:
            return cls(secrets.token_bytes(SECRET_BYTES))
        path = folder / SECRET_FILE
        if path.exists():
            return cls(_read_secret(path))
        older_replays = folder.is_dir() and any(folder.glob("*.jsonl"))
        folder.mkdir(mode=0o700, parents=True, exist_ok=True)
        secret = secrets.token_bytes(SECRET_BYTES)
        descriptor = os.open(path, os.O_WRONLY | os.O_CREAT | os.O_EXCL, 0o600)
        with os.fdopen(descriptor, "w", encoding="ascii") as out:
            out.write(secret.hex() + "\n")
        return cls(secret, organiser_token.encode() if older_replays else None)

    def unescaped(self, match_id: str, seat: int) -> str:
        """A seat's token before a leading '-' is made '_' (the form an older client may hold)."""
        message = f"tichu-seat/{match_id}/{seat}".encode()
        return _urlsafe(hmac.new(self._secret, message, hashlib.sha256).digest())

    def for_seat(self, match_id: str, seat: int, *, legacy: bool = False) -> tuple[str, ...]:
        """The tokens that open a seat: the one handed out first; with `legacy`, the form an
        earlier release derived from the organiser token too."""
        message = f"tichu-seat/{match_id}/{seat}".encode()
        tokens = _options(self.unescaped(match_id, seat))
        if legacy and self._legacy_key is not None:
            tokens += _options(_urlsafe(hmac.new(self._legacy_key, message, hashlib.sha256).digest()))
        return tokens


def _read_secret(path: Path) -> bytes:
    try:
        secret = bytes.fromhex(path.read_text(encoding="ascii").strip())
    except (OSError, ValueError) as error:
        raise OSError(f"{path} does not hold a seat secret ({error}): remove it to make a new one") from None
    if len(secret) < SECRET_BYTES:
        raise OSError(f"{path} holds a seat secret of {len(secret)} bytes, not {SECRET_BYTES}: remove it")
    return secret
