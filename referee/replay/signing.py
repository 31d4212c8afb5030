"""Ed25519 keys for signed replays: `tichu keygen`, the referee's signer, the verifier's check.

A key file is PEM: the private key as PKCS#8 (written readable by its owner only), the public key
beside it in `KEY.pub` as SubjectPublicKeyInfo. What is signed is `head_message(head)`, the
replay's last hash with a label for this use (referee/match/records.py).
"""

from __future__ import annotations

import argparse
import hashlib
import os
import sys
from pathlib import Path

from cryptography.exceptions import InvalidSignature
from cryptography.hazmat.primitives import serialization
from cryptography.hazmat.primitives.asymmetric.ed25519 import Ed25519PrivateKey, Ed25519PublicKey

from referee.match.digests import head_message
from referee.match.proof import Signer

MAX_KEY_FILE_BYTES = 16_384  # a PEM Ed25519 key is about 120 bytes


class KeyFileError(ValueError):
    """A key file that cannot be read as the kind of key it should hold."""


def write_key_pair(path: Path) -> Path:
    """A new Ed25519 key: the private key at `path` (mode 600), the public one at `path`.pub."""
    key = Ed25519PrivateKey.generate()
    private = key.private_bytes(
        serialization.Encoding.PEM, serialization.PrivateFormat.PKCS8, serialization.NoEncryption()
    )
    public = key.public_key().public_bytes(
        serialization.Encoding.PEM, serialization.PublicFormat.SubjectPublicKeyInfo
    )
    path.parent.mkdir(parents=True, exist_ok=True)
    descriptor = os.open(path, os.O_WRONLY | os.O_CREAT | os.O_EXCL, 0o600)
    with os.fdopen(descriptor, "wb") as out:
        out.write(private)
    public_path = path.with_name(path.name + ".pub")
    public_path.write_bytes(public)
    return public_path


def load_signer(path: Path) -> Signer:
    """The signing function of the private key at `path`."""
    try:
        key = serialization.load_pem_private_key(_read(path), password=None)
    except ValueError as error:
        raise KeyFileError(f"{path}: not a PEM private key ({error})") from None
    if not isinstance(key, Ed25519PrivateKey):
        raise KeyFileError(f"{path}: not an Ed25519 key")
    return key.sign


def load_public_key(path: Path) -> Ed25519PublicKey:
    """The public key at `path`."""
    try:
        key = serialization.load_pem_public_key(_read(path))
    except ValueError as error:
        raise KeyFileError(f"{path}: not a PEM public key ({error})") from None
    if not isinstance(key, Ed25519PublicKey):
        raise KeyFileError(f"{path}: not an Ed25519 public key")
    return key


def _read(path: Path) -> bytes:
    try:
        if path.stat().st_size > MAX_KEY_FILE_BYTES:
            raise KeyFileError(f"{path}: {path.stat().st_size} bytes is too large for a key file")
        return path.read_bytes()
    except OSError as error:
        raise KeyFileError(f"{path}: cannot read it ({error.strerror})") from None


def fingerprint(key: Ed25519PublicKey) -> str:
    """A short name for a public key: the first 16 hex digits of SHA-256 of its raw bytes."""
    raw = key.public_bytes(serialization.Encoding.Raw, serialization.PublicFormat.Raw)
    return hashlib.sha256(raw).hexdigest()[:16]


def signature_is_valid(key: Ed25519PublicKey, head: str, signature: str) -> bool:
    """Whether `signature` (hex) is this key's signature of the chain's `head`."""
    try:
        key.verify(bytes.fromhex(signature), head_message(head))
    except (InvalidSignature, ValueError):
        return False
    return True


def add_keygen_arguments(parser: argparse.ArgumentParser) -> None:
    """The arguments of `tichu keygen`."""
    parser.add_argument("--out", type=Path, required=True, metavar="KEY", help="the private key's file")


def run_keygen(args: argparse.Namespace) -> int:
    """`tichu keygen --out KEY`: write KEY and KEY.pub; 1 if KEY exists already."""
    try:
        public = write_key_pair(args.out)
    except FileExistsError:
        print(f"tichu keygen: {args.out} exists already: choose another name", file=sys.stderr)
        return 1
    print(
        f"wrote {args.out} (keep it secret) and {public} (publish it); fingerprint "
        f"{fingerprint(load_public_key(public))}"
    )
    return 0
