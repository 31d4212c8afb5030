#!/usr/bin/env bash
# The wheel works outside the repository (make package-smoke, after make package): installed
# into a fresh virtual environment in a temporary folder, `tichu new-bot`, `tichu match` and
# `tichu check-bot` run, and mypy --strict accepts the new bot, which imports the typed SDK.
set -euo pipefail
cd "$(dirname "$0")/.."
python="${PYTHON:-python3}"
wheel="$(ls dist/tichu_referee-*.whl)"
work="$(mktemp -d)"
trap 'rm -rf "$work"' EXIT
echo "package-smoke: installing $wheel into a fresh venv in $work"
"$python" -m venv "$work/venv"
"$work/venv/bin/pip" install --quiet "$wheel" mypy
cd "$work"
export TICHU_LOG_LEVEL=error
venv/bin/tichu --version
venv/bin/tichu new-bot mybot
venv/bin/tichu match mybot.py:MyBot --seed 1 --out "$work/replays"
venv/bin/tichu check-bot mybot.py:MyBot
venv/bin/mypy --strict mybot.py
echo "package-smoke: the wheel installs and plays outside the repository"
