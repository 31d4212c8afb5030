"""The tournament config: the sample loads; every mistake is reported with its line and field."""

from __future__ import annotations

from pathlib import Path

import pytest

from referee.tournament.config import ConfigError, load_config, parse_config

REPO = Path(__file__).resolve().parents[2]
GOOD = """\
[tournament]
name = "t"
seed = "s"
hands_per_pairing = 40
concurrency = 4

[rules]
preset = "tournament"

[[entrants]]
name = "a"
bot = "clients.random_bot:RandomBot"

[[entrants]]
name = "b"
bot = "clients.heuristic_bot:HeuristicBot"
"""


def _error(text: str) -> ConfigError:
    with pytest.raises(ConfigError) as caught:
        parse_config(text, Path("t.toml"))
    return caught.value


def test_sample_config_loads() -> None:
    config = load_config(REPO / "tournaments" / "sample.toml")
    assert [t.name for t in config.teams] == ["random", "heuristic", "showcase"]
    assert all(t.players == (t.name, t.name) for t in config.teams)
    assert config.rules.fixed_rounds == 4
    assert config.duplicate
    # 96 hands of 4-deal games: 24 games, 12 duplicate board pairs.
    assert (config.games_per_pairing, config.boards_per_pairing) == (24, 12)
    assert config.database == REPO / "tournaments" / "out" / "sample" / "results.sqlite"


def test_defaults_and_hands_rounded_up_to_whole_board_pairs() -> None:
    config = parse_config(GOOD.replace("hands_per_pairing = 40", "hands_per_pairing = 9"))
    # 9 hands need 3 games of 4 deals; a duplicate board pair is 2 games: 4.
    assert config.games_per_pairing == 4
    assert config.clock.max_violations == 10
    assert config.sprt.elo1 == 50 and config.sprt.stop_early


def test_the_runner_not_the_referee_decides_about_bots_that_do_not_come() -> None:
    # A game whose seats never all connect is stopped by the runner for resume, not forfeited.
    assert parse_config(GOOD).clock.start_timeout_ms == 0
    given = parse_config(GOOD + "\n[clock]\nstart_timeout_ms = 90000\n")
    assert given.clock.start_timeout_ms == 90_000


def test_unknown_field_names_its_line() -> None:
    error = _error(GOOD.replace("concurrency = 4", "concurency = 4"))
    assert error.line == 5
    assert error.field == "tournament.concurency"
    assert str(error).startswith("t.toml, line 5: field tournament.concurency: unknown field")


def test_wrong_type_names_its_line_and_field() -> None:
    error = _error(GOOD.replace('bot = "clients.heuristic_bot:HeuristicBot"', "bot = 7"))
    assert (error.line, error.field) == (16, "entrants[1].bot")
    assert "must be a string, not 7" in str(error)


def test_out_of_range_value() -> None:
    error = _error(GOOD.replace("concurrency = 4", "concurrency = 0"))
    assert (error.line, error.field) == (5, "tournament.concurrency")


def test_concurrency_goes_as_far_as_one_referee_was_measured_to_hold() -> None:
    # 512 games at once played to the end on one referee (docs/develop/benchmarks.md); the cap
    # leaves room above that for faster machines, not for any number a typo can make.
    assert parse_config(GOOD.replace("concurrency = 4", "concurrency = 1024")).concurrency == 1024
    error = _error(GOOD.replace("concurrency = 4", "concurrency = 1025"))
    assert "must be 1 to 1024 tables at once, not 1025" in str(error)


def test_bad_rules_flag_value_names_the_flag() -> None:
    error = _error(GOOD.replace('preset = "tournament"', 'preset = "tournament"\nbomb_timing = "never"'))
    assert (error.line, error.field) == (9, "rules.bomb_timing")
    assert "bomb_timing must be one of" in str(error)


def test_syntax_error_keeps_tomllib_line() -> None:
    error = _error(GOOD.replace('seed = "s"', "seed = "))
    assert error.line == 3
    assert "TOML syntax" in str(error)


def test_missing_seed_is_required() -> None:
    error = _error(GOOD.replace('seed = "s"\n', ""))
    assert error.field == "tournament.seed"
    assert error.line == 1  # the [tournament] table, where it belongs


def test_hands_need_a_fixed_number_of_deals() -> None:
    error = _error(GOOD.replace('preset = "tournament"', 'preset = "official"'))
    assert error.field == "tournament.hands_per_pairing"
    assert "fixed_rounds" in str(error)


def test_team_of_unknown_entrant() -> None:
    text = GOOD + '\n[[teams]]\nplayers = ["a", "b"]\n\n[[teams]]\nplayers = ["a", "c"]\n'
    error = _error(text)
    assert (error.line, error.field) == (22, "teams[1].players")
    assert "'c' is not an entrant" in str(error)


def test_named_pairs_form_teams() -> None:
    text = GOOD + '\n[[teams]]\nname = "ab"\nplayers = ["a", "b"]\n\n[[teams]]\nplayers = ["b", "b"]\n'
    config = parse_config(text)
    assert [(t.name, t.players) for t in config.teams] == [("ab", ("a", "b")), ("b+b", ("b", "b"))]


def test_gauntlet_needs_a_candidate_team() -> None:
    error = _error(GOOD.replace('name = "t"', 'name = "t"\nformat = "gauntlet"\ncandidate = "zz"'))
    assert (error.line, error.field) == (4, "tournament.candidate")


def test_remote_entrant_and_bot_spec() -> None:
    remote = parse_config(GOOD.replace('bot = "clients.random_bot:RandomBot"', "remote = true"))
    assert remote.entrant("a").remote and not remote.entrant("a").bot
    error = _error(GOOD.replace("clients.random_bot:RandomBot", "clients.random_bot"))
    assert (error.line, error.field) == (12, "entrants[0].bot")


def test_fingerprint_follows_what_decides_the_games() -> None:
    base = parse_config(GOOD)
    assert (
        base.fingerprint() == parse_config(GOOD.replace("concurrency = 4", "concurrency = 2")).fingerprint()
    )
    assert base.fingerprint() != parse_config(GOOD.replace('seed = "s"', 'seed = "t"')).fingerprint()


def test_tls_needs_both_the_certificate_and_the_key() -> None:
    error = _error(GOOD.replace("concurrency = 4", 'concurrency = 4\ntls_cert = "cert.pem"'))
    assert (error.line, error.field) == (6, "tournament.tls_cert")
    assert "give tls_key too" in str(error)
    config = parse_config(
        GOOD.replace("concurrency = 4", 'tls_cert = "c.pem"\ntls_key = "k.pem"'), Path("dir/t.toml")
    )
    assert (config.tls_cert, config.tls_key) == (Path("dir/c.pem"), Path("dir/k.pem"))
    assert (
        config.fingerprint()
        == parse_config(GOOD.replace("concurrency = 4", ""), Path("t.toml")).fingerprint()
    )
