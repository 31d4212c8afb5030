# Every target creates (or reuses) the local virtual environment .venv and installs what it needs.
PYTHON ?= python3
VENV := .venv
BIN := $(VENV)/bin
STAMP := $(VENV)/.installed

.PHONY: demo test test-pure test-compiled fast engine pure lint buf buf-checks bench proto clean docs docs-serve package package-smoke

# What each target needs, and no more: the demo only the project and its runtime dependencies;
# the development tools ([dev]) for the tests, lint and builds; Ray ([ray]) for the suite; the
# site's tools ([docs]) for make docs. Each step says what it installs.
DEPS = $(shell $(PYTHON) -c "import tomllib; print(', '.join(d.split(';')[0].replace(' ', '') for d in tomllib.load(open('pyproject.toml', 'rb'))['project']$(1)))" 2>/dev/null)

$(STAMP): pyproject.toml
	test -d $(VENV) || $(PYTHON) -m venv $(VENV)
	@echo "make: installing into $(VENV): the project (tichu-referee, editable) and its runtime dependencies: $(call DEPS,['dependencies'])"
	$(BIN)/pip install --quiet --upgrade pip
	$(BIN)/pip install --quiet -e .
	touch $(STAMP)

DEV_STAMP := $(VENV)/.installed-dev
$(DEV_STAMP): $(STAMP)
	@echo "make: installing the development tools ([dev]): $(call DEPS,['optional-dependencies']['dev'])"
	$(BIN)/pip install --quiet -e '.[dev]'
	touch $(DEV_STAMP)

# Ray (the [ray] extra) only for what uses it: the suite and its lint, not the demo.
RAY_STAMP := $(VENV)/.installed-ray
$(RAY_STAMP): $(DEV_STAMP)
	@echo "make: installing Ray ([ray]): $(call DEPS,['optional-dependencies']['ray'])"
	$(BIN)/pip install --quiet -e '.[dev,ray]'
	touch $(RAY_STAMP)

DOCS_STAMP := $(VENV)/.installed-docs
$(DOCS_STAMP): $(STAMP)
	@echo "make: installing the documentation tools ([docs]): $(call DEPS,['optional-dependencies']['docs'])"
	$(BIN)/pip install --quiet -e '.[docs]'
	touch $(DOCS_STAMP)

# The compiled engine where there is a C compiler (built once, reused: see fast), else the pure
# one; TICHU_PURE=1 make demo runs the pure one. The version line says which one runs.
demo: $(STAMP)
	@if [ "$$TICHU_PURE" = 1 ]; then $(MAKE) --no-print-directory pure; \
	elif command -v cc >/dev/null 2>&1; then $(MAKE) --no-print-directory engine \
		|| { $(MAKE) --no-print-directory pure; \
			echo "make demo: the compiled engine did not build (see $(FAST)/build.log): the pure one plays"; }; \
	else echo "make demo: no C compiler (cc), so the pure-Python engine (slower, the same rules)"; fi
	$(BIN)/tichu --version
	$(BIN)/tichu demo

# The documentation site, strict: a broken link, a missing anchor or page fails the build.
docs: $(DOCS_STAMP)
	NO_MKDOCS_2_WARNING=1 $(BIN)/mkdocs build --strict --quiet
	@echo "make docs: the site is in site/ (make docs-serve serves it on http://127.0.0.1:8000)"

docs-serve: $(DOCS_STAMP)
	NO_MKDOCS_2_WARNING=1 $(BIN)/mkdocs serve

