"""What the arena's pages and JSON show, read from its store: the leaderboards, each bot's page.

Nothing here names a key or a key's hash, a hosted bot's command line or its logs: a bot's page
is public. What an owner alone sees (its key's status, its hosted bot's logs: `owner`) is served
only to whoever signed in with that bot's key.
"""

from __future__ import annotations

import re
from collections import defaultdict
from pathlib import Path
from typing import Any

from referee.arena.ratings import PROVISIONAL_SIGMA, provisional
from referee.arena.store import ArenaStore, ArenaStoreError, BotRow, PairRow, RatingRow

RECENT_PAIRS = 30
# What an owner sees of its hosted bot's logs: the last lines of each of its newest files.
LOG_FILES = 6
LOG_LINES = 200
REPLAYS = "arena"  # the archive's collection of the arena's replays: /replays/arena/<match id>


class ArenaView:
    """The arena's public view over its store (a reader of its own: the arena writes)."""

    def __init__(
        self, store_path: Path, replay_dir: Path, name: str = "arena", log_dir: Path | None = None
    ) -> None:
        self.store = ArenaStore(store_path)
        self.replay_dir = replay_dir
        self.name = name
        self.log_dir = log_dir

    def close(self) -> None:
        """Close the store."""
        self.store.close()

    def leaderboards(self) -> dict[str, Any]:
        """Every leaderboard's rows (best conservative score first), and the bots not on one."""
        bots = {bot.name: bot for bot in self.store.bots()}
        boards: dict[str, list[dict[str, Any]]] = defaultdict(list)
        for rating in self.store.ratings():
            row = rating_json(rating, bots.get(rating.bot))
            boards[rating.leaderboard].append({"rank": len(boards[rating.leaderboard]) + 1, **row})
        rated = {row["bot"] for rows in boards.values() for row in rows}
        waiting = [_bot_json(bot) for bot in bots.values() if bot.name not in rated]
        return {
            "name": self.name,
            "boards": dict(boards),
            "unrated": waiting,
            "provisional_sigma": PROVISIONAL_SIGMA,
            "playing": len(self.store.pairs(state="playing")),
            "finished": len(self.store.pairs(state="finished")),
        }

    def bot(self, name: str) -> dict[str, Any] | None:
        """A bot's page: its standing, its rating over time, its pairs and opponents, its faults."""
        try:
            bot = self.store.bot(name)
        except ArenaStoreError:
            return None
        pairs = self.store.pairs(bot=name)
        finished = [p for p in pairs if p.state == "finished"]
        history = self.store.history(name)
        ended = {p.id: p.ended_at for p in finished}
        opponents: dict[str, dict[str, int]] = defaultdict(
            lambda: {"pairs": 0, "wins": 0, "draws": 0, "losses": 0}
        )
        timeouts = rejections = 0
        think_p99 = 0.0
        for pair in finished:
            other, margin = _side(pair, name)
            row = opponents[other]
            row["pairs"] += 1
            row["wins" if margin > 0 else "draws" if margin == 0 else "losses"] += 1
            for game in self.store.games(pair.id):
                stats = game.stats_a if pair.bot_a == name else game.stats_b
                timeouts += int(stats.get("timeouts", 0))
                rejections += int(stats.get("rejections", 0))
                think_p99 = max(think_p99, float(stats.get("think_ms_p99", 0.0)))
        ratings = [r for r in self.store.ratings() if r.bot == name]
        return {
            **_bot_json(bot),
            "ratings": [
                {
                    "leaderboard": r.leaderboard,
                    "mu": round(r.mu, 2),
                    "sigma": round(r.sigma, 2),
                    "score": round(r.score, 2),
                    "games": r.pairs,
                    "provisional": provisional(r),
                }
                for r in ratings
            ],
            "history": [
                {"pair": pair_id, "at": ended.get(pair_id), "mu": round(mu, 3), "sigma": round(sigma, 3)}
                for pair_id, mu, sigma in history
            ],
            "opponents": [{"bot": other, **row} for other, row in sorted(opponents.items())],
            "timeouts": timeouts,
            "rejections": rejections,
            "think_ms_p99": round(think_p99, 1),
            "pairs": [self._pair_json(p, name) for p in reversed(pairs[-RECENT_PAIRS:])],
        }

    def owner_of(self, key: str) -> str | None:
        """The bot a key belongs to (disabled bots' owners included: they may read why)."""
        bot = self.store.authenticate(key, include_disabled=True)
        return None if bot is None else bot.name

    def owner(self, name: str) -> dict[str, Any] | None:
        """What a bot's owner alone sees: its key's status and, for a hosted bot, its logs."""
        try:
            bot = self.store.bot(name)
        except ArenaStoreError:
            return None
        return {**_bot_json(bot), "key_set_at": bot.key_set_at, "logs": self._logs(bot)}

    def _logs(self, bot: BotRow) -> list[dict[str, Any]]:
        """The last lines of the bot's newest log files (its workers', then its seats')."""
        if not bot.hosted or self.log_dir is None or not self.log_dir.is_dir():
            return []
        name = re.escape(bot.name)
        mine = re.compile(rf"(worker-{name}-\d+|.+-seat\d+-{name})\.log")
        files = [p for p in self.log_dir.iterdir() if mine.fullmatch(p.name) and p.is_file()]
        files.sort(key=lambda p: p.stat().st_mtime, reverse=True)
        out = []
        for path in files[:LOG_FILES]:
            with path.open("rb") as handle:
                handle.seek(max(0, path.stat().st_size - 64 * 1024))
                lines = handle.read().decode("utf-8", "replace").splitlines()[-LOG_LINES:]
            out.append({"file": path.name, "lines": lines})
        return out

    def _pair_json(self, pair: PairRow, name: str) -> dict[str, Any]:
        other, margin = _side(pair, name)
        mine, theirs = (
            (pair.points_a, pair.points_b) if pair.bot_a == name else (pair.points_b, pair.points_a)
        )
        games = self.store.games(pair.id) if pair.state == "finished" else []
        return {
            "id": pair.id,
            "opponent": other,
            "state": pair.state,
            "reason": pair.reason,
            "validation": pair.validation,
            "points": mine,
            "opponent_points": theirs,
            "margin": margin if pair.state == "finished" else None,
            "ended_at": pair.ended_at,
            "games": [
                {
                    "table": g.table_no + 1,
                    "match_id": g.match_id,
                    "url": f"/replays/{REPLAYS}/{g.match_id}"
                    if (self.replay_dir / f"{g.match_id}.jsonl").exists()
                    else None,
                    "termination": g.termination,
                    "host": g.host,  # where it was played: "arena", or a Ray host
                }
                for g in games
            ],
        }


