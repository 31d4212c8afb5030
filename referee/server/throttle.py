"""Failed Hellos throttled per peer: a token bucket per peer address, on an injectable clock.

Each failed Hello (no Hello, a bad one, an unknown token, a seat that cannot be taken) spends a
token of its peer's bucket; the bucket holds BURST tokens and gains one every 1/REFILL_PER_S
seconds. While a peer's bucket is empty, every failed Hello from it is refused with
RESOURCE_EXHAUSTED and the time to wait. A Hello that succeeds is never throttled: on a machine
where every bot shares 127.0.0.1 (a tournament, the arena's hosted bots behind one socket), a
flood of bad Hellos from one cannot lock the others out. Failures are logged one by one while
the address has tokens, then once when it is throttled, and once more (with how many attempts
were refused) when it may try again: 1,000 failures in a second make about BURST + 2 log lines.
"""

from __future__ import annotations

from collections.abc import Callable
from dataclasses import dataclass

from structlog.typing import FilteringBoundLogger

BURST = 20
REFILL_PER_S = 1.0
# Beyond this many peers, those whose buckets are full again are forgotten.
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
    refused: int = 0  # attempts refused since the peer was throttled


class HelloThrottle:
    """Counts failed Hellos per peer host and says whether the next one may be tried."""

    def __init__(
        self,
        now: Callable[[], float],
        log: FilteringBoundLogger,
        *,
        burst: int = BURST,
        refill_per_s: float = REFILL_PER_S,
    ) -> None:
        self._now = now
        self._log = log
        self.burst = burst
        self.refill_per_s = refill_per_s
        self._buckets: dict[str, _Bucket] = {}
        self.throttled = 0  # failed Hellos refused as throttled since the start (not logged one by one)

    def _bucket(self, host: str) -> _Bucket | None:
        bucket = self._buckets.get(host)
        if bucket is not None:
            now = self._now()
            bucket.tokens = min(self.burst, bucket.tokens + (now - bucket.at) * self.refill_per_s)
            bucket.at = now
        return bucket

    def failed(self, peer: str, why: str, **fields: object) -> float | None:
        """A Hello from `peer` failed. While its address has tokens left: log it, spend one, and
        None (refuse it for what it is). Once they are spent: the seconds until the next one
        (refuse it as throttled), counted but not logged one by one."""
        host = peer_host(peer)
        bucket = self._bucket(host)
        if bucket is None:
            self._forget_full()
            bucket = self._buckets[host] = _Bucket(float(self.burst), self._now())
        if bucket.tokens < 1:
            bucket.refused += 1
            self.throttled += 1
            return (1 - bucket.tokens) / self.refill_per_s
        if bucket.refused:
            self._log.info("hello_throttle_lifted", peer=host, refused=bucket.refused)
            bucket.refused = 0
        bucket.tokens = max(0.0, bucket.tokens - 1)
        self._log.warning("hello_refused", peer=peer, why=why, **fields)
        if bucket.tokens < 1:
            wait_s = (1 - bucket.tokens) / self.refill_per_s
            self._log.warning(
                "hello_throttled",
                peer=host,
                why=f"{self.burst} failed Hellos; further failed ones are refused for {wait_s:.1f} s",
            )
        return None

    def _forget_full(self) -> None:
        if len(self._buckets) < MAX_PEERS:
            return
        for host in list(self._buckets):
            bucket = self._bucket(host)
            if bucket is not None and bucket.tokens >= self.burst:
                del self._buckets[host]


__all__ = ["BURST", "REFILL_PER_S", "HelloThrottle", "peer_host"]
