"""Running the checks: a referee and the proxy in this process, the bot as a process per check.

A bot given as MODULE:CLASS runs as `tichu bot MODULE:CLASS` (the SDK's
connector, as `tichu bot` runs it); a command has its placeholders {server}, {token}, {seat} and
{ca_file} filled in, and finds the same values in TICHU_SERVER, TICHU_TOKEN, TICHU_SEAT and
TICHU_CA_FILE (referee.bot_commands, shared with the tournament's command entrants). Each check gets its
own match, its own bot process and its own time limit.
"""

from __future__ import annotations

import argparse
import asyncio
import contextlib
import os
import secrets
import sys
import tempfile
import time
from collections.abc import Sequence
from dataclasses import dataclass, replace
from pathlib import Path

from referee import log
from referee.bot_commands import filled, placeholder_env
from referee.checkbot import sdk
from referee.checkbot.checks import Check, Run, all_checks
from referee.checkbot.proxy import Trace, start_proxy
from referee.checkbot.report import CheckResult, Grade, Report
from referee.match import ClockSettings
from referee.rules import state_from_json
from referee.sandbox import (
    ADDRESS_INSIDE,
    Sandbox,
    SandboxUnavailableError,
    bot_environment,
    check_available,
    launch,
)
from referee.scripted import ScriptedSeat, first_policy
from referee.sdk_commands import sdk_argv
from referee.server.serve import ServerSettings, start_server
from referee.server.table import Table
from referee.wire.tichu.v1 import referee_pb2_grpc

# How often a running check looks at the time when nothing arrives.
POLL_S = 0.1
# How long a bot process has to end after it is asked to, before it is killed.
STOP_S = 2.0


@dataclass(frozen=True, slots=True)
class Settings:
    """The kit's clocks and limits (milliseconds on the referee's clocks, seconds for the kit's)."""

    decision_ms: int = 3_000
    window_ms: int = 2_000
    grace_ms: int = 500
    check_timeout_s: float = 40.0  # a check that has not finished by then is graded as it stands
    parallel: int = 2  # checks run at once
    lenient: bool = False  # grade as the referee sees it: not on the answers the SDK replaced

    def clock(self) -> ClockSettings:
        """The match clocks of every check: no time bank, no forfeits, no heartbeats, no start limit."""
        return ClockSettings(
            decision_ms=self.decision_ms,
            bank_ms=0,
            grace_ms=self.grace_ms,
            window_ms=self.window_ms,
            max_violations=0,
            heartbeat_interval_ms=0,
            heartbeat_timeout_ms=60_000,
            reconnect_grace_ms=max(10_000, 4 * self.decision_ms),
            start_timeout_ms=0,
        )


def bot_command(spec: str) -> list[str]:
    """The command that runs a Bot subclass given as MODULE:CLASS with the SDK's connector."""
    # The token in $TICHU_TOKEN: no process listing shows it.
    return sdk_argv("bot", spec, "--server", "{server}", "--insecure")


