# cephbench: the two commands the README promises, and the rest.
SHELL := /bin/bash
VENV := .venv
PY := $(VENV)/bin/python
CEPHBENCH := $(VENV)/bin/cephbench
LAB_DIR ?= $(CURDIR)/build/demo-lab
NAME ?=
# The tests start the CLI hundreds of times: each start should read cephbench's modules compiled once (.pyc in
# __pycache__, which git ignores), not compile them again. This machine's environment turns that off
# (PYTHONDONTWRITEBYTECODE=1): a run's imports then cost 0.43-0.49 s of CPU a start instead of 0.29 s.
unexport PYTHONDONTWRITEBYTECODE

.PHONY: setup install image demo test roots test-go-and-unit test-unit test-lab test-lab-serial test-go bench loadgen cadvisor clean

setup:
	bash scripts/setup.sh

# An admin node or client host: the client tools (ceph-common, python3-rados, fio, iperf3, ssh) and cephbench in .venv,
# none of the lab's daemons, monitoring or browser
install:
	bash scripts/setup.sh --client

# cephbench as a toolbox image of RELEASE's client tools, localhost/cephbench:RELEASE (docs/toolbox.md): made from the
# release's root (pacific, reef, tentacle: built first if not cached) with podman import, no registry; an image made
# from the same root and sources is kept
RELEASE ?= reef
image: loadgen
	$(CEPHBENCH) lab image --build $(RELEASE)

loadgen:
	@if [ -d loadgen ]; then mkdir -p build/bin && cd loadgen && \
	  CGO_ENABLED=0 go build -o ../build/bin/cephbench-loadgen ./cmd/cephbench-loadgen && \
	  go build -o ../build/bin/cephbench-nullserver ./cmd/cephbench-nullserver; fi

# the lab's cAdvisor (lab up --monitoring scrapes it when built): its library from the Go module proxy, tools/cadvisor/
cadvisor:
	@mkdir -p build/bin && cd tools/cadvisor && CGO_ENABLED=0 go build -o ../../build/bin/cadvisor .

demo: setup
	$(CEPHBENCH) lab status --dir $(LAB_DIR) >/dev/null 2>&1 || $(CEPHBENCH) lab up --dir $(LAB_DIR)
	$(CEPHBENCH) run suites/quick.yaml --lab-dir $(LAB_DIR)
	@echo "The lab is still running: stop it with '$(CEPHBENCH) lab down --dir $(LAB_DIR)'"

# The unit and Go tests run beside the lab tests' first phase: it is CPU-bound (92% busy), and a phase of their own
# left a core idle for 47-53 s (fresh-clone runs Y and Z).
test: setup roots
	@$(MAKE) -s test-lab BESIDE='$(MAKE) -s test-go-and-unit'

# The roots of the other releases' labs (tests/lab/test_release_lab.py), built in the background while the unit
# tests and the first lab tests run: minutes of download and unpacking, once per machine (cached). A test that
# needs one waits for its build (a lock on the roots directory); a failed build is built again by the test.
roots:
	@mkdir -p build; for r in reef tentacle; do \
	  nohup nice -n 5 $(CEPHBENCH) lab roots --build $$r > build/roots-$$r.log 2>&1 < /dev/null & \
	done

# A background job of a shell ignores SIGINT, and its children would too (`make test &`, a CI runner's job): the
# unit tests of Ctrl-C get theirs back, as the lab tests below do.
test-unit:
	env --default-signal=INT $(PY) -m pytest -q tests/unit

# The lab tests in two phases. First four processes at once: the one-host tests (CPU-bound: a loopback cluster) in
# three shares of whole modules balanced by their cost (tests/lab/conftest.py), at a lower priority, beside the
# multi-host tests that check behaviour (they wait on ssh and shaped links); the one-host tests make no namespace,
# link, loop device or cgroup, which the multi-host tests check the machine for. Each share starts a lab of its own.
# BESIDE (`make test`: the unit and Go tests) runs beside them, at the multi-host tests' priority (a unit test of
# tools started at one instant allows them 50 ms).
# A background job of a shell ignores SIGINT, and its children would too: `env --default-signal=INT` gives the
# Ctrl-C tests theirs back. Then the ground-truth tests, with nothing else: they measure rates and name bottlenecks,
# and other load on the CPUs would be a bottleneck of its own. They wait on shaped links and throttled drives (the
# CPUs a fifth busy), so they run in three shares at once, each on labs of its own; each lab host's CPU is read from
# its own cpuacct group.
# Two shares of each left the CPUs 62% busy for the last 175 s of the first phase (one share ran on alone) and 38% in
# the second (fresh-clone run V, 2026-11-26); three fill both.
ONE_HOST_SHARES := 1 2 3
TRUTH_SHARES := 1 2
# The CPU causes' ground truth burns CPU on purpose (a neighbour, a CPU-limited OSD) and names whose CPU was busy: beside
# the shares it made their CPUs 100 % busy (the quick suite's network truth failed its CPU guard in 3 fresh-clone runs),
# and their load took the limited OSD's quota from it. It runs after them, alone. So does the network's ground truth
# (test_ground_truth.py): it holds cephbench to naming a link, and a link is the limit only while the client's CPUs
# have room; beside the other shares the VM's CPUs were 94-96 % busy, 1.62 cores of it other processes, and the verdict
# said CPU (CI of stop 42 and fresh-clone runs at 14fd5c0 and 8e2c2a3: the cluster network and quick-suite truths).
ALONE_TRUTH := tests/lab/test_ground_truth_cpu.py tests/lab/test_ground_truth.py
# A log whose session passed shows its last line; one that did not, all of it (what CI shows of its output is a
# part: whole logs of the shares that passed had crowded a failure's own lines out of it). Tracebacks are short
# (--tb=short): an assertion's message holds the run's output.
show_log = if tail -n1 $(1) | grep -q passed && ! tail -n1 $(1) | grep -qE 'failed|error'; then tail -n1 $(1); else cat $(1); fi
# The Go tests (compiled from nothing on a fresh machine: ~20 s) beside the unit tests (a core's worth of Python).
test-go-and-unit:
	@mkdir -p build; set +e; \
	( $(MAKE) -s test-go > build/test-go.log 2>&1 ) & gopid=$$!; \
	$(MAKE) -s test-unit; unit=$$?; \
	wait $$gopid; gotest=$$?; echo "---- go vet, go test (build/test-go.log) ----"; cat build/test-go.log; \
	[ $$unit -eq 0 ] && [ $$gotest -eq 0 ]

