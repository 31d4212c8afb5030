"""A tournament's TOML config: parsed with tomllib, checked field by field, errors with line numbers.

tomllib reports syntax errors with their line but forgets where each value came from, so a
small scan of the source (`_key_lines`) maps every table and key to its line for the errors
found while checking the values.
"""

from __future__ import annotations

import dataclasses
import hashlib
import json
import math
import re
import shlex
import tomllib
from collections.abc import Mapping
from dataclasses import dataclass, field
from pathlib import Path
from typing import Any

from referee.bot_commands import PER_SEAT, PLACEHOLDERS, placeholders_in
from referee.match import ClockSettings
from referee.rules import RulesConfig, RulesError

FORMATS = ("round_robin", "gauntlet")
NAME = re.compile(r"[A-Za-z0-9][A-Za-z0-9_.-]{0,23}")
TEAM_NAME = re.compile(r"[A-Za-z0-9][A-Za-z0-9_.+-]{0,48}")  # "a+b" names a pair by default
BOT_SPEC = re.compile(r"[^:\s]+:[A-Za-z_][A-Za-z0-9_]*")
# Clocks for bots that answer in milliseconds, loose enough for a loaded 2-core machine; a bot
# process that dies forfeits after max_violations defaults instead of holding its tables forever.
DEFAULT_CLOCK = ClockSettings(
    decision_ms=5_000,
    bank_ms=30_000,
    window_ms=2_000,
    max_violations=10,
    heartbeat_interval_ms=5_000,
    heartbeat_timeout_ms=15_000,
    reconnect_grace_ms=10_000,
    # 0: each game's start timeout is the tournament's start_timeout_s (host.game_clock); the
    # host keeps no result of a game whose bots did not all come (NO_SHOW), and resume plays it.
    start_timeout_ms=0,
)
Path_ = tuple[str | int, ...]


class ConfigError(ValueError):
    """A config that cannot be used: where (file, line, field) and why."""

    def __init__(self, message: str, *, source: str = "", line: int | None = None, field: str = "") -> None:
        where = source
        if line is not None:
            where = f"{where}, line {line}" if where else f"line {line}"
        prefix = f"{where}: " if where else ""
        prefix += f"field {field}: " if field else ""
        super().__init__(prefix + message)
        self.line = line
        self.field = field


@dataclass(frozen=True, slots=True)
class Entrant:
    """A bot in the tournament: a local Bot class or command run in its own process(es), or a remote bot."""

    name: str
    bot: str = ""  # MODULE:CLASS for a local entrant
    remote: bool = False
    processes: int = 1
    token_file: str = ""  # remote entrants: where the seat tokens are appended, one per line
    # A program in any language, split into arguments; its placeholders are filled per process.
    command: tuple[str, ...] = ()
    workdir: Path | None = None  # where a command runs: the config's folder unless given
    serves_many: bool = False  # the command reads seat lines on its standard input, as the worker does
    per_seat: bool = False  # a bot = entrant's worker plays one seat per process
    cpu_seconds: int | None = None  # CPU time per process (RLIMIT_CPU)
    memory_mb: int | None = None  # resident memory of a process and its children
    cpus: tuple[int, ...] = ()  # the CPUs its processes may run on
    # Variables of the runner's environment its processes also get (the rest is an allow-list:
    # the runner's own, an organiser token among them, never reaches a bot).
    pass_env: tuple[str, ...] = ()

    @property
    def one_process_per_seat(self) -> bool:
        """Whether each seat gets a process of its own, started for its game and ended with it."""
        return self.per_seat or (bool(self.command) and not self.serves_many)

    @property
    def code(self) -> str:
        """What plays: "remote", MODULE:CLASS, or the command as one line."""
        return "remote" if self.remote else (self.bot or shlex.join(self.command))


@dataclass(frozen=True, slots=True)
class Team:
    """Two players that sit at partner seats: two copies of one entrant, or a named pair."""

    name: str
    players: tuple[str, str]


@dataclass(frozen=True, slots=True)
class SprtSettings:
    """The sequential test run on every pairing (see stats.Sprt)."""

    elo0: float = 0.0
    elo1: float = 50.0
    alpha: float = 0.05
    beta: float = 0.05
    stop_early: bool = True


