# Two commands do all the set-up: `make run` and `make test`.
PYTHON ?= python3
VENV := .venv
BIN := $(VENV)/bin
STAMP := $(VENV)/.installed

.PHONY: run test lint types pytest bench fuzz golden regen clean

# (Re)create the virtual environment when it is missing or older than pyproject.toml.
# The package's bytecode is compiled with it: where PYTHONDONTWRITEBYTECODE is set, no
# import writes it, and every cold `plancc` would compile the modules it imports again.
$(STAMP): pyproject.toml
	rm -rf $(VENV)
	$(PYTHON) -m venv $(VENV)
	$(BIN)/pip install --quiet --upgrade pip
	$(BIN)/pip install --quiet -e '.[dev]'
	$(BIN)/python -m compileall -q plancc
	touch $(STAMP)

run: $(STAMP)
	mkdir -p build
	$(BIN)/plancc build plans/*.yaml --out build

# `make test` is the inner loop: every test but those marked slow, the ones that take more
# than about a second each in `pytest --durations=0` whatever they check (generated plans
# and edits by the hundred, every name of every case misspelt, every state of typing a
# plan in the editor, a real browser, Neovim and wheel build). `make test SLOW=1`, which
# .ci/run runs, is every test (README.md says about how many of each). On the 2-core
# development machine, shared with other jobs (load average 5 to 8), pytest alone took
# about 80 s of CPU fast and 260 s in full; make test adds ruff and mypy.
test: lint types pytest

lint: $(STAMP)
	$(BIN)/ruff check .
	$(BIN)/ruff format --check .

types: $(STAMP)
	$(BIN)/mypy

pytest: $(STAMP)
	$(BIN)/pytest $(if $(SLOW),,-m "not slow")

# `make fuzz FUZZ_TARGET=source`: model code (tests/fuzz_source.py) instead of plans;
# `FUZZ_TARGET=edits`: the editor's incremental edits (tests/fuzz_edits.py).
fuzz: $(STAMP)
	$(BIN)/python -m tests.$(if $(filter source edits,$(FUZZ_TARGET)),fuzz_$(FUZZ_TARGET),fuzz) --seconds $(or $(FUZZ_SECONDS),60)

golden: $(STAMP)
	$(BIN)/python -m tests.regen_golden

# Every derived file: the schemas, docs/rules.md, the lists in docs/plan-format.md, the goldens.
regen: $(STAMP)
	$(BIN)/python -m tests.regen

bench: $(STAMP)
	$(BIN)/pip install --quiet -e '.[dev,bench]'
	$(BIN)/python bench/run.py
	$(BIN)/python bench/pc104.py
	$(BIN)/python bench/measure.py
	$(BIN)/python bench/lsp.py
	$(BIN)/python bench/source.py
	$(BIN)/python bench/suggest.py

# docs/report-flash.png: the top of the Flash report at 1280 px, in headless Chromium.
.PHONY: screenshot
screenshot: $(STAMP)
	mkdir -p build
	$(BIN)/plancc report plans/deepseek_v4_flash.yaml -o build/deepseek_v4_flash_report.html
	$(BIN)/python tests/chromium.py build/deepseek_v4_flash_report.html docs/report-flash.png 1240

clean:
	rm -rf $(VENV) build dist *.egg-info
