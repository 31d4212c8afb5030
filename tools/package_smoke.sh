#!/usr/bin/env bash
# The wheel works outside the repository (make package-smoke, after make package): installed
# into a fresh virtual environment in a temporary folder, it loads the engine expected (compiled
# where there is a C compiler), `tichu new-bot`, `tichu match` and `tichu check-bot` run, and
# mypy --strict accepts the new bot, which imports the typed SDK.
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
version="$(venv/bin/tichu --version)"
echo "$version"
# The wheel was built on this machine: with a C compiler (CI's gcc), it must hold the compiled
# engine, unless TICHU_PURE=1 asked for the pure one; without one, the pure one.
if [ "${TICHU_PURE:-}" != 1 ] && command -v cc >/dev/null 2>&1; then expected="engine compiled (mypyc)"
else expected="engine pure Python"; fi
case "$version" in
*"$expected"*) ;;
*) echo "package-smoke: expected the $expected, the installed wheel loads another (see build/package.log)" >&2
   exit 1 ;;
esac
venv/bin/tichu new-bot mybot
venv/bin/tichu match mybot.py:MyBot --seed 1 --out "$work/replays"
venv/bin/tichu check-bot mybot.py:MyBot
venv/bin/mypy --strict mybot.py
echo "package-smoke: the wheel installs and plays outside the repository"