@dataclass(frozen=True, slots=True)
class TournamentConfig:
    """Everything a tournament needs, checked; paths are resolved against the config's folder."""

    name: str
    seed: str
    format: str
    candidate: str  # gauntlet: the team that meets the field; "" for a round robin
    games_per_pairing: int  # games at the tables; a duplicate board pair counts two
    duplicate: bool
    concurrency: int
    database: Path
    replay_dir: Path
    output_dir: Path
    listen: str
    game_timeout_s: float
    start_timeout_s: float
    rules: RulesConfig
    preset: str
    rules_overrides: dict[str, Any]
    clock: ClockSettings
    sprt: SprtSettings
    entrants: tuple[Entrant, ...]
    teams: tuple[Team, ...]
    source: Path = field(default=Path("tournament.toml"))
    signing_key: Path | None = None  # the Ed25519 private key that signs every game's replay
    # The certificate and key remote entrants' bots are served with (TLS); local bots use a
    # plaintext port on loopback beside it. None: plaintext for all, as before.
    tls_cert: Path | None = None
    tls_key: Path | None = None
    # Local entrants' processes run in a sandbox (referee.sandbox); `--no-sandbox` turns it off
    # for this run (a command-line choice, not the config's: it decides nothing about the games).
    sandbox: bool = True

    @property
    def live_dir(self) -> Path:
        """Where the replays of games being played are written (mode 0700): published to
        replay_dir once their board is over, so that no full view of a deal is readable while
        it is in play."""
        return self.output_dir / "live"

    @property
    def boards_per_pairing(self) -> int:
        """Deals (seeds) per pairing: a duplicate board is played at two tables."""
        return self.games_per_pairing // 2 if self.duplicate else self.games_per_pairing

    @property
    def hands_per_game(self) -> int | None:
        """Deals per game when the rules fix them (match_mode fixed_rounds:N), else None."""
        return self.rules.fixed_rounds

    def entrant(self, name: str) -> Entrant:
        """The entrant called `name`."""
        return next(e for e in self.entrants if e.name == name)

    def fingerprint(self) -> str:
        """A hash of everything that decides which games are played and how; resume checks it."""
        decisive = {
            "seed": self.seed,
            "format": self.format,
            "candidate": self.candidate,
            "games_per_pairing": self.games_per_pairing,
            "duplicate": self.duplicate,
            "rules": self.rules.to_json(),
            "teams": [[t.name, *t.players] for t in self.teams],
            # A command decides who plays as `bot` does; limits, processes and folders do not.
            # Old configs have no command, and keep their fingerprint.
            "bots": [
                [e.name, e.bot, e.remote, *([list(e.command)] if e.command else [])] for e in self.entrants
            ],
        }
        return hashlib.sha256(json.dumps(decisive, sort_keys=True).encode()).hexdigest()[:16]


def _key_lines(text: str) -> dict[Path_, int]:
    """The line (from 1) of every table header and key in a TOML source, by path.

    Good enough for error messages: it follows [table], [[array]] and dotted keys, and ignores
    lines inside multi-line strings.
    """
    lines: dict[Path_, int] = {}
    arrays: dict[tuple[str, ...], int] = {}
    current: Path_ = ()
    in_string = False
    for number, raw in enumerate(text.splitlines(), start=1):
        line = raw.strip()
        toggles = (line.count('"""') + line.count("'''")) % 2 == 1
        if in_string:
            in_string = not toggles
            continue
        in_string = toggles  # the line that opens a multi-line string still holds its key
        if line.startswith("[["):
            names = tuple(_split_key(line[2 : line.find("]]")]))
            index = arrays.get(names, -1) + 1
            arrays[names] = index
            current = (*names, index)
            lines.setdefault(current, number)
        elif line.startswith("["):
            current = tuple(_split_key(line[1 : line.find("]")]))
            lines.setdefault(current, number)
        elif "=" in line and not line.startswith("#"):
            key = line.split("=", 1)[0]
            lines.setdefault((*current, *_split_key(key)), number)
    return lines


def _split_key(key: str) -> list[str]:
    return [part.strip().strip("\"'") for part in key.split(".") if part.strip()]


