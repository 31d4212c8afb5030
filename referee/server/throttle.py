"""Failed Hellos throttled per peer address and per claimed match, on an injectable clock.

Each failed Hello (no Hello, a bad one, an unknown token, a seat that cannot be taken) spends a
token of its peer address's bucket and, when it named a match (a good token for a seat that is
taken), of that match's bucket too: many addresses cannot take turns at one match. A bucket holds
BURST tokens and gains one every 1/REFILL_PER_S seconds. While a bucket is empty, every failed
Hello charged to it is refused with RESOURCE_EXHAUSTED and the time to wait, and that time doubles
with each attempt made before it is over (up to MAX_BACKOFF_S): a sender that keeps hammering
waits longer, one that waits as told loses nothing. A Hello that succeeds is never throttled: on a
machine where every bot shares 127.0.0.1 (a tournament, the arena's hosted bots behind one socket),
a flood of bad Hellos from one cannot lock the others out. Failures are logged one by one while
the bucket has tokens, then once when it is throttled, and once more (with how many attempts were
refused) when it may try again: 1,000 failures in a second make about BURST + 2 log lines.
"""

from __future__ import annotations

from collections.abc import Callable
from dataclasses import dataclass

from structlog.typing import FilteringBoundLogger

BURST = 20
REFILL_PER_S = 1.0
MAX_BACKOFF_S = 60.0
# Beyond this many keys, those whose buckets are full again are forgotten.
MAX_PEERS = 10_000


def peer_host(peer: str) -> str:
    """The address part of a gRPC peer ("ipv4:10.0.0.5:51234" -> "ipv4:10.0.0.5"), port dropped."""
    scheme, _, rest = peer.partition(":")
    if scheme in ("ipv4", "ipv6") and ":" in rest:
        return f"{scheme}:{rest.rsplit(':', 1)[0]}"
    return peer


@dataclass
class _Bucket:
    tokens: float
    at: float
    refused: int = 0  # attempts refused since the key was throttled
    until: float = 0.0  # while throttled: no failed Hello is tried before this time


class HelloThrottle:
    """Counts failed Hellos per peer address and per claimed match, and says whether the next
    one may be tried."""

    def __init__(
        self,
        now: Callable[[], float],
        log: FilteringBoundLogger,
        *,
        burst: int = BURST,
        refill_per_s: float = REFILL_PER_S,
        max_backoff_s: float = MAX_BACKOFF_S,
    ) -> None:
        self._now = now
        self._log = log
        self.burst = burst
        self.refill_per_s = refill_per_s
        self.max_backoff_s = max_backoff_s
        self._buckets: dict[str, _Bucket] = {}
        self.throttled = 0  # failed Hellos refused as throttled since the start (not logged one by one)

    def _bucket(self, key: str) -> _Bucket | None:
        bucket = self._buckets.get(key)
        if bucket is not None:
            now = self._now()
            bucket.tokens = min(self.burst, bucket.tokens + (now - bucket.at) * self.refill_per_s)
            bucket.at = now
        return bucket

    def failed(self, peer: str, why: str, *, match_id: str = "", **fields: object) -> float | None:
        """A Hello from `peer` failed (claiming `match_id`, if it named one). While its buckets
        have tokens: log it, spend one of each, and None (refuse it for what it is). Once one is
        spent: the seconds until the next may be tried (refuse it as throttled), counted but not
        logged one by one; each such attempt doubles the wait, up to max_backoff_s."""
        keys = [peer_host(peer)] + ([f"match:{match_id}"] if match_id else [])
        buckets = [self._bucket(key) or self._new_bucket(key) for key in keys]
        now = self._now()
        blocked = [bucket for bucket in buckets if bucket.tokens < 1 or now < bucket.until]
        if blocked:
            self.throttled += 1
            wait_s = 0.0
            for bucket in blocked:
                bucket.refused += 1
                backoff = min(self.max_backoff_s, 2 ** min(bucket.refused - 1, 32) / self.refill_per_s)
                bucket.until = max(bucket.until, now + backoff)
                wait_s = max(wait_s, bucket.until - now, (1 - bucket.tokens) / self.refill_per_s)
            return wait_s
        for key, bucket in zip(keys, buckets, strict=True):
            if bucket.refused:
                self._log.info("hello_throttle_lifted", key=key, refused=bucket.refused)
                bucket.refused = 0
            bucket.tokens = max(0.0, bucket.tokens - 1)
        self._log.warning(
            "hello_refused", peer=peer, why=why, **({"match_id": match_id} if match_id else {}), **fields
        )
        for key, bucket in zip(keys, buckets, strict=True):
            if bucket.tokens < 1:
                wait_s = (1 - bucket.tokens) / self.refill_per_s
                self._log.warning(
                    "hello_throttled",
                    key=key,
                    why=f"{self.burst} failed Hellos; further failed ones are refused for {wait_s:.1f} s "
                    f"at least, longer for each one tried before then (up to {self.max_backoff_s:g} s)",
                )
        return None

    def _new_bucket(self, key: str) -> _Bucket:
        self._forget_full()
        bucket = self._buckets[key] = _Bucket(float(self.burst), self._now())
        return bucket

    def _forget_full(self) -> None:
        if len(self._buckets) < MAX_PEERS:
            return
        for key in list(self._buckets):
            bucket = self._bucket(key)
            if bucket is not None and bucket.tokens >= self.burst and bucket.until <= self._now():
                del self._buckets[key]


__all__ = ["BURST", "MAX_BACKOFF_S", "REFILL_PER_S", "HelloThrottle", "peer_host"]
