"""The arena's config (TOML): every key has a default, so an arena runs with no file at all.

[arena]
name = "arena"
store = "arena.sqlite"        # the arena's state; --store overrides it
output_dir = "arena"          # replays and bots' logs
listen = "127.0.0.1:0"        # the referee's gRPC port (--listen)
http = ""                     # the web face (--http), e.g. 127.0.0.1:8080
pair_every_s = 2.0            # the matchmaker's rounds (between them, a bot is seated once ready)
concurrency = 2               # pairs at once (two tables each)
leaderboards = "separate"     # hosted and remote bots ranked apart, or "one"
pause_after_forfeits = 3      # pairs in a row with a forfeit before a bot is paused
game_timeout_s = 900.0
start_timeout_s = 60.0
ray = ""                      # hosted pairs on a Ray cluster (--ray): auto, HOST:PORT or local:N
ray_hosts_per_node = 0        # referees per Ray node (--hosts-per-node); 0: one per CPU

[rules]                       # as a tournament's; the default preset plays 4 deals a game
[clock]                       # as a tournament's
[[house]]                     # the arena's own bots, as a tournament's [[entrants]] (with
name = "random"               # their limits); by default the three sample bots
bot = "clients.random_bot:RandomBot"
"""

from __future__ import annotations

import dataclasses
from dataclasses import dataclass, field
from pathlib import Path

from referee.match import ClockSettings
from referee.rules import RulesConfig
from referee.rules.config import TOURNAMENT
from referee.tournament.cluster import parse_ray_target
from referee.tournament.config import DEFAULT_CLOCK as TOURNAMENT_CLOCK
from referee.tournament.config import (
    ConfigError,
    ConfigReader,
    Entrant,
    read_clock,
    read_entrants,
    read_rules,
    read_toml,
)

SAMPLE_HOUSE = (
    Entrant("random", "clients.random_bot:RandomBot"),
    Entrant("heuristic", "clients.heuristic_bot:HeuristicBot"),
    Entrant("showcase", "clients.showcase_bot:ShowcaseBot"),
)
LEADERBOARD_MODES = ("separate", "one")
HOSTED, REMOTE = "hosted", "remote"


@dataclass(frozen=True, slots=True)
class ArenaConfig:
    """Everything an arena needs, checked; paths are resolved against the config's folder."""

    name: str = "arena"
    store: Path = Path("arena.sqlite")
    output_dir: Path = Path("arena")
    listen: str = "127.0.0.1:0"
    http: str = ""
    pair_every_s: float = 2.0
    concurrency: int = 2
    leaderboards: str = "separate"
    pause_after_forfeits: int = 3
    game_timeout_s: float = 900.0
    start_timeout_s: float = 60.0
    rules: RulesConfig = TOURNAMENT
    clock: ClockSettings = TOURNAMENT_CLOCK
    house: tuple[Entrant, ...] = SAMPLE_HOUSE
    sandbox: bool = True
    source: Path = field(default=Path("arena.toml"))
    # The Ray cluster whose hosts play the pairs of two hosted bots (the tournament's --ray:
    # auto, HOST:PORT or local:N); "" plays every pair on the arena's own referee.
    ray: str = ""
    ray_hosts_per_node: int = 0  # 0: one host per CPU of each node, as in tournaments

    def leaderboard(self, kind: str) -> str:
        """The leaderboard a bot of `kind` ("hosted" or "remote") is ranked on."""
        return "all" if self.leaderboards == "one" else kind


_ARENA_KEYS = {
    "name", "store", "output_dir", "listen", "http", "pair_every_s", "concurrency", "leaderboards",
    "pause_after_forfeits", "game_timeout_s", "start_timeout_s", "ray", "ray_hosts_per_node",
}  # fmt: skip


def load_arena_config(path: Path | None) -> ArenaConfig:
    """The config in `path`, or the defaults when there is none."""
    if path is None:
        return ArenaConfig()
    try:
        text = path.read_text(encoding="utf-8")
    except OSError as error:
        raise ConfigError(f"cannot read the config: {error.strerror}", source=str(path)) from None
    return parse_arena_config(text, path)