class ConfigReader:
    """Reads checked values out of the parsed TOML, raising ConfigError with the line and field."""

    def __init__(self, data: dict[str, Any], text: str, source: str) -> None:
        self.data = data
        self.lines = _key_lines(text)
        self.source = source

    def error(self, path: Path_, message: str) -> ConfigError:
        """A ConfigError at `path`'s line (or its nearest enclosing table's)."""
        line = None
        for end in range(len(path), 0, -1):
            line = self.lines.get(path[:end])
            if line is not None:
                break
        return ConfigError(message, source=self.source, line=line, field=_dotted(path))

    def table(self, path: Path_, required: bool = False) -> dict[str, Any]:
        """The table at `path` ({} when absent and not required)."""
        value = self._get(path)
        if value is None:
            if required:
                raise self.error(path, "this table is required")
            return {}
        if not isinstance(value, dict):
            raise self.error(path, f"must be a table, not {_show(value)}")
        return value

    def unknown_keys(self, path: Path_, allowed: set[str]) -> None:
        """Reject keys that no field reads: a typo must not pass silently."""
        for key in self.table(path):
            if key not in allowed:
                hint = ", ".join(sorted(allowed))
                raise self.error((*path, key), f"unknown field (known here: {hint})")

    def get(self, path: Path_, kind: type, default: Any = None) -> Any:
        """The value at `path`, which must be of `kind` (int also accepted for float)."""
        value = self._get(path)
        if value is None:
            return default
        ok = isinstance(value, kind) and not (kind is int and isinstance(value, bool))
        if kind is float and isinstance(value, int) and not isinstance(value, bool):
            value, ok = float(value), True
        if not ok:
            raise self.error(path, f"must be {_KIND_NAMES.get(kind, kind.__name__)}, not {_show(value)}")
        return value

    def raw(self, path: Path_) -> Any:
        """The value at `path` as TOML gave it (None when absent), for fields of more than one type."""
        return self._get(path)

    def _get(self, path: Path_) -> Any:
        node: Any = self.data
        for part in path:
            if isinstance(part, int):
                if not isinstance(node, list) or part >= len(node):
                    return None
                node = node[part]
            else:
                if not isinstance(node, dict) or part not in node:
                    return None
                node = node[part]
        return node


_KIND_NAMES = {int: "an integer", float: "a number", str: "a string", bool: "true or false", list: "an array"}


def _show(value: Any) -> str:
    return repr(value) if isinstance(value, str | int | float | bool) else type(value).__name__


def _dotted(path: Path_) -> str:
    out = ""
    for part in path:
        out += f"[{part}]" if isinstance(part, int) else (f".{part}" if out else part)
    return out


def load_config(path: Path | str) -> TournamentConfig:
    """Read and check a tournament config file."""
    source = Path(path)
    try:
        text = source.read_text(encoding="utf-8")
    except OSError as error:
        raise ConfigError(f"cannot read the config: {error.strerror}", source=str(source)) from None
    return parse_config(text, source)


def parse_config(text: str, source: Path = Path("tournament.toml")) -> TournamentConfig:
    """Check a tournament config given as TOML text; paths are relative to `source`'s folder."""
    reader = read_toml(text, source)
    reader.unknown_keys((), {"tournament", "rules", "clock", "sprt", "entrants", "teams"})
    entrants = read_entrants(reader, source.parent)
    teams = _teams(reader, entrants)
    return _tournament(reader, source, entrants, teams)


def read_toml(text: str, source: Path) -> ConfigReader:
    """A reader of TOML text; ConfigError with the line for a syntax error."""
    try:
        data = tomllib.loads(text)
    except tomllib.TOMLDecodeError as error:
        found = re.search(r"\(at line (\d+), column \d+\)", str(error))
        line = int(found.group(1)) if found else None
        message = re.sub(r"\s*\(at line \d+, column \d+\)", "", str(error))
        raise ConfigError(f"TOML syntax: {message}", source=str(source), line=line) from None
    return ConfigReader(data, text, str(source))


_ENTRANT_KEYS = {
    "name", "bot", "remote", "processes", "token_file", "command", "workdir", "serves_many", "per_seat",
    "cpu_seconds", "memory_mb", "cpus", "pass_env",
}  # fmt: skip
_LOCAL_ONLY = (
    "command",
    "workdir",
    "serves_many",
    "per_seat",
    "cpu_seconds",
    "memory_mb",
    "cpus",
    "pass_env",
)


