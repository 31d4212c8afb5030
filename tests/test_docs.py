"""The documentation is real: every fenced block of every page (docs/ and the README) is run or
checked as tests/docs.py describes, and the reference tables list what the code has."""

from __future__ import annotations

import argparse
import dataclasses
import doctest
import io
import json
import os
import re
import shlex
import subprocess
import sys
import tomllib
from pathlib import Path
from typing import Any

import pytest

from clients.demo import DEFAULT_SEED, run_local_demo
from referee.conformance import OPS, answer
from referee.match import ClockSettings
from referee.match.records import RECORD_KINDS
from referee.rules import OFFICIAL, new_game, state_to_json
from referee.rules.events import EVENT_TYPES
from referee.wire.tichu.v1 import referee_pb2 as pb
from tests.docs import DOCS, LANGUAGES, README, ROOT, Block, blocks, page, pages, section

EXCHANGE = re.compile(r"^\$ echo '(.*)' \| tichu rules\n(.*)$", re.MULTILINE)
# Programs that `sh` blocks may name besides tichu and make (the tests do not run them).
PROGRAMS = frozenset(
    {"cd", "export", "python3", ".venv/bin/python", "pip", ".venv/bin/pip", "npm", "node", "grpcurl",
     "ray", "docker", "git", "openssl", "pytest", ".venv/bin/pytest", "mypy", ".", "source", "kill"}
)  # fmt: skip
MAKE_TARGETS = set(re.findall(r"^([a-z][\w-]*):", (ROOT / "Makefile").read_text(encoding="utf-8"), re.M))


def every_block() -> list[Block]:
    return [b for p in pages() for b in blocks(p)]


def ids(items: list[Path]) -> list[str]:
    return [str(p.relative_to(ROOT)) for p in items]


def test_every_block_is_of_a_kind_the_tests_know() -> None:
    found = every_block()
    assert len(found) > 50
    for block in found:
        assert block.language in LANGUAGES, f"{block.where}: a ```{block.language} block (see tests/docs.py)"
        if block.language == "python":
            assert ">>> " in block.text or block.title.endswith(".py"), (
                f'{block.where}: a python block is a >>> session or a file with title="NAME.py"'
            )


SESSION_PAGES = [p for p in pages() if any(">>> " in b.text for b in blocks(p) if b.language == "python")]


@pytest.mark.parametrize("path", SESSION_PAGES, ids=ids(SESSION_PAGES))
def test_the_python_sessions_run_as_shown(
    path: Path, tmp_path: Path, monkeypatch: pytest.MonkeyPatch
) -> None:
    files = [b for b in blocks(path) if b.language == "python" and b.title]
    if files:  # the sessions run beside the page's files, as a reader's would
        for block in files:
            (tmp_path / block.title).write_text(block.text, encoding="utf-8")
        monkeypatch.chdir(tmp_path)
        monkeypatch.syspath_prepend(str(tmp_path))
    parser = doctest.DocTestParser()
    runner = doctest.DocTestRunner(optionflags=doctest.ELLIPSIS)
    globs: dict[str, Any] = {}  # one namespace a page: later examples use names from earlier ones
    for block in blocks(path):
        if block.language != "python" or ">>> " not in block.text:
            continue
        test = parser.get_doctest(block.text, globs, block.where, str(path), block.line - 1)
        runner.run(test, clear_globs=False)
        globs = test.globs  # DocTest works on a copy
    assert runner.failures == 0, f"{path.name}: an example differs from the real output (see above)"


def test_the_files_compile() -> None:
    files = [b for b in every_block() if b.language == "python" and b.title]
    assert files, "the first bot is a file"
    for block in files:
        compile(block.text, block.where, "exec")


def exchanges() -> list[tuple[str, str]]:
    """Every `$ echo '<request>' | tichu rules` in the docs with the answer shown under it."""
    return [pair for b in every_block() if b.language == "console" for pair in EXCHANGE.findall(b.text)]


def test_the_docs_show_every_op() -> None:
    shown = {json.loads(request).get("op") for request, _ in exchanges() if request.startswith("{")}
    assert set(OPS) <= shown


@pytest.mark.parametrize(("request_", "expected"), exchanges())
def test_each_conformance_answer_is_real(request_: str, expected: str) -> None:
    assert json.dumps(answer(request_)) == expected