class Kit:
    """A referee, the proxy in front of it, and the bot command to check."""

    def __init__(
        self, command: Sequence[str], settings: Settings, log_dir: Path, *, sandbox: bool = True
    ) -> None:
        self.command = list(command)
        self.settings = settings
        self.log_dir = log_dir
        # The bot under test runs in the sandbox that tournaments use: it reaches the proxy on a
        # Unix socket, and sees none of the kit's files (other checks' logs included).
        self.sandbox = Sandbox(socket=log_dir / "kit.sock", hidden=(log_dir,)) if sandbox else None

    async def run(self, checks: Sequence[Check], label: str) -> Report:
        """Every check (a few at once); the report, in the checks' order."""
        organiser = secrets.token_urlsafe(16)
        server = await start_server(ServerSettings("127.0.0.1:0", organiser, insecure=True, resume=False))
        proxy_server, proxy, proxy_port = await start_proxy(
            f"127.0.0.1:{server.port}", None if self.sandbox is None else self.sandbox.socket
        )
        self.server, self.proxy, self.proxy_address = server, proxy, f"127.0.0.1:{proxy_port}"
        limit = asyncio.Semaphore(max(1, self.settings.parallel))

        async def one(check: Check) -> CheckResult:
            async with limit:
                return await self.run_check(check)

        try:
            outcomes = await asyncio.gather(*(one(c) for c in checks))
        finally:
            await proxy_server.stop(0)
            await proxy.close()
            await server.stop(0)
        return Report(label, list(outcomes))

    async def run_check(self, check: Check) -> CheckResult:
        """One check: its match, its kit seats, the bot's process; the grade."""
        clock = self.settings.clock()
        initial = None if check.position is None else state_from_json(check.position)
        table, tokens = self.server.service.create_match(
            seed=check.seed,
            clock=clock,
            match_id=f"check-{check.name}-{secrets.token_hex(3)}",
            initial_state=initial,
        )
        trace = Trace(check.faults)
        self.proxy.traces[tokens[check.bot_seat]] = trace
        stub = referee_pb2_grpc.RefereeStub(self.proxy.channel)  # type: ignore[no-untyped-call]
        # The kit's own seats, through the proxy too; one the check names no policy for plays
        # first_policy (no calls, no bombs), so the situation is the check's alone.
        seats = [
            ScriptedSeat(
                stub.Play,
                token,
                check.policies.get(seat, first_policy),
                f"kit{seat}",
                bot_version="check-bot",
            )
            for seat, token in enumerate(tokens)
            if seat != check.bot_seat
        ]
        for seat in seats:
            seat.start()
        values = {
            "server": self.proxy_address if self.sandbox is None else ADDRESS_INSIDE,
            "token": tokens[check.bot_seat],
            "seat": str(check.bot_seat),
            "ca_file": "",
        }
        # TICHU_INSECURE=1: the kit's referee is plaintext, as a tournament's local one is.
        # The SDK's replaced answers are the bot's faults too, unless lenient (referee.checkbot.sdk).
        reporting = {} if self.settings.lenient else sdk.REPORTING
        env = bot_environment({**placeholder_env(values), "TICHU_INSECURE": "1", **reporting})
        argv = filled(self.command, values)
        stderr_path = self.log_dir / f"{check.name}.log"
        run = Run(clock, time.monotonic())
        with stderr_path.open("wb") as stderr:
            try:
                with launch(self.sandbox, argv, cwd=Path.cwd(), env=env) as how:
                    process = await asyncio.create_subprocess_exec(
                        *how.argv, stdin=asyncio.subprocess.DEVNULL, stdout=asyncio.subprocess.DEVNULL,
                        stderr=stderr, env=how.env, pass_fds=how.pass_fds, start_new_session=True,
                    )  # fmt: skip
            except OSError as error:
                await self._end(table, seats, None)
                return CheckResult(
                    check.name,
                    check.title,
                    Grade.FAILED,
                    f"cannot start the bot: {error}",
                    "bot_not_started",
                )
            try:
                run = await self._watch(check, trace, process, clock)
            finally:
                await self._end(table, seats, process)
        if run.exit_code is not None:
            run = replace(run, stderr_tail=_tail(stderr_path))
        outcome = check.grade(check, trace, run)
        return outcome if self.settings.lenient else sdk.graded(outcome, stderr_path)

    async def _watch(
        self, check: Check, trace: Trace, process: asyncio.subprocess.Process, clock: ClockSettings
    ) -> Run:
        """Until the check has seen enough, the bot's process ended, or the time is up."""
        deadline = time.monotonic() + self.settings.check_timeout_s
        while True:
            now = time.monotonic()
            run = Run(clock, now, process.returncode, bool(trace.to_bot("result")))
            if check.finished(trace, run) or process.returncode is not None or now > deadline:
                return run
            trace.changed.clear()
            with contextlib.suppress(TimeoutError):
                await asyncio.wait_for(trace.changed.wait(), POLL_S)

    async def _end(
        self, table: Table, seats: list[ScriptedSeat], process: asyncio.subprocess.Process | None
    ) -> None:
        """Stop the bot (politely, then not), the match and the kit's seats."""
        if process is not None and process.returncode is None:
            process.terminate()
            try:
                await asyncio.wait_for(process.wait(), STOP_S)
            except TimeoutError:
                process.kill()
                await process.wait()
        await table.stop("the check is over")
        for seat in seats:
            await seat.close()


def _tail(path: Path, lines: int = 3) -> str:
    """The last lines a bot wrote to its standard error, on one line."""
    try:
        text = path.read_text(encoding="utf-8", errors="replace")
    except OSError:
        return ""
    return " | ".join(line.strip() for line in text.strip().splitlines()[-lines:])


