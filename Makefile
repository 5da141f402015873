# cephbench: the two commands the README promises, and the rest.
SHELL := /bin/bash
VENV := .venv
PY := $(VENV)/bin/python
CEPHBENCH := $(VENV)/bin/cephbench
LAB_DIR ?= $(CURDIR)/build/demo-lab
NAME ?=

.PHONY: setup demo test test-unit test-lab test-lab-serial test-go bench loadgen clean

setup:
	bash scripts/setup.sh

loadgen:
	@if [ -d loadgen ]; then mkdir -p build/bin && cd loadgen && \
	  CGO_ENABLED=0 go build -o ../build/bin/cephbench-loadgen ./cmd/cephbench-loadgen && \
	  go build -o ../build/bin/cephbench-nullserver ./cmd/cephbench-nullserver; fi

demo: setup
	$(CEPHBENCH) lab status --dir $(LAB_DIR) >/dev/null 2>&1 || $(CEPHBENCH) lab up --dir $(LAB_DIR)
	$(CEPHBENCH) run suites/quick.yaml --lab-dir $(LAB_DIR)
	@echo "The lab is still running: stop it with '$(CEPHBENCH) lab down --dir $(LAB_DIR)'"

test: setup test-go test-unit test-lab

test-unit:
	$(PY) -m pytest -q tests/unit

# Two halves at once: the multi-host tests wait on shaped links most of the time, the one-host tests keep the
# CPUs busy; the one-host half runs at a lower priority so that the links, not the CPUs, stay the multi-host labs'
# bottleneck. Its output comes after the multi-host half's; either failing fails the target.
test-lab:
	@mkdir -p build; set +e; \
	nice -n 10 $(PY) -m pytest -q --durations=8 -m "not multihost" tests/lab > build/test-lab-one-host.log 2>&1 & \
	one=$$!; \
	$(PY) -m pytest -q --durations=8 -m multihost tests/lab; multi=$$?; \
	wait $$one; onehost=$$?; \
	echo "---- one-host half (build/test-lab-one-host.log) ----"; cat build/test-lab-one-host.log; \
	[ $$multi -eq 0 ] && [ $$onehost -eq 0 ]

test-lab-serial:
	$(PY) -m pytest -q --durations=12 tests/lab

test-go:
	@if [ -d loadgen ]; then cd loadgen && go vet ./... && go test ./...; fi

bench: setup
	$(PY) benchmarks/run.py $(NAME)

clean:
	rm -rf build .pytest_cache