def rating_json(rating: RatingRow, bot: BotRow | None) -> dict[str, Any]:
    """A leaderboard's row: the rating, the bot's record and state (the JSON and the pages')."""
    return {
        "bot": rating.bot,
        "leaderboard": rating.leaderboard,
        "mu": round(rating.mu, 3),
        "sigma": round(rating.sigma, 3),
        "score": round(rating.score, 3),
        "games": rating.pairs,
        "wins": rating.wins,
        "draws": rating.draws,
        "losses": rating.losses,
        "average_margin": round(rating.margin / rating.pairs, 1) if rating.pairs else 0.0,
        "last_played": rating.last_played,
        "provisional": provisional(rating),
        "state": bot.state.value if bot is not None else "",
        "house": bot.house if bot is not None else False,
    }


def _side(pair: PairRow, name: str) -> tuple[str, int]:
    """The opponent of `name` in a pair, and `name`'s margin."""
    if pair.bot_a == name:
        return pair.bot_b, pair.margin
    return pair.bot_a, -pair.margin


def _bot_json(bot: BotRow) -> dict[str, Any]:
    """What anyone may see of a bot: never its key, its command or where it runs."""
    return {
        "bot": bot.name,
        "kind": bot.kind,
        "house": bot.house,
        "state": bot.state.value,
        "reason": bot.reason,
        "version": bot.version,
        "since": bot.created_at,
    }


__all__ = ["REPLAYS", "ArenaView", "rating_json"]