test-lab:
	@mkdir -p build; set +e; \
	( while :; do echo "$$(date +%s) $$(head -1 /proc/stat)"; sleep 2; done ) > build/cpu.log 2>/dev/null & sampler=$$!; \
	env --default-signal=INT $(PY) -m pytest -q --tb=short --durations=8 -m "multihost and not groundtruth" tests/lab \
	  > build/test-lab-multi-host.log 2>&1 & mpid=$$!; \
	echo "$$(date +%s) one-host shares and multi-host$(if $(BESIDE), (and BESIDE))" > build/phases.log; \
	for k in $(ONE_HOST_SHARES); do \
	  CEPHBENCH_TEST_CPU=1 env --default-signal=INT nice -n 10 $(PY) -m pytest -q --tb=short --durations=8 \
	    -m "not multihost and not groundtruth" \
	    --one-host-shard $$k/$(words $(ONE_HOST_SHARES)) --junitxml=build/test-lab-one-host-$$k.xml tests/lab > build/test-lab-one-host-$$k.log 2>&1 & \
	  pids="$$pids $$!"; \
	done; \
	beside=0; $(if $(BESIDE),$(BESIDE) || beside=1;) \
	wait $$mpid; multi=$$?; echo "$$(date +%s) one-host shares, multi-host done" >> build/phases.log; \
	echo "---- multi-host (build/test-lab-multi-host.log) ----"; $(call show_log,build/test-lab-multi-host.log); \
	onehost=0; for p in $$pids; do wait $$p || onehost=1; done; \
	for k in $(ONE_HOST_SHARES); do echo "---- one-host share $$k of $(words $(ONE_HOST_SHARES)) (build/test-lab-one-host-$$k.log) ----"; \
	  $(call show_log,build/test-lab-one-host-$$k.log); done; \
	echo "$$(date +%s) ground truth" >> build/phases.log; \
	for k in $(TRUTH_SHARES); do \
	  env --default-signal=INT $(PY) -m pytest -q --tb=short --durations=8 -m groundtruth --truth-shard $$k/$(words $(TRUTH_SHARES)) \
	    $(addprefix --ignore=,$(ALONE_TRUTH)) --junitxml=build/test-lab-truth-$$k.xml tests/lab > build/test-lab-truth-$$k.log 2>&1 & \
	  tpids="$$tpids $$!"; \
	done; \
	truth=0; for p in $$tpids; do wait $$p || truth=1; done; \
	for k in $(TRUTH_SHARES); do echo "---- ground truth, share $$k of $(words $(TRUTH_SHARES)) (build/test-lab-truth-$$k.log) ----"; \
	  $(call show_log,build/test-lab-truth-$$k.log); done; \
	echo "$$(date +%s) ground truth of CPU and network causes, alone" >> build/phases.log; \
	echo "---- ground truth of CPU and network causes, alone ($(ALONE_TRUTH)) ----"; \
	env --default-signal=INT $(PY) -m pytest -q --tb=short --durations=8 -m groundtruth --junitxml=build/test-lab-truth-cpu.xml \
	  $(ALONE_TRUTH) || truth=1; \
	for p in $$pids; do [ ! -d /sys/fs/cgroup/cpuacct/pytest-cpu-$$p ] || rmdir /sys/fs/cgroup/cpuacct/pytest-cpu-$$p; done; \
	echo "$$(date +%s) end" >> build/phases.log; kill $$sampler; $(PY) scripts/cpu_phases.py build/cpu.log build/phases.log; \
	$(PY) scripts/module_costs.py build/test-lab-one-host-*.xml build/test-lab-truth-*.xml; \
	[ $$beside -eq 0 ] && [ $$multi -eq 0 ] && [ $$onehost -eq 0 ] && [ $$truth -eq 0 ]

test-lab-serial:
	$(PY) -m pytest -q --durations=12 tests/lab

test-go:
	@if [ -d loadgen ]; then cd loadgen && go vet ./... && go test ./...; fi

bench: setup
	$(PY) benchmarks/run.py $(NAME)

clean:
	rm -rf build .pytest_cache