def run_kit(
    command: Sequence[str], label: str, settings: Settings, only: Sequence[str] = (), *, sandbox: bool = True
) -> Report:
    """Run the checks (all, or those named) against the bot command (in the sandbox unless
    `sandbox` is False); the report. SandboxUnavailableError where bubblewrap cannot run."""
    checks = [c for c in all_checks(settings.clock()) if not only or c.name in only]
    if sandbox:
        check_available()
    with tempfile.TemporaryDirectory(prefix="tichu-check-bot-") as folder:
        return asyncio.run(Kit(command, settings, Path(folder), sandbox=sandbox).run(checks, label))


# ----------------------------------------------------------------------------- command line


def add_check_bot_arguments(parser: argparse.ArgumentParser) -> None:
    """The arguments of `tichu check-bot`."""
    parser.add_argument(
        "bot",
        nargs="?",
        metavar="MODULE:CLASS",
        help="a Bot subclass, e.g. clients.random_bot:RandomBot; or give a command after --",
    )
    parser.add_argument("--json", type=Path, metavar="FILE", help="also write the report as JSON to FILE")
    parser.add_argument(
        "--only", action="append", default=[], metavar="CHECK", help="run only this check (repeatable)"
    )
    parser.add_argument("--list", action="store_true", help="list the checks and exit")
    defaults = Settings()
    parser.add_argument("--decision-ms", type=int, default=defaults.decision_ms, help="time per decision")
    parser.add_argument("--window-ms", type=int, default=defaults.window_ms, help="time per bomb window")
    parser.add_argument("--grace-ms", type=int, default=defaults.grace_ms, help="allowance for lag")
    parser.add_argument(
        "--check-timeout",
        type=float,
        default=defaults.check_timeout_s,
        metavar="S",
        help="limit per check, seconds",
    )
    parser.add_argument("--parallel", type=int, default=defaults.parallel, help="checks run at once")
    parser.add_argument(
        "--lenient",
        action="store_true",
        help="grade only what the referee sees: an exception or illegal answer that the Python SDK "
        "replaced with a safe one is not a failure",
    )
    parser.add_argument(
        "--no-sandbox",
        action="store_true",
        help="run the bot without the sandbox (bubblewrap) that tournaments use: it may then read "
        "this machine's files and processes",
    )


def split_command(argv: list[str]) -> tuple[list[str], list[str]]:
    """`tichu check-bot [OPTIONS] -- CMD ARGS...`: the kit's arguments, and the bot's command."""
    if "--" not in argv:
        return argv, []
    cut = argv.index("--")
    return argv[:cut], argv[cut + 1 :]


def run_check_bot(args: argparse.Namespace) -> int:
    """`tichu check-bot`: print the report; 0 only when every check passed, 1 if not, 2 on bad usage."""
    names = [c.name for c in all_checks()]
    if args.list:
        for check in all_checks():
            print(f"{check.name:<16} {check.title}")
        return 0
    command = list(getattr(args, "bot_command", None) or [])
    unknown = [n for n in args.only if n not in names]
    if unknown:
        print(
            f"tichu check-bot: unknown check(s) {', '.join(unknown)}; the checks are {', '.join(names)}",
            file=sys.stderr,
        )
        return 2
    if bool(args.bot) == bool(command):
        print("tichu check-bot: give a bot as MODULE:CLASS, or a command after --", file=sys.stderr)
        return 2
    if args.bot and ":" not in args.bot:
        print(
            f"tichu check-bot: expected MODULE:CLASS, e.g. clients.random_bot:RandomBot, not {args.bot!r}",
            file=sys.stderr,
        )
        return 2
    # The kit's referee is an implementation detail: only its errors are worth a line.
    log.configure(level=os.environ.get(log.LEVEL_ENV, "ERROR"))
    settings = Settings(
        args.decision_ms, args.window_ms, args.grace_ms, args.check_timeout, args.parallel, args.lenient
    )
    label = args.bot or " ".join(command)
    try:
        report = run_kit(
            bot_command(args.bot) if args.bot else command,
            label,
            settings,
            args.only,
            sandbox=not args.no_sandbox,
        )
    except SandboxUnavailableError as error:
        print(f"tichu check-bot: {error}", file=sys.stderr)
        return 2
    print(report.render())
    if args.json is not None:
        report.write_json(args.json)
    return report.exit_code