# The wheel and the sdist (dist/), checked by twine as a package index would.
# The wheel holds the engine compiled by mypyc when a C compiler is here (setup.py), the pure one
# otherwise (tagged py3-none-any; the warning says why); TICHU_PURE=1 make package asks for pure.
package: $(DEV_STAMP)
	rm -rf dist
	mkdir -p build && $(BIN)/python -m build --outdir dist . >build/package.log 2>&1 || { tail -20 build/package.log; exit 1; }
	$(BIN)/twine check --strict dist/*
	@case "$$(ls dist/*.whl)" in \
	*-none-any.whl) echo "make package: the wheel's engine is pure Python"; grep -A1 'WARNING (tichu-referee)' build/package.log || true;; \
	*) echo "make package: the wheel's engine is compiled by mypyc (pure Python on other platforms: the sdist)";; esac

# The wheel outside the repository: a fresh venv in a temporary folder, new-bot, match, check-bot, mypy.
package-smoke: package
	PYTHON=$(PYTHON) bash tools/package_smoke.sh

lint: $(RAY_STAMP)
	$(BIN)/ruff check .
	$(BIN)/ruff format --check .
	$(BIN)/mypy

# buf, pinned in tools/buf/package-lock.json and installed from the npm registry (the package
# carries the binary: no install script runs), lints proto/ and checks that it breaks nothing of
# the proto of the last release: the newest v* tag, else e19aab6 (the last release, untagged).
BUF_DIR := tools/buf
BUF := $(BUF_DIR)/node_modules/.bin/buf
BUF_STAMP := $(BUF_DIR)/node_modules/.installed
PROTO_BASELINE ?= $(shell git describe --tags --abbrev=0 --match 'v*' 2>/dev/null || echo e19aab62f5e2a5f11006066889d27ffc93bb0944)

$(BUF_STAMP): $(BUF_DIR)/package.json $(BUF_DIR)/package-lock.json
	cd $(BUF_DIR) && npm ci --ignore-scripts --no-audit --no-fund --loglevel=error
	touch $@

buf:
	@if command -v npm >/dev/null 2>&1; then $(MAKE) --no-print-directory buf-checks; \
	else echo "buf: skipped, npm is not installed (Debian: apt-get install npm)"; fi

buf-checks: $(BUF_STAMP)
	$(BUF) lint proto
	@if git cat-file -e '$(PROTO_BASELINE)^{commit}' 2>/dev/null; then \
		echo "buf breaking proto --against $(PROTO_BASELINE)"; \
		$(BUF) breaking proto --against '.git#ref=$(PROTO_BASELINE),subdir=proto'; \
	else echo "buf breaking: skipped, the baseline $(PROTO_BASELINE) is not in this checkout (no .git, or a shallow clone)"; fi

# The whole suite on the pure engine, then again on the compiled one (the step says why it is
# skipped on a machine with no C compiler).
test: lint buf test-pure test-compiled

# `pure` first: a demo leaves the compiled modules in the tree (build/fast keeps them, so the next
# demo copies them back without compiling); TICHU_EXPECT_PURE makes the suite check it (conftest).
test-pure: $(RAY_STAMP) pure
	TICHU_EXPECT_PURE=1 $(BIN)/pytest -n 2

# The engine compiled by mypyc (setup.py), built once into build/fast and rebuilt only when its
# sources change; make fast and make demo copy its modules into this tree, test-compiled into a copy.
# Compiled, since the targets that build it want it so (TICHU_PURE is for installs and make demo).
FAST := build/fast
BUILD_STAMP := $(VENV)/.installed-build
# What the wheel's build requires ([build-system] requires: setuptools new enough for the metadata,
# mypy for mypyc), for the builds make runs itself with setup.py.
BUILD_REQUIRES = $(shell $(PYTHON) -c "import tomllib; print(' '.join(repr(r) for r in tomllib.load(open('pyproject.toml', 'rb'))['build-system']['requires']))")
$(BUILD_STAMP): | $(STAMP)
	@echo "make: installing what compiles the engine (the wheel's build requirements): $(BUILD_REQUIRES)"
	$(BIN)/pip install --quiet $(BUILD_REQUIRES)
	touch $@

$(FAST)/.built: setup.py $(wildcard referee/rules/*.py) | $(BUILD_STAMP)
	rm -rf $(FAST) && mkdir -p $(FAST)
	@echo "make: compiling the rules engine with mypyc, once (minutes on a busy machine; log: $(FAST)/build.log)"
	env -u TICHU_PURE TICHU_COMPILE=1 $(BIN)/python setup.py --quiet build_ext --build-lib $(FAST)/lib --build-temp $(FAST)/temp \
		>$(FAST)/build.log 2>&1 || { tail -20 $(FAST)/build.log; exit 1; }
	touch $@

# The built modules into the tree $(1) (the shared library in referee/, one module per source).
COPY_ENGINE = cd $(FAST)/lib && find referee -name '*.so' -print0 | tar --null -T - -c | tar -x -C $(1)

# A copy of the tree with the compiled engine in it, so that this tree stays pure; PYTHONPATH puts
# the copy first for the suite and the commands it starts.
COMPILED := build/compiled
# The tracked and new files of this tree, and nothing that was deleted from it since.
COPY_TREE = find $(COMPILED) -type f ! -name '*.so' ! -name .built -delete \
	&& { git ls-files -z --cached --others --exclude-standard 2>/dev/null \
		|| find . \( -path ./.venv -o -path ./build -o -path ./.git \) -prune -o -type f ! -name '*.so' -print0; } \
	| tar --null --ignore-failed-read -T - -c | tar -x -C $(COMPILED)
$(COMPILED)/.built: $(FAST)/.built
	rm -rf $(COMPILED) && mkdir -p $(COMPILED)
	$(COPY_TREE)
	$(call COPY_ENGINE,$(CURDIR)/$(COMPILED))
	cd $(COMPILED) && PYTHONPATH=. $(CURDIR)/$(BIN)/python -c "import referee.rules as r; assert r.COMPILED"
	touch $@

# The copy's other files are refreshed on every run; only a change to the engine recompiles.
test-compiled: $(RAY_STAMP)
	@if command -v cc >/dev/null 2>&1; then \
		$(MAKE) $(COMPILED)/.built && $(COPY_TREE) && cd $(COMPILED) && \
		TICHU_EXPECT_COMPILED=1 PYTHONPATH=$(CURDIR)/$(COMPILED) $(CURDIR)/$(BIN)/pytest -n 2 -p no:cacheprovider; \
	else echo "test-compiled: skipped, no C compiler (cc) on this machine"; fi

# The compiled engine in this tree itself, for bot authors (`make pure` undoes it; build/fast keeps
# the build, so doing it again only copies).
fast: engine
	$(BIN)/python -c "import referee.rules as r; assert r.COMPILED, 'the compiled build did not load'"

engine: $(FAST)/.built
	rm -f referee/rules/*.so referee/*.so
	$(call COPY_ENGINE,$(CURDIR))

pure:
	rm -f referee/rules/*.so referee/*.so

bench: $(RAY_STAMP)
	$(MAKE) $(COMPILED)/.built || echo "bench: no compiled build (no C compiler?): the pure engine only"
	$(BIN)/python bench/engine.py
	$(BIN)/python bench/bots.py
	$(BIN)/python bench/referee_bench.py
	$(BIN)/python bench/request_bench.py
	$(BIN)/python bench/replay_bench.py
	$(BIN)/python bench/proof_bench.py
	$(BIN)/python bench/tournament_bench.py
	$(BIN)/python bench/cluster_bench.py

# The stubs, and the JSON Schema of the payloads (proto/tichu/v1/schema/), from the engine's types.
proto: $(DEV_STAMP)
	$(BIN)/python -m referee.wire.generate
	$(BIN)/python -m referee.wire.schema

clean: pure
	rm -rf $(VENV) $(BUF_DIR)/node_modules build dist site .mypy_cache .pytest_cache .ruff_cache .hypothesis
