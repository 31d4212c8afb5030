# Every target creates (or reuses) the local virtual environment .venv and installs what it needs.
PYTHON ?= python3
VENV := .venv
BIN := $(VENV)/bin
STAMP := $(VENV)/.installed

.PHONY: demo test test-pure test-compiled fast pure lint buf buf-checks bench proto clean docs docs-serve package package-smoke

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

demo: $(STAMP)
	$(BIN)/tichu demo

# The documentation site, strict: a broken link, a missing anchor or page fails the build.
docs: $(DOCS_STAMP)
	NO_MKDOCS_2_WARNING=1 $(BIN)/mkdocs build --strict --quiet
	@echo "make docs: the site is in site/ (make docs-serve serves it on http://127.0.0.1:8000)"

docs-serve: $(DOCS_STAMP)
	NO_MKDOCS_2_WARNING=1 $(BIN)/mkdocs serve

# The wheel and the sdist (dist/), checked by twine as a package index would.
package: $(DEV_STAMP)
	rm -rf dist
	mkdir -p build && $(BIN)/python -m build --outdir dist . >build/package.log 2>&1 || { tail -20 build/package.log; exit 1; }
	$(BIN)/twine check --strict dist/*

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

test-pure: $(RAY_STAMP)
	$(BIN)/pytest -n 2

# A copy of the tree with referee/rules compiled by mypyc in it (setup.py), so that this tree
# stays pure; PYTHONPATH puts the copy first for the suite and the commands it starts.
COMPILED := build/compiled
# The tracked and new files of this tree, and nothing that was deleted from it since.
COPY_TREE = find $(COMPILED) -type f ! -name '*.so' ! -name .built ! -name build.log ! -path '$(COMPILED)/build/*' -delete \
	&& { git ls-files -z --cached --others --exclude-standard 2>/dev/null \
		|| find . \( -path ./.venv -o -path ./build -o -path ./.git \) -prune -o -type f ! -name '*.so' -print0; } \
	| tar --null --ignore-failed-read -T - -c | tar -x -C $(COMPILED)
$(COMPILED)/.built: $(DEV_STAMP) setup.py $(wildcard referee/rules/*.py)
	rm -rf $(COMPILED) && mkdir -p $(COMPILED)
	$(COPY_TREE)
	cd $(COMPILED) && TICHU_COMPILE=1 $(CURDIR)/$(BIN)/python setup.py --quiet build_ext --inplace >build.log 2>&1 \
		|| { tail -20 build.log; exit 1; }
	cd $(COMPILED) && PYTHONPATH=. $(CURDIR)/$(BIN)/python -c "import referee.rules as r; assert r.COMPILED"
	touch $@

# The copy's other files are refreshed on every run; only a change to the engine recompiles.
test-compiled: $(RAY_STAMP)
	@if command -v cc >/dev/null 2>&1; then \
		$(MAKE) $(COMPILED)/.built && $(COPY_TREE) && cd $(COMPILED) && \
		TICHU_EXPECT_COMPILED=1 PYTHONPATH=$(CURDIR)/$(COMPILED) $(CURDIR)/$(BIN)/pytest -n 2 -p no:cacheprovider; \
	else echo "test-compiled: skipped, no C compiler (cc) on this machine"; fi

# The compiled engine in this tree itself, for bot authors (`make pure` undoes it).
fast: $(DEV_STAMP)
	TICHU_COMPILE=1 $(BIN)/python setup.py --quiet build_ext --inplace
	$(BIN)/python -c "import referee.rules as r; assert r.COMPILED, 'the compiled build did not load'"

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
