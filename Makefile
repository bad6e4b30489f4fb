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

# two workers (pytest-xdist), one a core: the suite's tests share nothing (on two idle
# cores 119 s, against 216 s serial).  Four workers were faster still (102 s), but with two
# busy processes beside them the fault soak's real-time service fell behind its players
test: install
	$(BIN)/python -m pytest -q -n 2

bench: install
	for b in bench/*.py; do $(BIN)/python $$b || exit 1; done

clean:
	rm -rf $(VENV) build *.egg-info controller/core/*.so
