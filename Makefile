# cdkd-flow: the only entry points. Everything a target needs is installed by the
# target itself: Python packages into .venv/, npm packages into node_modules/.
SHELL := /bin/bash
.DEFAULT_GOAL := help

PYTHON ?= python3
VENV := .venv
VPY := $(VENV)/bin/python
CARGO ?= cargo
export CARGO_TERM_COLOR ?= never

.PHONY: help setup build test demo lint bench bench-destroy clean

help:
	@echo "make demo   - start the local AWS emulator, seed sample stacks, run cdkd-flow on them"
	@echo "make test   - run every test (unit, snapshot, emulator end-to-end)"
	@echo "make build  - build the workspace"
	@echo "make lint   - cargo fmt --check, clippy, asl-validator and cfn-lint"
	@echo "make bench  - state view figures (show of 2,500 resources; list --long over 1,000 records)"
	@echo "make bench-destroy - simulated destroys: makespan / critical path, state transitions"

$(VENV)/.installed: requirements-dev.txt
	$(PYTHON) -m venv $(VENV)
	$(VPY) -m pip install --quiet --disable-pip-version-check -r requirements-dev.txt
	touch $@

node_modules/.installed: package.json
	npm install --no-audit --no-fund --silent
	touch $@

setup: $(VENV)/.installed node_modules/.installed

build:
	$(CARGO) build --workspace --all-targets

test: setup
	scripts/with-emulator.sh $(CARGO) test --workspace --no-fail-fast

demo: setup
	$(CARGO) build -p cdkd-flow
	scripts/with-emulator.sh scripts/demo.sh

lint:
	$(CARGO) fmt --all -- --check
	$(CARGO) clippy --workspace --all-targets -- -D warnings

bench: setup
	scripts/bench-views.sh

bench-destroy:
	$(CARGO) run -q -p cdkd-core --example destroy_sim -- --seeds 10

clean:
	rm -rf target .emulator