def commands(block: Block) -> list[tuple[str, str]]:
    """A console block's commands (other than the in-process `tichu rules` exchanges), each with
    the output shown under it."""
    found: list[tuple[str, str]] = []
    for chunk in re.split(r"^(?=\$ )", block.text, flags=re.MULTILINE):
        if not chunk.startswith("$ "):
            continue
        command, _, output = chunk[2:].partition("\n")
        if not re.fullmatch(r"echo '.*' \| tichu rules", command):
            found.append((command, output))
    return found


CONSOLE_PAGES = [p for p in pages() if any(b.language == "console" and commands(b) for b in blocks(p))]


@pytest.mark.parametrize("path", CONSOLE_PAGES, ids=ids(CONSOLE_PAGES))
def test_the_console_commands_run_as_shown(path: Path, tmp_path: Path) -> None:
    env = {
        **os.environ,
        "PATH": f"{Path(sys.executable).parent}{os.pathsep}{os.environ.get('PATH', '')}",
        "PYTHONPATH": str(ROOT),
        "COLUMNS": "80",
        "TICHU_LOG_LEVEL": "error",
    }
    checker = doctest.OutputChecker()
    for block in blocks(path):
        if block.language == "python" and block.title:
            (tmp_path / block.title).write_text(block.text, encoding="utf-8")
        if block.language != "console":
            continue
        for command, shown in commands(block):
            expected_code = int(found[1]) if (found := re.search(r"# exit (\d+)$", command)) else 0
            done = subprocess.run(
                ["bash", "-c", command], cwd=tmp_path, env=env, capture_output=True, text=True, timeout=300,
                check=False,
            )  # fmt: skip
            got = "\n".join(line.rstrip() for line in done.stdout.splitlines()) + "\n"
            want = "\n".join(line.rstrip() for line in shown.splitlines()) + "\n"
            assert done.returncode == expected_code, f"{block.where}: $ {command}\n{done.stdout}{done.stderr}"
            assert checker.check_output(want, got, doctest.ELLIPSIS), (
                f"{block.where}: $ {command}\nshown:\n{want}\nprinted:\n{got}"
            )


class ParsedError(Exception):
    """Raised in place of running a command whose arguments parsed."""


def parses(argv: list[str], monkeypatch: pytest.MonkeyPatch) -> bool:
    """Whether `tichu ARGV` parses with tichu's own parser (the command is not run)."""
    from referee.cli import main

    real = argparse.ArgumentParser.parse_args

    def parse_and_stop(self: argparse.ArgumentParser, *args: Any, **kwargs: Any) -> Any:
        raise ParsedError(real(self, *args, **kwargs))

    with monkeypatch.context() as patch:
        patch.setattr(argparse.ArgumentParser, "parse_args", parse_and_stop)
        try:
            main(argv)
        except ParsedError:
            return True
        except SystemExit:
            return False
    return False


def test_the_commands_to_copy_name_real_programs_options_and_targets(
    monkeypatch: pytest.MonkeyPatch, capsys: pytest.CaptureFixture[str]
) -> None:
    checked = 0
    for block in every_block():
        if block.language != "sh":
            continue
        for line in block.text.replace("\\\n", " ").splitlines():
            words = shlex.split(line, comments=True)
            while words and re.fullmatch(r"[A-Z_]+=.*", words[0]):  # VAR=value before the command
                words = words[1:]
            if not words:
                continue
            program, argv = words[0], words[1:]
            if program in ("tichu", ".venv/bin/tichu"):
                assert parses(argv, monkeypatch), f"{block.where}: {line}\n{capsys.readouterr().err}"
            elif program == "make":
                assert set(argv) <= MAKE_TARGETS, f"{block.where}: {line}: not a Makefile target"
            else:
                assert program in PROGRAMS, f"{block.where}: {line}: an unknown program (tests/test_docs.py)"
            checked += 1
    assert checked > 20


def test_the_data_blocks_parse() -> None:
    for block in every_block():
        if block.language == "toml":
            tomllib.loads(block.text)
        elif block.language == "json":
            json.loads(block.text)


def test_the_local_demo_excerpt_is_how_it_begins() -> None:
    (excerpt,) = [
        b.text for b in blocks(DOCS / "get-started" / "install.md")
        if b.language == "text" and b.text.startswith("Tichu demo, in this process:")
    ]  # fmt: skip
    out = io.StringIO()
    assert run_local_demo(DEFAULT_SEED, out) == 0
    # The match's creation and start are dated: the excerpt shows them as the demo printed them once.
    dated = re.compile(r"\d{4}-\d\d-\d\dT[\d:.]+Z")
    assert dated.sub("DATE", out.getvalue()).startswith(dated.sub("DATE", excerpt))


