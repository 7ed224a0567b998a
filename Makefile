# cdkd-flow: the only entry points. Everything a target needs is installed by the
# target itself: Python packages into .venv/, npm packages into node_modules/.
SHELL := /bin/bash
.DEFAULT_GOAL := help

PYTHON ?= python3
VENV := .venv
VPY := $(VENV)/bin/python
CARGO ?= cargo
export CARGO_TERM_COLOR ?= never

.PHONY: help setup build build-cli test test-emulator-py check-templates check-features demo lint lambdas lambda-init cost deploy bench bench-destroy bench-export bench-export-plan bench-export-sim bench-refresh clean crash-export

help:
	@echo "make demo   - start the local AWS emulator, seed sample stacks, run cdkd-flow on them locally, then deploy the backend into the emulator and run an export and a destroy through it"
	@echo "make test   - run every test (template checks, unit, snapshot, emulator end-to-end)"
	@echo "make test-emulator-py - the emulator's resource-import tests (Python, no cargo)"
	@echo "make check-templates - cfn-lint (SAM transform included) on infra/template.yaml, asl-validator on statemachines/"
	@echo "make build  - build the workspace"
	@echo "make lint   - cargo fmt --check, clippy, and the template checks"
	@echo "make lambdas - build every step's Lambda binary (cargo-lambda, provided.al2023) and zip it"
	@echo "make lambda-init - each Lambda binary's zip size and local cold-start init time (fake Runtime API)"
	@echo "make cost   - measured cost of a destroy of N resources (state transitions, Lambda GB-s) on the emulator"
	@echo "make deploy - make lambdas, then sam deploy infra/template.yaml and the run folders' lifecycle rule (RUN_RETENTION_DAYS, default 90; needs AWS credentials)"
	@echo "make crash-export - kill a local export at 200 seeded random points and resume it with the same command (resources lost, locks left)"
	@echo "make bench  - state view figures (show of 2,500 resources; list --long over 1,000 records)"
	@echo "make bench-destroy - simulated destroys: makespan / critical path, state transitions"
	@echo "make bench-export - exports as a user runs them (flat 5, flat 50, a root + 8 children) on the emulator: wall time, requests by service and action, CloudFormation's own time; the simulated makespan against the critical path (JSON: BENCH_ARGS=--json)"
	@echo "make bench-export-plan - export plan of a 500-resource, three-level tree on the emulator: time, AWS requests by operation"
	@echo "make bench-export-sim - simulated exports of nested trees: makespan / critical path, siblings side by side vs one by one, state transitions"
	@echo "make bench-refresh - state refresh-observed of a 500-resource record on the emulator: concurrent reads vs one by one"

$(VENV)/.installed: requirements-dev.txt
	$(PYTHON) -m venv $(VENV)
	$(VPY) -m pip install --quiet --disable-pip-version-check -r requirements-dev.txt
	touch $@

node_modules/.installed: package.json
	npm install --no-audit --no-fund --silent
	touch $@

setup: $(VENV)/.installed node_modules/.installed

# Every target `make test` runs: the binaries, the unit-test and integration binaries,
# the benches, then the emulator binaries (`e2e`: test = false, so that `--tests` leaves
# them out, and cargo lets `--tests` override a named `--test`). Not the examples: the
# benchmark targets below build them, and `make lint` checks them (docs/testing.md).
build:
	$(CARGO) build --workspace --bins --tests --benches
	$(CARGO) build --workspace --test e2e

# One build of every target (the CLI's end-to-end tests run the cdkd-flow binary cargo
# built for them, CARGO_BIN_EXE_cdkd-flow). Then every crate's unit tests and the pure
# integration binaries (`it`), which `--tests` selects (every test target but `e2e`); then the two binaries that talk to the emulator (`e2e`:
# cdkd-tests and the CLI's) and the emulator's Python tests side by side, each on an
# emulator of its own (scripts/run-e2e.sh), one test at a time inside a binary: a
# single-threaded emulator's Step Functions interpreter switch is emulator-wide. (The
# pure tests run before them, not beside: both phases keep the two cores busy, and side
# by side they took longer.) Every cargo call uses `--workspace`, so all of them share one
# feature set and one build. A failing group does not stop the others; the target fails
# at the end if any failed.
# The set-up and the template checks (they install the Python and npm packages) run
# beside the build from its first second: the build needs none of them (`build` is named
# first, so it takes the first of the two job slots).
test:
	$(MAKE) --no-print-directory -j2 build check-templates
	scripts/check-features.sh
	$(PYTHON) scripts/check_structure.py .
	$(PYTHON) scripts/cite_headings.py .
	@status=0; \
	$(CARGO) test --workspace --no-fail-fast --tests || status=1; \
	$(CARGO) test --workspace --no-fail-fast --doc || status=1; \
	CARGO=$(CARGO) scripts/run-e2e.sh || status=1; \
	exit $$status

