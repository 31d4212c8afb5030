"""An arena whose hosted pairs are played on Ray hosts (the tournament's, cluster.py): where a
pair goes, and a two-node Ray cluster on this machine playing an arena's pairs on both nodes,
each result stored and rated once by the arena, the one coordinator."""

from __future__ import annotations

import asyncio
import dataclasses
import io
import shutil
from pathlib import Path
from typing import Any

import pytest

from referee.arena.config import parse_arena_config, with_overrides
from referee.arena.matchmaker import Match
from referee.arena.ratings import rerate
from referee.arena.runner import Arena
from referee.arena.store import ArenaStore
from referee.arena.view import ArenaView
from referee.replay import read_replay
from referee.replay.verify import verify
from referee.tournament.config import ConfigError
from tests.arena.test_arena import ROOT, config_in, settle

HOSTED = "hosted"


@dataclasses.dataclass
class _FakeHost:
    """Stands in for a host when only the placement is under test."""

    name: str
    lost: bool = False


def test_hosted_pairs_spread_over_the_ray_hosts_and_remote_ones_stay_here(tmp_path: Path) -> None:
    config = config_in(tmp_path)
    store = ArenaStore(config.store)
    for name in ("a", "b", "c", "d"):
        store.add_bot(name, bot="clients.random_bot:RandomBot")
    store.add_bot("far")  # a remote bot: it connects to the arena's own referee
    arena = Arena(config, store, io.StringIO())
    here, one, two = _FakeHost("arena"), _FakeHost("n/1/0"), _FakeHost("n/2/0")
    arena.host = here  # type: ignore[assignment]
    arena.ray_hosts = [one, two]  # type: ignore[list-item]

    def place(pair_id: int, a: str, b: str) -> Any:
        host = arena._place(Match(a, b, HOSTED, validation=False))
        arena.placed[pair_id] = host
        return host

    assert place(1, "a", "b") is one
    assert place(2, "c", "d") is two  # the least busy
    assert place(3, "a", "far") is here and place(4, "far", "b") is here
    arena.placed.clear()
    # Of hosts equally idle, the one sent fewer pairs: pairs one after another use both.
    assert [arena._place(Match("a", "b", HOSTED, validation=False)) for _ in range(4)] == [one, two, one, two]
    one.lost = True
    assert {arena._place(Match("a", "b", HOSTED, validation=False)).name for _ in range(3)} == {"n/2/0"}
    two.lost = True  # every Ray host lost: the arena plays on by itself
    assert arena._place(Match("a", "b", HOSTED, validation=False)) is here
    store.close()


def test_the_config_and_the_command_line_name_the_cluster(tmp_path: Path) -> None:
    text = '[arena]\nray = "auto"\nray_hosts_per_node = 2\n'
    config = parse_arena_config(text, tmp_path / "a.toml")
    assert (config.ray, config.ray_hosts_per_node) == ("auto", 2)
    assert with_overrides(config, ray="10.0.0.5:6379", hosts_per_node=0).ray_hosts_per_node == 0
    assert with_overrides(config, ray="local:2").ray == "local:2"
    assert parse_arena_config("", tmp_path / "a.toml").ray == ""
    with pytest.raises(ConfigError, match=r"arena\.ray"):
        parse_arena_config('[arena]\nray = "somewhere"\n', tmp_path / "a.toml")
    with pytest.raises(ValueError, match="--ray"):
        with_overrides(config, ray="local:0")


def test_hosted_pairs_are_played_on_both_nodes_of_a_ray_cluster_and_rated_once(tmp_path: Path) -> None:
    pytest.importorskip("ray", reason="Ray is the [ray] extra: pip install -e '.[ray]' (make test does)")
    # Two nodes of one CPU each: one host per node. The sandbox is tests/sandbox's concern.
    config = dataclasses.replace(config_in(tmp_path), ray="local:2")
    store = ArenaStore(config.store)
    store.add_bot("showcase", bot="clients.showcase_bot:ShowcaseBot", workdir=str(ROOT))
    out = io.StringIO()
    arena = Arena(config, store, out)
    host_folders: list[Path] = []  # each host's temporary folder: its bots' logs outlive it

    async def body() -> None:
        try:
            await arena.start()
            host_folders.extend(Path(host.logs).parent for host in arena.ray_hosts)
            assert len({host.node_id for host in arena.ray_hosts}) == 2, out.getvalue()
            # One pair at a time (three bots): no clock, each round waits for its pair's end.
            await settle(arena, 4)
        finally:
            await arena.stop()

    asyncio.run(body())
    for folder in host_folders:
        shutil.rmtree(folder, ignore_errors=True)
    pairs = store.pairs(state="finished")
    assert len(pairs) == 4 and not store.pairs(state="voided"), out.getvalue()
    hosts = {pair.id: {game.host for game in store.games(pair.id)} for pair in pairs}
    # Both tables of a pair on one host; the store names it (machine/node/index); both nodes played.
    assert all(len(names) == 1 for names in hosts.values()), hosts
    nodes = {name.split("/")[1] for names in hosts.values() for name in names}
    assert len(nodes) == 2, hosts
    # Rated once each, by the arena: two history rows per rated pair, and a rerate agrees.
    rated = [pair for pair in pairs if not pair.validation]
    assert rated and sum(r.pairs for r in store.ratings()) == 2 * len(rated)
    history = [row for bot in ("random", "heuristic", "showcase") for row in store.history(bot)]
    assert sorted(pair_id for pair_id, _, _ in history) == sorted(2 * [pair.id for pair in rated])
    ratings, _ = rerate(store.pairs())
    assert sorted(ratings, key=lambda r: r.bot) == sorted(store.ratings(), key=lambda r: r.bot)
    # Each game's replay came back from its host to the arena's folder, and verifies.
    for pair in pairs:
        for game in store.games(pair.id):
            replay = read_replay(config.output_dir / "replays" / f"{game.match_id}.jsonl")
            assert verify(replay).run is not None
    # A bot's page says where each game was played.
    view = ArenaView(config.store, config.output_dir / "replays", config.name)
    page = view.bot("showcase")
    view.close()
    assert page is not None
    assert {game["host"] for pair in page["pairs"] for game in pair["games"]} <= set().union(*hosts.values())
    assert all(game["url"] for pair in page["pairs"] for game in pair["games"])
    store.close()
