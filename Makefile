# Two commands on a fresh machine:  `make demo` (the whole table, simulated)  and  `make test`.
PYTHON ?= python3
VENV   ?= .venv
BIN    := $(VENV)/bin

.PHONY: demo test install bench clean

# _dd.c: the compiled double-dummy search, built by the install (optional: no compiler, no build)
$(BIN)/preftable: pyproject.toml controller/core/_dd.c
	$(PYTHON) -m venv $(VENV)
	$(BIN)/pip install -q --upgrade pip
	$(BIN)/pip install -q -e '.[test]'
	# The real RC522 driver runs in the tests behind an emulated chip and a fake RPi.GPIO,
	# so it is installed without its Pi-only dependencies.
	$(BIN)/pip install -q --no-deps mfrc522==0.0.7
	touch $@

install: $(BIN)/preftable

demo: install
	$(BIN)/preftable demo

# four workers (pytest-xdist) on the two cores: the suite's tests share nothing, and a test
# waiting on a child process, a browser or a broker leaves its core to another.  Three runs
# in a row beside two busy processes: 129-138 s with four workers, 142-162 s with three
test: install
	$(BIN)/python -m pytest -q -n 4

bench: install
	for b in bench/*.py; do $(BIN)/python $$b || exit 1; done

clean:
	rm -rf $(VENV) build *.egg-info controller/core/*.so
