"""A match's seed as the referee keeps it: drawn or given, committed to with a random salt, and
sealed in the replay's header so that the referee (and only a holder of its organiser token) can
resume the match after a restart without the seed ever being shown before the match ends."""

from __future__ import annotations

import base64
import json
import secrets

from cryptography.exceptions import InvalidTag
from cryptography.hazmat.primitives import hashes
from cryptography.hazmat.primitives.ciphers.aead import AESGCM
from cryptography.hazmat.primitives.kdf.hkdf import HKDF

from referee.match.digests import SALT_BYTES, canonical_json
from referee.match.proof import SeedSecret

NONCE_BYTES = 12
_INFO = b"tichu-referee seed seal/1"


class SealError(ValueError):
    """A sealed seed that this organiser token cannot open (another referee's, or altered)."""


def draw_seed() -> int:
    """A seed for a match that was given none."""
    return secrets.randbelow(2**63)


def new_secret(seed: int | str) -> SeedSecret:
    """The seed with a fresh random salt."""
    return SeedSecret(seed, secrets.token_hex(SALT_BYTES))


def _key(organiser_token: bytes) -> bytes:
    return HKDF(algorithm=hashes.SHA256(), length=32, salt=None, info=_INFO).derive(organiser_token)


def seal(organiser_token: bytes, match_id: str, secret: SeedSecret) -> str:
    """The seed and salt encrypted (AES-GCM) with a key derived from the organiser token, bound to
    the match id, as base64."""
    nonce = secrets.token_bytes(NONCE_BYTES)
    plain = canonical_json({"seed": secret.seed, "salt": secret.salt})
    sealed = AESGCM(_key(organiser_token)).encrypt(nonce, plain, match_id.encode())
    return base64.b64encode(nonce + sealed).decode()


def unseal(organiser_token: bytes, match_id: str, sealed: str) -> SeedSecret:
    """The seed and salt a header's `sealed_seed` holds; SealError if this token cannot open it."""
    try:
        data = base64.b64decode(sealed, validate=True)
        plain = AESGCM(_key(organiser_token)).decrypt(
            data[:NONCE_BYTES], data[NONCE_BYTES:], match_id.encode()
        )
        opened = json.loads(plain)
        return SeedSecret(opened["seed"], str(opened["salt"]))
    except (InvalidTag, ValueError, KeyError, TypeError) as error:
        raise SealError(
            f"match {match_id}: the sealed seed does not open with this organiser token"
        ) from error
