# Two commands for a newcomer: `make run` and `make test`. Everything else is optional.
# The interpreter .venv is made from: empty picks the fastest Python 3.11+ here
# (tools/pick_python.py says why it matters); `make PY=/path/to/python …` chooses one.
PY ?=
VENV := .venv
BIN := $(VENV)/bin
STAMP := $(VENV)/.installed
DEVSTAMP := $(VENV)/.installed-dev
PORT ?= 8501

.PHONY: run test test-fast setup setup-dev browser demo stop reset bench bench-quick bench-locomo bench-outside typecheck fixtures

$(BIN)/python:
	@py="$(PY)"; [ -n "$$py" ] || py=$$(python3 tools/pick_python.py) || exit 1; \
		echo "making $(VENV) from $$py"; $$py -m venv $(VENV)
	$(BIN)/pip install -q --upgrade pip

$(STAMP): requirements.txt | $(BIN)/python
	$(BIN)/pip install -q -r requirements.txt
	touch $@

$(DEVSTAMP): requirements.txt requirements-dev.txt $(STAMP)
	$(BIN)/pip install -q -r requirements-dev.txt
	touch $@

setup: $(STAMP)
setup-dev: $(DEVSTAMP)

## Start the embedded database, load the demo if the store is empty, open the explorer.
run: setup
	$(BIN)/python -m brain demo --if-empty
	$(BIN)/python -m streamlit run app.py --server.port $(PORT) --server.headless true \
		--browser.gatherUsageStats false

demo: setup
	$(BIN)/python -m brain demo --if-empty

## Headless Chromium for the end-to-end browser test (Debian packages; needs root or sudo).
browser:
	@command -v chromium >/dev/null 2>&1 || { \
		SUDO=$$( [ "$$(id -u)" = 0 ] || echo sudo ); \
		$$SUDO apt-get update -qq && $$SUDO apt-get install -y -qq chromium >/dev/null; }

## Everything the tests need, then the whole suite against the real embedded PostgreSQL.
test: setup-dev browser
	$(BIN)/python -m pytest -q

test-fast: setup-dev
	$(BIN)/python -m pytest -q -m "not browser and not slow"

typecheck: setup-dev
	$(BIN)/mypy

fixtures: setup
	$(BIN)/python -m fixtures demo fixtures/demo.jsonl
	$(BIN)/python -m fixtures questions fixtures/questions.jsonl

LOCOMO ?= ../shared/bench/locomo10-dev.json

bench: setup-dev
	$(BIN)/python -m bench all
	@if [ -f "$(LOCOMO)" ]; then $(BIN)/python -m brain bench locomo "$(LOCOMO)"; \
	else echo "LoCoMo file $(LOCOMO) not found: public benchmark skipped"; fi
	$(BIN)/python -m bench outside

bench-locomo: setup-dev
	$(BIN)/python -m brain bench locomo "$(LOCOMO)"

bench-quick: setup-dev
	$(BIN)/python -m bench quick

## Other businesses' data and questions, written blind against FORMAT.md (bench/outside/).
bench-outside: setup-dev
	$(BIN)/python -m bench outside

stop:
	-$(BIN)/python -m brain stop

## Stop the embedded server and delete its data folder.
reset: stop
	rm -rf $${BRAIN_DATA_DIR:-.brain}
