# Two commands on a fresh machine:  `make demo` (the whole table, simulated)  and  `make test`.
PYTHON ?= python3
VENV   ?= .venv
BIN    := $(VENV)/bin

.PHONY: demo test install bench clean

$(BIN)/preftable: pyproject.toml
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

# two workers (pytest-xdist): the suite's tests share nothing, and half of them wait on
# processes, ptys and a browser rather than compute, so two workers keep both cores busy
test: install
	$(BIN)/python -m pytest -q -n 2

bench: install
	for b in bench/*.py; do $(BIN)/python $$b || exit 1; done

clean:
	rm -rf $(VENV) build *.egg-info