def read_entrants(
    reader: ConfigReader, base: Path, array: str = "entrants", least: int = 2
) -> tuple[Entrant, ...]:
    """The bots of a [[ARRAY]] array of tables (a tournament's entrants, an arena's house bots),
    checked; at least `least` of them unless the config gives [teams]."""
    raw = reader.data.get(array)
    if raw is None:
        if not least:
            return ()
        raise reader.error((array,), f"give at least {least} [[{array}]]")
    if not isinstance(raw, list):
        raise reader.error((array,), f"must be an array of tables: write [[{array}]]")
    found: list[Entrant] = []
    for index in range(len(raw)):
        here: Path_ = (array, index)
        reader.table(here, required=True)
        reader.unknown_keys(here, _ENTRANT_KEYS)
        name = reader.get((*here, "name"), str)
        if name is None:
            raise reader.error(here, "every entrant needs a name")
        if not NAME.fullmatch(name):
            raise reader.error((*here, "name"), f"{name!r}: use 1-24 letters, digits, '_', '.' or '-'")
        if any(e.name == name for e in found):
            raise reader.error((*here, "name"), f"{name!r} is the name of an earlier entrant too")
        remote = reader.get((*here, "remote"), bool, False)
        bot = reader.get((*here, "bot"), str, "")
        command = _command(reader, here)
        if remote and bot:
            raise reader.error(
                (*here, "bot"), "a remote entrant connects by itself: give bot or remote, not both"
            )
        if remote:
            for key in _LOCAL_ONLY:
                if key in reader.table(here):
                    raise reader.error(
                        (*here, key), "a remote entrant runs on its own machine: this is for local entrants"
                    )
        if bot and command:
            raise reader.error(
                (*here, "command"), 'give bot = "MODULE:CLASS" (a Python Bot class) or a command, not both'
            )
        if not remote and not bot and not command:
            raise reader.error(
                here,
                'give bot = "MODULE:CLASS" (a local Bot class), command = "..." (a program in any '
                "language) or remote = true",
            )
        if bot and not BOT_SPEC.fullmatch(bot):
            raise reader.error(
                (*here, "bot"), f"expected MODULE:CLASS, e.g. clients.random_bot:RandomBot, not {bot!r}"
            )
        serves_many = reader.get((*here, "serves_many"), bool, False)
        per_seat = reader.get((*here, "per_seat"), bool, False)
        if serves_many and not command:
            raise reader.error(
                (*here, "serves_many"), "says how a command takes its seats: give it with command"
            )
        if per_seat and not bot:
            raise reader.error(
                (*here, "per_seat"),
                "gives a bot = entrant a process per seat (a command without serves_many has one already)",
            )
        if command:
            _check_placeholders(reader, (*here, "command"), command, serves_many)
        given_processes = reader.get((*here, "processes"), int)
        processes = 1 if given_processes is None else given_processes
        if not 1 <= processes <= 16:
            raise reader.error((*here, "processes"), f"must be 1 to 16, not {processes}")
        if given_processes is not None and (per_seat or (command and not serves_many)):
            raise reader.error(
                (*here, "processes"),
                "this entrant starts a process per seat: processes = N is for one that serves many seats",
            )
        token_file = reader.get((*here, "token_file"), str, "")
        if token_file and not remote:
            raise reader.error((*here, "token_file"), "only a remote entrant receives its tokens in a file")
        workdir = reader.get((*here, "workdir"), str)
        if workdir is not None and not command:
            raise reader.error((*here, "workdir"), "is the folder a command runs in: give it with command")
        found.append(
            Entrant(
                name,
                bot,
                remote,
                processes,
                token_file,
                command=command,
                workdir=(base / (workdir or ".")) if command else None,
                serves_many=serves_many,
                per_seat=per_seat,
                **_limits(reader, here),
            )
        )
    if len(found) < least and reader.data.get("teams") is None:
        raise reader.error((array,), f"a tournament needs at least {least} entrants")
    return tuple(found)


def _command(reader: ConfigReader, here: Path_) -> tuple[str, ...]:
    """`command`, as a string split like a shell would (no shell runs it) or an array of arguments."""
    path = (*here, "command")
    raw = reader.raw(path)
    if raw is None:
        return ()
    if isinstance(raw, str):
        try:
            parts = shlex.split(raw)
        except ValueError as error:
            raise reader.error(path, f"cannot split {raw!r} into arguments: {error}") from None
    elif isinstance(raw, list) and all(isinstance(part, str) for part in raw):
        parts = list(raw)
    else:
        raise reader.error(
            path,
            f'must be a string such as "node bot.js {{server}} {{token}}" or an array of strings, '
            f"not {_show(raw)}",
        )
    if not parts or not parts[0]:
        raise reader.error(path, 'give the program and its arguments, e.g. "node bot.js {server} {token}"')
    return tuple(parts)


