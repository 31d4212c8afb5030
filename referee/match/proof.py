"""What makes a format-2 replay a proof: the seed's secret, and the hash chain as it is written.

The shell draws the salt and keeps the seed secret (sealed in the header for the referee alone);
the core chains every line it writes and, given a signing function, signs the head. Hashes are
records.py's (`line_hash`, `seed_commitment`); nothing here reads a clock or does I/O.
"""

from __future__ import annotations

from collections.abc import Callable, Mapping, Sequence
from dataclasses import dataclass, replace
from typing import Any

from referee.match.clock import ClockSettings, iso_time
from referee.match.digests import head_message, line_hash, seed_commitment
from referee.match.records import FORMAT, FORMAT_1, Header, Record, ResultRecord, RevealRecord, SeatName
from referee.rules import RulesConfig, State

# Signs the bytes head_message() makes of a chain's head; returns the signature.
Signer = Callable[[bytes], bytes]


def match_seed(seed: str) -> int | str:
    """The seed a match deals from, given as text: ASCII digits are a number, anything else a string."""
    return int(seed) if seed.isascii() and seed.isdigit() else seed


@dataclass(frozen=True, slots=True)
class SeedSecret:
    """The seed a format-2 header commits to, and the salt (hex) that hides it."""

    seed: int | str
    salt: str

    @property
    def commitment(self) -> str:
        """SHA-256 of the seed's JSON and the salt: what the header publishes."""
        return seed_commitment(self.seed, self.salt)


class Chain:
    """The hash chain of one replay as its lines are written (empty hashes when unchained)."""

    def __init__(self, chained: bool, head: str | None = None) -> None:
        self.chained = chained
        self.head = head  # the last line's h; None before the header

    def link(self, line: Mapping[str, Any]) -> str:
        """The h of the next line (its JSON form), which becomes the head; "" when unchained."""
        if not self.chained:
            return ""
        self.head = line_hash(self.head, line)
        return self.head

    def close(
        self, result: ResultRecord, secret: SeedSecret | None, sign: Signer | None
    ) -> tuple[list[tuple[Record, str]], str]:
        """The last lines of a match with their h: the reveal (format 2) and the result, signed
        when there is a signer; and the signature (hex, or "")."""
        if not self.chained or secret is None:
            return [(result, self.link(result.to_json()))], ""
        # Only now: a seed shown earlier would tell every deal of a table still playing it.
        reveal = RevealRecord(secret.seed, secret.salt, result.t_ms)
        lines: list[tuple[Record, str]] = [(reveal, self.link(reveal.to_json()))]
        head = self.link(result.to_json())  # the head covers everything but the signature
        signature = "" if sign is None else sign(head_message(head)).hex()
        lines.append((replace(result, signature=signature), head))
        return lines, signature


def new_header(
    match_id: str,
    config: RulesConfig,
    *,
    clock: ClockSettings,
    seed: int | str,
    bot_names: Sequence[str] = (),
    watch_delay_events: int = 0,
    initial_state: State | None = None,
    wall: float,
    salt: str = "",
    sealed_seed: str = "",
    person_seats: Sequence[int] = (),
) -> Header:
    """The header of a new match (a given `initial_state` brings its own rules, not `config`):
    format 2 committing to `seed` with `salt` (hex), or without a salt format 1 showing it."""
    if initial_state is not None:
        config = initial_state.config
    names = tuple(
        SeatName(s, bot_names[s] if s < len(bot_names) else "", s in person_seats)
        for s in range(config.players)
    )
    shown = Header(
        match_id,
        iso_time(wall),
        config,
        seed,
        clock,
        names,
        watch_delay_events,
        initial_state,
        format=FORMAT_1,
    )
    if not salt:
        return shown
    committed = SeedSecret(seed, salt).commitment
    return replace(shown, seed=None, format=FORMAT, seed_commitment=committed, sealed_seed=sealed_seed)
