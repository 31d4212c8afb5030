"""A bot's key: shown once to its owner, stored only as a hash.

A key is 256 random bits, so one SHA-256 of it is as good as a slow password hash: nobody can
guess a key from its hash, and there is no short password to try a dictionary on. The prefix
makes a leaked key recognisable to secret scanners and to a person reading a log.
"""

from __future__ import annotations

import hashlib
import hmac
import secrets

KEY_PREFIX = "tka_"
KEY_BYTES = 32
# A key with its prefix is 47 characters; anything much longer is not a key.
MAX_KEY_CHARS = 100


def new_key() -> str:
    """A fresh key (to print once, never to store)."""
    return KEY_PREFIX + secrets.token_urlsafe(KEY_BYTES)


def key_hash(key: str) -> str:
    """What the store keeps of a key."""
    return hashlib.sha256(key.encode("utf-8")).hexdigest()


def key_matches(key: str, stored_hash: str) -> bool:
    """Whether `key` is the key whose hash is `stored_hash` (in constant time)."""
    if not key or len(key) > MAX_KEY_CHARS or not stored_hash:
        return False
    return hmac.compare_digest(key_hash(key), stored_hash)


__all__ = ["KEY_PREFIX", "MAX_KEY_CHARS", "key_hash", "key_matches", "new_key"]
