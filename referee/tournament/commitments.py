"""Every game's seed commitment, published before the first game is played.

A game's salt is an HMAC of its id under a secret kept in the store, so that a resumed
tournament (or a game played again after an interruption) commits to exactly what was published.
Publishing commitments.csv at the start lets anyone check afterwards, replay by replay, that no
deal was chosen once the entrants were known: each replay's header carries the same commitment,
and its reveal record opens it.
"""

from __future__ import annotations

import csv
import hashlib
import hmac
import os
from collections.abc import Mapping, Sequence
from pathlib import Path

from referee.match.digests import SALT_BYTES
from referee.match.proof import SeedSecret, match_seed
from referee.tournament.schedule import GameSpec

COMMITMENTS_FILE = "commitments.csv"
COLUMNS = ("game_id", "pairing", "board", "table", "seed_commitment")


def game_salts(salt_key: bytes, schedule: Sequence[GameSpec]) -> dict[str, str]:
    """Each game's salt (hex), derived from the store's secret and the game id."""
    return {
        game.game_id: hmac.new(salt_key, f"tichu-salt/{game.game_id}".encode(), hashlib.sha256)
        .digest()[:SALT_BYTES]
        .hex()
        for game in schedule
    }


def commitment(game: GameSpec, salt: str) -> str:
    """The seed commitment the game's replay header will carry."""
    return SeedSecret(match_seed(game.seed), salt).commitment


def write_commitments(schedule: Sequence[GameSpec], salts: Mapping[str, str], path: Path) -> None:
    """Write commitments.csv (the same bytes on every run of one tournament), replacing it whole."""
    path.parent.mkdir(parents=True, exist_ok=True)
    partial = path.with_name(path.name + ".partial")
    with partial.open("w", newline="", encoding="utf-8") as out:
        writer = csv.writer(out, lineterminator="\n")
        writer.writerow(COLUMNS)
        for game in schedule:
            writer.writerow(
                (game.game_id, game.pairing, game.board, game.table, commitment(game, salts[game.game_id]))
            )
    os.replace(partial, path)
