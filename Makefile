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

# four workers (pytest-xdist): the suite's tests share nothing, and many of them wait on
# processes, ptys, a broker and a browser rather than compute, so four workers keep two
# cores busy (on two cores: 119 s with two workers, 102 s with four)
test: install
	$(BIN)/python -m pytest -q -n 4

bench: install
	for b in bench/*.py; do $(BIN)/python $$b || exit 1; done

clean:
	rm -rf $(VENV) build *.egg-info