def parse_arena_config(text: str, source: Path = Path("arena.toml")) -> ArenaConfig:
    """Check an arena config given as TOML text."""
    reader = read_toml(text, source)
    reader.unknown_keys((), {"arena", "rules", "clock", "house"})
    reader.table(("arena",))
    reader.unknown_keys(("arena",), _ARENA_KEYS)
    base = source.parent
    defaults = ArenaConfig()
    here = ("arena",)

    def path_of(key: str, default: Path) -> Path:
        value = reader.get((*here, key), str)
        return default if value is None else base / value

    name = reader.get((*here, "name"), str, defaults.name)
    concurrency = reader.get((*here, "concurrency"), int, defaults.concurrency)
    if not 1 <= concurrency <= 256:
        raise reader.error((*here, "concurrency"), f"must be 1 to 256 pairs at once, not {concurrency}")
    pair_every_s = reader.get((*here, "pair_every_s"), float, defaults.pair_every_s)
    if not 0.05 <= pair_every_s <= 3600:
        raise reader.error((*here, "pair_every_s"), f"must be 0.05 to 3600 seconds, not {pair_every_s}")
    leaderboards = reader.get((*here, "leaderboards"), str, defaults.leaderboards)
    if leaderboards not in LEADERBOARD_MODES:
        raise reader.error((*here, "leaderboards"), f'must be "separate" or "one", not {leaderboards!r}')
    pause = reader.get((*here, "pause_after_forfeits"), int, defaults.pause_after_forfeits)
    if not 1 <= pause <= 1000:
        raise reader.error((*here, "pause_after_forfeits"), f"must be 1 to 1000 pairs, not {pause}")
    timeouts = {}
    for key in ("game_timeout_s", "start_timeout_s"):
        value = reader.get((*here, key), float, getattr(defaults, key))
        if not 1 <= value <= 86_400:
            raise reader.error((*here, key), f"must be 1 to 86400 seconds, not {value}")
        timeouts[key] = value
    ray = reader.get((*here, "ray"), str, defaults.ray)
    if ray:
        try:
            parse_ray_target(ray)
        except ValueError:
            raise reader.error(
                (*here, "ray"),
                f"must be auto, HOST:PORT (the head's address) or local:N (1 to 16), not {ray!r}",
            ) from None
    hosts_per_node = reader.get((*here, "ray_hosts_per_node"), int, defaults.ray_hosts_per_node)
    if not 0 <= hosts_per_node <= 256:
        raise reader.error((*here, "ray_hosts_per_node"), f"must be 0 to 256 hosts, not {hosts_per_node}")
    rules = _rules(reader)
    house = read_entrants(reader, base, "house", least=0) if "house" in reader.data else SAMPLE_HOUSE
    for entrant in house:
        if entrant.remote:
            raise ConfigError("a house bot runs here: give bot or command", source=str(source), field="house")
    return ArenaConfig(
        name=name,
        store=path_of("store", defaults.store),
        output_dir=path_of("output_dir", defaults.output_dir),
        listen=reader.get((*here, "listen"), str, defaults.listen),
        http=reader.get((*here, "http"), str, defaults.http),
        pair_every_s=pair_every_s,
        concurrency=concurrency,
        leaderboards=leaderboards,
        pause_after_forfeits=pause,
        rules=rules,
        clock=read_clock(reader),
        house=house,
        source=source,
        ray=ray,
        ray_hosts_per_node=hosts_per_node,
        **timeouts,
    )


def _rules(reader: ConfigReader) -> RulesConfig:
    if "rules" not in reader.data:
        return TOURNAMENT
    rules, _, _ = read_rules(reader)
    return rules


def with_overrides(
    config: ArenaConfig,
    *,
    store: Path | None = None,
    listen: str = "",
    http: str = "",
    sandbox: bool = True,
    ray: str = "",
    hosts_per_node: int | None = None,
) -> ArenaConfig:
    """The config with the command line's --store, --listen, --http, --no-sandbox, --ray and
    --hosts-per-node where given (ValueError for a --ray or --hosts-per-node it cannot take)."""
    if ray:
        parse_ray_target(ray)
    if hosts_per_node is not None and hosts_per_node < 0:
        raise ValueError(f"--hosts-per-node takes 0 or more, not {hosts_per_node}")
    return dataclasses.replace(
        config,
        store=store or config.store,
        listen=listen or config.listen,
        http=http or config.http,
        sandbox=config.sandbox and sandbox,
        ray=ray or config.ray,
        ray_hosts_per_node=config.ray_hosts_per_node if hosts_per_node is None else hosts_per_node,
    )


__all__ = [
    "HOSTED",
    "REMOTE",
    "SAMPLE_HOUSE",
    "ArenaConfig",
    "load_arena_config",
    "parse_arena_config",
    "with_overrides",
]