def _check_placeholders(
    reader: ConfigReader, path: Path_, command: tuple[str, ...], serves_many: bool
) -> None:
    known = ", ".join("{" + key + "}" for key in PLACEHOLDERS)
    for key in placeholders_in(command):
        if key not in PLACEHOLDERS:
            raise reader.error(
                path,
                f"unknown placeholder {{{key}}} (known: {known}); put code with braces in a script file",
            )
        if serves_many and key in PER_SEAT:
            raise reader.error(
                path,
                f"{{{key}}} differs per seat, but a command that serves many seats reads them on its "
                "standard input (TOKEN NAME RNG_SEED lines): drop it, or drop serves_many",
            )


_ENV_NAME = re.compile(r"[A-Za-z_][A-Za-z0-9_]*")


def _limits(reader: ConfigReader, here: Path_) -> dict[str, Any]:
    """cpu_seconds, memory_mb and cpus: each process's share of the machine; pass_env: what it
    gets of the runner's environment."""
    cpu_seconds = reader.get((*here, "cpu_seconds"), int)
    if cpu_seconds is not None and not 1 <= cpu_seconds <= 86_400:
        raise reader.error(
            (*here, "cpu_seconds"), f"must be 1 to 86400 seconds of CPU time per process, not {cpu_seconds}"
        )
    memory_mb = reader.get((*here, "memory_mb"), int)
    if memory_mb is not None and not 16 <= memory_mb <= 1_048_576:
        raise reader.error((*here, "memory_mb"), f"must be 16 to 1048576 MiB per process, not {memory_mb}")
    cpus = reader.get((*here, "cpus"), list, [])
    if not all(isinstance(c, int) and not isinstance(c, bool) and 0 <= c < 4096 for c in cpus):
        raise reader.error((*here, "cpus"), "give CPU numbers from 0, e.g. cpus = [0, 1]")
    if "cpus" in reader.table(here) and not cpus:
        raise reader.error((*here, "cpus"), "give at least one CPU, or leave cpus out to use them all")
    if len(set(cpus)) != len(cpus):
        raise reader.error((*here, "cpus"), f"names a CPU twice: {cpus}")
    pass_env = reader.get((*here, "pass_env"), list, [])
    if not all(isinstance(n, str) and _ENV_NAME.fullmatch(n) for n in pass_env):
        raise reader.error(
            (*here, "pass_env"), 'give the names of environment variables, e.g. pass_env = ["MY_BOT_MODEL"]'
        )
    return {
        "cpu_seconds": cpu_seconds,
        "memory_mb": memory_mb,
        "cpus": tuple(cpus),
        "pass_env": tuple(pass_env),
    }


def _teams(reader: ConfigReader, entrants: tuple[Entrant, ...]) -> tuple[Team, ...]:
    raw = reader.data.get("teams")
    if raw is None:
        return tuple(Team(e.name, (e.name, e.name)) for e in entrants)
    if not isinstance(raw, list):
        raise reader.error(("teams",), "must be an array of tables: write [[teams]]")
    names = {e.name for e in entrants}
    found: list[Team] = []
    for index in range(len(raw)):
        here: Path_ = ("teams", index)
        reader.table(here, required=True)
        reader.unknown_keys(here, {"name", "players"})
        players = reader.get((*here, "players"), list)
        if players is None or len(players) != 2 or not all(isinstance(p, str) for p in players):
            raise reader.error((*here, "players"), 'give the two entrants\' names, e.g. players = ["a", "b"]')
        for player in players:
            if player not in names:
                raise reader.error((*here, "players"), f"{player!r} is not an entrant's name")
        name = reader.get((*here, "name"), str) or f"{players[0]}+{players[1]}"
        if not TEAM_NAME.fullmatch(name):
            raise reader.error((*here, "name"), f"{name!r}: use 1-49 letters, digits, '_', '.', '+' or '-'")
        if any(t.name == name for t in found):
            raise reader.error((*here, "name"), f"{name!r} is the name of an earlier team too")
        found.append(Team(name, (players[0], players[1])))
    if len(found) < 2:
        raise reader.error(("teams",), "a tournament needs at least two teams")
    return tuple(found)