def documented(name: str, title: str | None = None) -> set[str]:
    """The names in backticks at the start of the table rows of a page (or one of its sections)."""
    text = page(name) if title is None else section(name, title)
    return set(re.findall(r"^\| `([a-z_0-9]+)` \|", text, re.MULTILINE))


def test_every_state_field_is_documented() -> None:
    assert documented("reference/state-json.md") == set(state_to_json(new_game()[0]))


def test_every_event_type_is_documented() -> None:
    assert documented("reference/events.md") == set(EVENT_TYPES)


def test_every_rules_flag_is_documented() -> None:
    assert documented("reference/rules-config.md") == set(OFFICIAL.to_json())


def test_every_clock_option_is_documented_with_its_default() -> None:
    rows = re.findall(r"^\| `(--[a-z-]+)` \| ([^|]+?) \|", page("protocol/clocks.md"), re.MULTILINE)
    expected = {}
    for f in dataclasses.fields(ClockSettings):
        default = getattr(ClockSettings(), f.name)
        expected["--" + f.name.replace("_", "-")] = "off" if default is False else str(default)
    assert dict(rows) == expected


def test_every_decision_kind_and_rejection_reason_is_documented() -> None:
    protocol = "".join(p.read_text(encoding="utf-8") for p in (DOCS / "protocol").glob("*.md"))
    rows = set(re.findall(r"^\| `([A-Z_]+)` \|", protocol, re.MULTILINE))
    kinds = {v.name.removeprefix("DECISION_KIND_") for v in pb.DecisionKind.DESCRIPTOR.values}
    reasons = {v.name.removeprefix("REJECTION_REASON_") for v in pb.RejectionReason.DESCRIPTOR.values}
    assert (kinds | reasons) - {"UNSPECIFIED"} <= rows


def test_every_replay_record_kind_is_documented() -> None:
    assert documented("replays/index.md", "The format") == RECORD_KINDS
    written = {
        json.loads(line)["kind"]
        for path in (ROOT / "replays" / "golden").glob("*.jsonl")
        for line in path.read_text(encoding="utf-8").splitlines()
    }
    assert written <= RECORD_KINDS and len(written) >= 7


# ----------------------------------------------------------------------------- the rules page

RULE_ID = re.compile(r"\b([RT]-[A-Z0-9]+-\d+[a-z]?)\b")
ANCHOR = re.compile(r'<a id="([RT]-[A-Z0-9]+-\d+[a-z]?)"></a>')


def test_every_rule_has_an_anchor_on_the_rules_page() -> None:
    text = page("rules.md")
    defined = set(re.findall(r"\*\*([RT]-[A-Z0-9]+-\d+[a-z]?)[.*]", ANCHOR.sub("", text)))
    anchors = ANCHOR.findall(text)
    assert len(defined) > 150 and set(anchors) == defined and len(anchors) == len(set(anchors))


def test_every_rule_the_code_cites_is_on_the_rules_page() -> None:
    anchors = set(ANCHOR.findall(page("rules.md")))
    cited = {
        (rule, str(path.relative_to(ROOT)))
        for folder in ("referee", "clients")
        for path in (ROOT / folder).rglob("*.py")
        for rule in RULE_ID.findall(path.read_text(encoding="utf-8"))
    }
    assert len(cited) > 100
    assert {(rule, path) for rule, path in cited if rule not in anchors} == set()


def test_the_rules_page_is_the_rules_specification() -> None:
    # shared/ lies beside the checkout (CI's clone, the main tree) or beside its worktrees' folder.
    found = [p / "shared" / "RULES.md" for p in (ROOT.parent, ROOT.parent.parent)]
    spec = next((p for p in found if p.is_file()), None)
    if spec is None:
        pytest.skip("no shared/RULES.md beside this checkout to compare with")
    assert ANCHOR.sub("", page("rules.md")) == spec.read_text(encoding="utf-8")


# ----------------------------------------------------------------------------- the site


def test_every_page_is_in_the_nav_and_every_nav_entry_is_a_page() -> None:
    nav = re.findall(r"^\s*- (?:[^:\n]+: )?([\w/.-]+\.md)\s*$", (ROOT / "mkdocs.yml").read_text(), re.M)
    assert len(nav) == len(set(nav))
    assert set(nav) == {str(p.relative_to(DOCS)) for p in DOCS.rglob("*.md")}


def test_the_readme_is_a_front_page() -> None:
    text = README.read_text(encoding="utf-8")
    assert len(text.splitlines()) < 150
    assert "make demo" in text and "make test" in text