# The emulator's own tests (resource import on the extended moto), without cargo.
test-emulator-py: setup
	scripts/with-emulator.sh $(VPY) -m unittest discover -s scripts/moto_ext/tests -t scripts -v

# The demo builds only the CLI; its features agree with the test build's
# (scripts/check-features.sh), so this build is a prefix of `make test`'s.
demo:
	$(MAKE) --no-print-directory -j2 build-cli setup
	scripts/with-emulator.sh scripts/demo.sh
	scripts/with-emulator.sh --backend scripts/demo-deployed.sh

# The CLI and the step binary the deployed backend runs (cdkd-flow depends on
# cdkd-functions, so both resolve with the CLI's features).
build-cli:
	$(CARGO) build -p cdkd-flow -p cdkd-functions --bin cdkd-flow --bin cdkd-step

check-features:
	scripts/check-features.sh

LAMBDA_TOOLS := $(VENV)/.lambda-tools
SAM_VENV := .venv-sam
SAM_TOOLS := $(SAM_VENV)/.installed
LAMBDA_PATH := PATH="$(CURDIR)/$(VENV)/bin:$$PATH"

$(LAMBDA_TOOLS): $(VENV)/.installed
	$(VPY) -m pip install --quiet --disable-pip-version-check cargo-lambda ziglang
	touch $@

# SAM CLI in a virtualenv of its own: it pins Flask/Werkzeug versions of its own, and
# the emulator (moto server) in .venv must keep the ones requirements-dev.txt names.
$(SAM_TOOLS):
	$(PYTHON) -m venv $(SAM_VENV)
	$(SAM_VENV)/bin/python -m pip install --quiet --disable-pip-version-check aws-sam-cli==1.170.0
	touch $@

