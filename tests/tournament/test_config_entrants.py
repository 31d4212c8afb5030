"""The entrants' newer keys: commands in any language, how their processes start, their limits;
each mistake named with its field; and every older config keeps its fingerprint."""

from __future__ import annotations

import shlex
from pathlib import Path

import pytest

from referee.tournament.config import ConfigError, describe, load_config, parse_config
from tests.tournament.test_config import GOOD, REPO

SOURCE = Path("/configs/t.toml")
B = 'bot = "clients.heuristic_bot:HeuristicBot"'


def with_b(lines: str) -> str:
    """GOOD with entrant b's bot line replaced by `lines`."""
    return GOOD.replace(B, lines)


def error_of(text: str) -> ConfigError:
    with pytest.raises(ConfigError) as caught:
        parse_config(text, SOURCE)
    return caught.value


def test_old_configs_keep_their_fingerprints() -> None:
    # Computed before commands and limits existed: a store made then must still resume.
    remote_and_processes = (
        GOOD + '\n[[entrants]]\nname = "r"\nremote = true\ntoken_file = "tok.txt"\n'
        '\n[[entrants]]\nname = "p"\nbot = "clients.random_bot:RandomBot"\nprocesses = 3\n'
    )
    assert load_config(REPO / "tournaments" / "sample.toml").fingerprint() == "1f479034769642cd"
    assert parse_config(GOOD).fingerprint() == "0e91d8c3eb9b6db1"
    assert parse_config(remote_and_processes).fingerprint() == "2931ffa4f7689a63"


def test_a_command_entrant_runs_in_the_configs_folder_one_process_per_seat() -> None:
    config = parse_config(with_b("command = \"node bot.js {server} {token} --name 'my bot'\""), SOURCE)
    b = config.entrant("b")
    assert b.command == ("node", "bot.js", "{server}", "{token}", "--name", "my bot")
    assert b.workdir == SOURCE.parent and b.one_process_per_seat and not b.bot
    assert shlex.split(describe(config)["bots"]["b"]) == list(b.command)  # one line, quoted as a shell would
    array = parse_config(with_b('command = ["node", "my bot.js", "{token}"]\nworkdir = "bots/b"'), SOURCE)
    assert array.entrant("b").command == ("node", "my bot.js", "{token}")
    assert array.entrant("b").workdir == SOURCE.parent / "bots" / "b"


def test_limits_and_process_keys_are_read_and_leave_the_fingerprint_alone() -> None:
    limited = with_b(f"{B}\nper_seat = true\ncpu_seconds = 30\nmemory_mb = 512\ncpus = [0, 1]")
    config = parse_config(limited, SOURCE)
    b = config.entrant("b")
    assert (b.cpu_seconds, b.memory_mb, b.cpus, b.per_seat) == (30, 512, (0, 1), True)
    assert b.one_process_per_seat and config.fingerprint() == parse_config(GOOD, SOURCE).fingerprint()
    many = parse_config(with_b('command = "./bot --server {server}"\nserves_many = true\nprocesses = 2'))
    assert many.entrant("b").serves_many and many.entrant("b").processes == 2
    assert not many.entrant("b").one_process_per_seat


def test_the_command_is_part_of_the_fingerprint() -> None:
    one = parse_config(with_b('command = "node bot.js {token}"'))
    other = parse_config(with_b('command = "node bot2.js {token}"'))
    assert one.fingerprint() != other.fingerprint() != parse_config(GOOD).fingerprint()


@pytest.mark.parametrize(
    ("lines", "field", "says"),
    [
        (f'{B}\ncommand = "x {{token}}"', "entrants[1].command", "or a command, not both"),
        ('command = "node \'bot.js"', "entrants[1].command", "cannot split"),
        ("command = 3", "entrants[1].command", "or an array of strings, not 3"),
        ('command = ""', "entrants[1].command", "give the program and its arguments"),
        ('command = "x {tokn}"', "entrants[1].command", "unknown placeholder {tokn}"),
        ('command = "x {token}"\nserves_many = true', "entrants[1].command", "drop it, or drop serves_many"),
        (f"{B}\nserves_many = true", "entrants[1].serves_many", "give it with command"),
        ('command = "x {token}"\nper_seat = true', "entrants[1].per_seat", "a process per seat"),
        ('command = "x {token}"\nprocesses = 2', "entrants[1].processes", "is for one that serves many"),
        (f'{B}\nworkdir = "w"', "entrants[1].workdir", "give it with command"),
        ("remote = true\ncpu_seconds = 5", "entrants[1].cpu_seconds", "for local entrants"),
        (f"{B}\ncpu_seconds = 0", "entrants[1].cpu_seconds", "1 to 86400 seconds"),
        (f"{B}\nmemory_mb = 8", "entrants[1].memory_mb", "16 to 1048576 MiB"),
        (f'{B}\ncpus = ["0"]', "entrants[1].cpus", "e.g. cpus = [0, 1]"),
        (f"{B}\ncpus = []", "entrants[1].cpus", "leave cpus out"),
        (f"{B}\ncpus = [1, 1]", "entrants[1].cpus", "names a CPU twice"),
        ("name_only = 1", "entrants[1].name_only", "unknown field"),
    ],
)
def test_each_mistake_names_its_field_and_what_to_do(lines: str, field: str, says: str) -> None:
    error = error_of(with_b(lines))
    assert error.field == field, str(error)
    assert says in str(error), str(error)
    assert error.line is not None


def test_an_entrant_without_bot_command_or_remote_is_told_all_three() -> None:
    error = error_of(with_b(""))
    assert "bot = " in str(error) and "command = " in str(error) and "remote = true" in str(error)