def _tournament(
    reader: ConfigReader, source: Path, entrants: tuple[Entrant, ...], teams: tuple[Team, ...]
) -> TournamentConfig:
    top: Path_ = ("tournament",)
    reader.table(top, required=True)
    reader.unknown_keys(
        top,
        {
            "name", "seed", "format", "candidate", "games_per_pairing", "hands_per_pairing", "duplicate",
            "concurrency", "database", "replay_dir", "output_dir", "listen", "game_timeout_s",
            "start_timeout_s", "signing_key", "tls_cert", "tls_key",
        },
    )  # fmt: skip
    name = reader.get((*top, "name"), str, source.stem)
    if not NAME.fullmatch(name):
        raise reader.error((*top, "name"), f"{name!r}: use 1-24 letters, digits, '_', '.' or '-'")
    seed = reader.get((*top, "seed"), str)
    if seed is None:
        raise reader.error((*top, "seed"), "required: the whole tournament follows from it (a string)")
    fmt = reader.get((*top, "format"), str, "round_robin")
    if fmt not in FORMATS:
        raise reader.error((*top, "format"), f"must be one of {', '.join(FORMATS)}, not {fmt!r}")
    candidate = reader.get((*top, "candidate"), str, "")
    if fmt == "gauntlet" and candidate not in {t.name for t in teams}:
        raise reader.error((*top, "candidate"), f"a gauntlet needs the name of a team, not {candidate!r}")
    if fmt == "round_robin" and candidate:
        raise reader.error((*top, "candidate"), "only a gauntlet has a candidate")
    duplicate = reader.get((*top, "duplicate"), bool, True)
    rules, preset, overrides = read_rules(reader)
    games = _games_per_pairing(reader, rules, duplicate)
    concurrency = reader.get((*top, "concurrency"), int, 8)
    if not 1 <= concurrency <= 1024:
        raise reader.error((*top, "concurrency"), f"must be 1 to 1024 tables at once, not {concurrency}")
    timeout = reader.get((*top, "game_timeout_s"), float, 900.0)
    if not timeout > 0:
        raise reader.error((*top, "game_timeout_s"), f"must be positive, not {timeout}")
    start_timeout = reader.get((*top, "start_timeout_s"), float, 120.0)
    if not start_timeout > 0:
        raise reader.error((*top, "start_timeout_s"), f"must be positive, not {start_timeout}")
    listen = reader.get((*top, "listen"), str, "127.0.0.1:0")
    if not re.fullmatch(r"[^\s:]+:\d{1,5}|\[[0-9a-fA-F:]+\]:\d{1,5}", listen):
        raise reader.error((*top, "listen"), f"expected host:port, not {listen!r}")
    base = source.parent
    tls = {key: reader.get((*top, key), str) for key in ("tls_cert", "tls_key")}
    if (tls["tls_cert"] is None) != (tls["tls_key"] is None):
        given, missing = ("tls_cert", "tls_key") if tls["tls_key"] is None else ("tls_key", "tls_cert")
        raise reader.error((*top, given), f"TLS needs both tls_cert and tls_key: give {missing} too")
    folder = Path("tournaments") / "out" / name
    return TournamentConfig(
        name=name,
        seed=seed,
        format=fmt,
        candidate=candidate,
        games_per_pairing=games,
        duplicate=duplicate,
        concurrency=concurrency,
        database=base / reader.get((*top, "database"), str, str(folder / "results.sqlite")),
        replay_dir=base / reader.get((*top, "replay_dir"), str, str(folder / "replays")),
        output_dir=base / reader.get((*top, "output_dir"), str, str(folder)),
        listen=listen,
        game_timeout_s=timeout,
        start_timeout_s=start_timeout,
        rules=rules,
        preset=preset,
        rules_overrides=overrides,
        clock=read_clock(reader),
        sprt=_sprt(reader),
        entrants=entrants,
        teams=teams,
        source=source,
        signing_key=None if (key := reader.get((*top, "signing_key"), str)) is None else base / key,
        tls_cert=None if tls["tls_cert"] is None else base / tls["tls_cert"],
        tls_key=None if tls["tls_key"] is None else base / tls["tls_key"],
    )