# The template and the state machine definitions: cfn-lint (it applies the SAM transform
# with aws-sam-translator and lints the result: what `sam validate --lint` runs, without
# installing the SAM CLI, about a minute of CPU beside a cold build; `make deploy` still
# runs `sam validate`) and asl-validator.
check-templates: setup
	$(VENV)/bin/cfn-lint infra/template.yaml
	node_modules/.bin/asl-validator $(addprefix --json-path ,$(wildcard statemachines/*.asl.json))

# The shape rules (no circles of imports, core's domain free of its views, files and
# functions of bounded length): scripts/check_structure.py, docs/README.md.
lint: setup check-templates
	$(PYTHON) scripts/check_structure.py .
	$(PYTHON) scripts/cite_headings.py .
	$(CARGO) fmt --all -- --check
	$(CARGO) clippy --workspace --all-targets --test e2e -- -D warnings

# target/lambda/cdkd-step/bootstrap, the one binary every step's function runs (its
# Handler names the step; infra/template.yaml's Globals CodeUri points here), and its zip
# under target/lambda/zip/<arch>/cdkd-step/bootstrap.zip; arm64 only when its Rust target is installed.
# The bootstraps always go to ./target/lambda (the template's CodeUri), whatever
# CARGO_TARGET_DIR says (cargo lambda's default is $CARGO_TARGET_DIR/lambda); the x86_64
# zips are made from those very files (a second cargo build could see other sources).
lambdas: $(LAMBDA_TOOLS)
	$(LAMBDA_PATH) $(CARGO) lambda build --release --x86-64 -p cdkd-functions --bin cdkd-step --lambda-dir target/lambda
	$(VPY) scripts/lambda_zip.py target/lambda target/lambda/zip/x86_64
	if rustup target list --installed 2>/dev/null | grep -qx aarch64-unknown-linux-gnu; then \
	  $(LAMBDA_PATH) $(CARGO) lambda build --release --arm64 -p cdkd-functions --bin cdkd-step --output-format zip --lambda-dir target/lambda/zip/arm64; \
	else echo "arm64: rustup target aarch64-unknown-linux-gnu not installed, skipped"; fi
	@for f in target/lambda/*/bootstrap target/lambda/zip/*/*/bootstrap.zip; do echo "$$f $$(stat -c %s $$f) bytes"; done

# Init time of every bootstrap built by `make lambdas` (run it first; not a prerequisite,
# as a rebuild takes minutes), against a fake Lambda Runtime API on 127.0.0.1 (and the
# emulator for a cleanup-select invocation); table on stdout, figures in
# target/lambda/init-times.json.
lambda-init: setup
	scripts/with-emulator.sh $(VPY) scripts/lambda_init_time.py --runs 7 --json target/lambda/init-times.json

# Cost of a destroy of N resources, measured through the engine on the emulator. Not part
# of `make test`. Uses the debug build `make test` makes (no separate feature set).
COST_SIZES ?= 10,50,200
cost: setup
	$(CARGO) build --workspace --all-targets
	scripts/with-emulator.sh $${CARGO_TARGET_DIR:-target}/debug/examples/destroy_cost --sizes $(COST_SIZES)

# Needs AWS credentials. Override parameters: make deploy PARAMS='StateBucket=my-state DeletePolicyArn=arn:aws:iam::123456789012:policy/cdkd-flow-delete'
# Then the run folders of that bucket (<StatePrefix>/_runs/) get a lifecycle rule that
# expires them RUN_RETENTION_DAYS after their last write, merged into the bucket's own
# rules (cdkd-flow runs expire, docs/runs.md, "The lifecycle rule (cdkd-flow runs expire, make deploy)"); RUN_RETENTION_DAYS=off leaves the
# bucket's lifecycle alone.
RUN_RETENTION_DAYS ?= 90
DEPLOY_STATE_BUCKET = $(subst ",,$(patsubst StateBucket=%,%,$(filter StateBucket=%,$(PARAMS))))
DEPLOY_STATE_PREFIX = $(or $(subst ",,$(patsubst StatePrefix=%,%,$(filter StatePrefix=%,$(PARAMS)))),cdkd)
deploy: lambdas $(SAM_TOOLS)
	cd infra && $(CURDIR)/$(SAM_VENV)/bin/sam validate --lint --template template.yaml
	cd infra && $(CURDIR)/$(SAM_VENV)/bin/sam deploy --template-file template.yaml --config-file samconfig.toml $(if $(PARAMS),--parameter-overrides $(PARAMS))
	@if [ "$(RUN_RETENTION_DAYS)" = off ]; then echo "run folders: no lifecycle rule set (RUN_RETENTION_DAYS=off)"; \
	else $(CARGO) run -q -p cdkd-flow -- $(if $(DEPLOY_STATE_BUCKET),--state-bucket $(DEPLOY_STATE_BUCKET)) --state-prefix $(DEPLOY_STATE_PREFIX) runs expire --days $(RUN_RETENTION_DAYS); fi

bench: setup
	scripts/bench-views.sh

bench-destroy:
	$(CARGO) run -q -p cdkd-core --example destroy_sim -- --seeds 10

# Simulated exports of a root with 0-16 children (pure: no emulator): makespan against the
# critical path, siblings side by side against one after the other, state transitions.
bench-export-sim:
	$(CARGO) run -q -p cdkd-core --example export_sim

# Exports as a user runs them (`cdkd-flow export ... --local -y`, no --fast) on the
# emulator, for a flat stack of 5 and of 50 resources and a root with 8 nested children:
# wall time, the requests the emulator counted by service and action, CloudFormation's
# own time on the run's operations; and the simulated-latency model's makespan against
# CloudFormation's critical path for the same shapes (docs/testing.md, "The export benchmark (make bench-export)"). Not part of
# `make test` (its smoke is the CLI's request_budget tests). BENCH_ARGS=--json for a
# machine, BENCH_ARGS='--cases flat5' for one case. Uses the debug build `make test` makes.
bench-export: setup
	$(CARGO) build --workspace --all-targets
	scripts/with-emulator.sh $${CARGO_TARGET_DIR:-target}/debug/examples/export_bench $(BENCH_ARGS)

# Export planning on the emulator (not a timed test): time and AWS requests by operation.
# Uses the debug build `make test` makes (no separate feature set).
bench-export-plan: setup
	$(CARGO) build --workspace --all-targets
	scripts/with-emulator.sh $${CARGO_TARGET_DIR:-target}/debug/examples/export_plan_bench --resources 500 --runs 3

# state refresh-observed of a 500-resource record on the emulator, its reads concurrent
# (the CLI's bound) and one by one. Uses the debug build `make test` makes.
bench-refresh: setup
	$(CARGO) build --workspace --all-targets
	scripts/with-emulator.sh $${CARGO_TARGET_DIR:-target}/debug/examples/refresh_observed_bench --resources 500 --runs 3

clean:
	rm -rf target .emulator

# The export crash test with 200 seeds (20 run in `make test`): a local export killed at
# seeded random points, then the same command again (docs/export.md, "Interrupted and contested runs: resume, refusals, the lock first").
crash-export: build setup
	cd cli && CDKD_FLOW_CRASH_SEEDS=$${CDKD_FLOW_CRASH_SEEDS:-200} ../scripts/with-emulator.sh \
	  $(CARGO) test --workspace --test e2e -- --test-threads=1 --nocapture crash_export export_crash