def _games_per_pairing(reader: ConfigReader, rules: RulesConfig, duplicate: bool) -> int:
    top: Path_ = ("tournament",)
    games = reader.get((*top, "games_per_pairing"), int)
    hands = reader.get((*top, "hands_per_pairing"), int)
    if (games is None) == (hands is None):
        raise reader.error(top, "give exactly one of games_per_pairing and hands_per_pairing")
    if hands is not None:
        per_game = rules.fixed_rounds
        if per_game is None:
            raise reader.error(
                (*top, "hands_per_pairing"),
                'needs games of a fixed number of deals: rules match_mode = "fixed_rounds:N" '
                "(the tournament preset has 4); else give games_per_pairing",
            )
        if hands < 1:
            raise reader.error((*top, "hands_per_pairing"), f"must be at least 1, not {hands}")
        games = math.ceil(hands / per_game)
    else:
        assert games is not None
        if games < 1:
            raise reader.error((*top, "games_per_pairing"), f"must be at least 1, not {games}")
    if duplicate and games % 2:
        games += 1  # a duplicate board is always played at both tables
    return int(games)


def read_rules(reader: ConfigReader) -> tuple[RulesConfig, str, dict[str, Any]]:
    """The [rules] table: the rules, the preset they start from and the flags given over it."""
    here: Path_ = ("rules",)
    table = dict(reader.table(here))
    preset = table.pop("preset", "tournament")
    if not isinstance(preset, str):
        raise reader.error((*here, "preset"), f"must be a string, not {_show(preset)}")
    known = {f.name for f in dataclasses.fields(RulesConfig)}
    for key in table:
        if key not in known:
            raise reader.error((*here, key), "not a rules flag (README: Rules configuration)")
    try:
        base = RulesConfig.from_json(preset)
    except RulesError as error:
        raise reader.error((*here, "preset"), str(error)) from None
    for key, value in table.items():
        try:
            dataclasses.replace(base, **{key: value})
        except (RulesError, TypeError) as error:
            raise reader.error((*here, key), str(error)) from None
    try:
        config = dataclasses.replace(base, **table)
    except (RulesError, TypeError) as error:
        raise reader.error(here, str(error)) from None
    if config.players != 4:
        raise reader.error((*here, "players"), "tournaments seat two teams of two: players = 4")
    return config, preset, table


def read_clock(reader: ConfigReader) -> ClockSettings:
    """The [clock] table over the default clocks."""
    here: Path_ = ("clock",)
    table = reader.table(here)
    names = {f.name: f for f in dataclasses.fields(ClockSettings)}
    reader.unknown_keys(here, set(names))
    given: dict[str, Any] = {}
    for key in table:
        kind = bool if names[key].type in (bool, "bool") else int
        value = reader.get((*here, key), kind)
        if kind is int and value < 0:
            raise reader.error((*here, key), f"must be 0 or more milliseconds, not {value}")
        given[key] = value
    return dataclasses.replace(DEFAULT_CLOCK, **given)


def _sprt(reader: ConfigReader) -> SprtSettings:
    here: Path_ = ("sprt",)
    reader.table(here)
    reader.unknown_keys(here, {"elo0", "elo1", "alpha", "beta", "stop_early"})
    base = SprtSettings()
    elo0 = reader.get((*here, "elo0"), float, base.elo0)
    elo1 = reader.get((*here, "elo1"), float, base.elo1)
    if not elo1 > elo0:
        raise reader.error((*here, "elo1"), f"must be greater than elo0 ({elo0}), not {elo1}")
    for key in ("alpha", "beta"):
        value = reader.get((*here, key), float, getattr(base, key))
        if not 0 < value < 0.5:
            raise reader.error((*here, key), f"must be between 0 and 0.5, not {value}")
    return SprtSettings(
        elo0=elo0,
        elo1=elo1,
        alpha=reader.get((*here, "alpha"), float, base.alpha),
        beta=reader.get((*here, "beta"), float, base.beta),
        stop_early=reader.get((*here, "stop_early"), bool, base.stop_early),
    )


def describe(config: TournamentConfig) -> Mapping[str, Any]:
    """The config's main choices as plain data (stored with the results, printed at the start)."""
    return {
        "name": config.name,
        "seed": config.seed,
        "format": config.format,
        "candidate": config.candidate,
        "games_per_pairing": config.games_per_pairing,
        "duplicate": config.duplicate,
        "preset": config.preset,
        "rules_overrides": config.rules_overrides,
        "teams": {t.name: list(t.players) for t in config.teams},
        "bots": {e.name: e.code for e in config.entrants},
    }
