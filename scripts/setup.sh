#!/usr/bin/env bash
# Set up everything cephbench needs on a Debian machine. Idempotent: run it as often as you like.
set -euo pipefail
cd "$(dirname "$0")/.."

# chromium: the report's browser test renders report.html headless; python3-rados: cephbench's one connection
# to the monitors (librados), linked into .venv below
# openssh-server, iproute2, util-linux, xfsprogs, e2fsprogs, btrfs-progs: the multi-host lab (an sshd per host,
# namespaces, loop devices, FileStore's file systems); mmdebstrap: labs on other Ceph releases (lab up --release);
# prometheus, prometheus-node-exporter, prometheus-process-exporter: the lab's monitoring stack (lab up --monitoring)
# podman, runc: the toolbox image (make image) and its test; runc because crun fails on a cgroup v1 host
# qemu-utils, qemu-block-extra: the qemu_rbd kind (qemu-nbd and QEMU's rbd driver), where its fio runs; a client
# install leaves them out (docs/suites.md says what a client host running qemu_rbd needs)
# `--client` (make install): an admin node or a client host that only runs cephbench against a cluster gets the client
# tools alone (ceph, rados, rbd, librados for Python, fio, iperf3, ssh) and cephbench without its test extras: no Ceph
# daemons, no Prometheus, no browser. Everything else here is what a lab and the test suite need.
CLIENT_PACKAGES=(ceph-common python3-rados fio iperf3 openssh-client python3-venv golang-go)
LAB_PACKAGES=(ceph-mon ceph-mgr ceph-osd radosgw iproute2 chromium openssh-server btrfs-progs xfsprogs e2fsprogs
              util-linux mmdebstrap prometheus prometheus-node-exporter prometheus-process-exporter podman runc
              qemu-utils qemu-block-extra)
mode=lab; print=""
for arg in "$@"; do
  case "$arg" in
    --client) mode=client ;;
    --print-packages) print=1 ;;
    *) printf 'setup: unknown option %s: use --client for a client-only install, or no option for the lab and tests\n' "$arg" >&2
       exit 2 ;;
  esac
done
if [ "$mode" = client ]; then
  DEB_PACKAGES=("${CLIENT_PACKAGES[@]}")
else
  DEB_PACKAGES=("${CLIENT_PACKAGES[@]}" "${LAB_PACKAGES[@]}")
fi
if [ -n "$print" ]; then printf '%s\n' "${DEB_PACKAGES[@]}"; exit 0; fi
# packages whose postinst starts a system-wide service the lab does not want (sshd on port 22, Prometheus on 9090,
# node-exporter on 9100, process-exporter on 9256): the lab starts its own, by PID, and stops them with the lab
SERVICE_PACKAGES=(openssh-server prometheus prometheus-node-exporter prometheus-process-exporter)
say() { printf 'setup: %s\n' "$*"; }

missing=()
for p in "${DEB_PACKAGES[@]}"; do
  dpkg-query -W -f='${Status}' "$p" 2>/dev/null | grep -q "install ok installed" || missing+=("$p")
done
# Go may come from outside apt (e.g. /usr/local/go): do not ask apt for it then.
if command -v go >/dev/null 2>&1 || [ -x /usr/local/go/bin/go ]; then
  missing=("${missing[@]/golang-go}")
fi
missing=($(printf '%s\n' "${missing[@]}" | grep -v '^$' || true))

if [ ${#missing[@]} -gt 0 ]; then
  if ! command -v apt-get >/dev/null 2>&1; then
    say "this system has no apt-get. Install these by hand, then run me again:"
    say "  ${missing[*]} (Ceph Pacific 16.2 or newer: ceph-mon ceph-mgr ceph-osd ceph-common radosgw; fio with the rados/rbd engines; iperf3; ssh (openssh-client); Go >= 1.21; Python >= 3.11)"
    exit 1
  fi
  sudo=""; [ "$(id -u)" -eq 0 ] || sudo="sudo"
  say "installing Debian packages: ${missing[*]}"
  $sudo apt-get update -qq
  # The lab runs its own sshd per host, and its own Prometheus and node-exporters; installing their packages must not
  # also start the machine's. A policy-rc.d that refuses service starts is put in place for this one install, only
  # when none exists (an existing one is the machine's own policy).
  policy=/usr/sbin/policy-rc.d; made_policy=""
  services=($(printf '%s\n' "${missing[@]}" | grep -xF -f <(printf '%s\n' "${SERVICE_PACKAGES[@]}") || true))
  if [ ${#services[@]} -gt 0 ] && [ ! -e "$policy" ]; then
    printf '#!/bin/sh\nexit 101\n' | $sudo tee "$policy" >/dev/null && $sudo chmod 755 "$policy" && made_policy=1
  fi
  DEBIAN_FRONTEND=noninteractive $sudo apt-get install -y -qq --no-install-recommends "${missing[@]}" >/dev/null \
    || { if [ -n "$made_policy" ]; then $sudo rm -f "$policy"; fi; exit 1; }
  if [ -n "$made_policy" ]; then $sudo rm -f "$policy"; fi
  # Debian enables Prometheus and the exporters for the next boot too: the lab's own are the only ones wanted on a
  # machine set up here (sshd is left as Debian leaves it: disabling it could lock a person out)
  if command -v systemctl >/dev/null 2>&1 && [ -d /run/systemd/system ]; then
    for unit in $(printf '%s\n' "${services[@]}" | grep -x 'prometheus\|prometheus-node-exporter\|prometheus-process-exporter' || true); do
      $sudo systemctl disable --now "$unit" >/dev/null 2>&1 || true
    done
  fi
else
  say "Debian packages present"
fi

# The load generator builds (Go) while .venv is made (pip): half a minute each on a fresh machine, on 2 cores.
export PATH="$PATH:/usr/local/go/bin"
loadgen_pid=""
if [ -d loadgen ]; then
  say "building the load generator (build/bin/cephbench-loadgen) beside .venv"
  mkdir -p build
  make -s loadgen > build/loadgen-build.log 2>&1 & loadgen_pid=$!
  trap '[ -z "$loadgen_pid" ] || kill "$loadgen_pid" 2>/dev/null || true' EXIT
fi
# the lab's cAdvisor (lab up --monitoring scrapes it when built: CPU limits from Prometheus), lab mode only: its
# library from the Go module proxy, 56 s of CPU on a cold cache (2026-12-06); optional, a failed build is one line
cadvisor_pid=""
if [ "$mode" = lab ] && [ -d tools/cadvisor ]; then
  say "building cAdvisor for the lab's monitoring (build/bin/cadvisor) beside .venv"
  mkdir -p build
  make -s cadvisor > build/cadvisor-build.log 2>&1 & cadvisor_pid=$!
  trap '[ -z "$loadgen_pid" ] || kill "$loadgen_pid" 2>/dev/null || true; [ -z "$cadvisor_pid" ] || kill "$cadvisor_pid" 2>/dev/null || true' EXIT
fi

PYTHON=${PYTHON:-python3}
if ! "$PYTHON" -c 'import sys; sys.exit(sys.version_info < (3, 11))'; then
  say "Python >= 3.11 is needed ($PYTHON is $("$PYTHON" --version 2>&1))"; exit 1
fi
if [ ! -x .venv/bin/python ]; then
  say "creating .venv"
  "$PYTHON" -m venv .venv
fi
stamp=.venv/.cephbench-installed            # cephbench with its test extras (the lab's setup)
client_stamp=.venv/.cephbench-client-installed
if [ "$mode" = client ]; then
  if [ ! -f "$stamp" ] && { [ ! -f "$client_stamp" ] || [ pyproject.toml -nt "$client_stamp" ]; }; then
    say "installing cephbench into .venv"
    .venv/bin/pip install -q --disable-pip-version-check -e .
    touch "$client_stamp"
  else
    say "cephbench already installed in .venv"
  fi
elif [ ! -f "$stamp" ] || [ pyproject.toml -nt "$stamp" ]; then
  say "installing cephbench and its dev extras into .venv"
  .venv/bin/pip install -q --disable-pip-version-check -e '.[dev]'
  touch "$stamp"
else
  say "cephbench already installed in .venv"
fi

# librados for Python comes from Debian (python3-rados), built for Debian's python3. .venv sees that one module,
# not the rest of dist-packages: a directory holding a link to it, named in a .pth file.
ext=$(.venv/bin/python -c 'import sysconfig; print(sysconfig.get_config_var("EXT_SUFFIX"))')
rados_so=$(ls /usr/lib/python3/dist-packages/rados"$ext" 2>/dev/null || true)
if [ -z "$rados_so" ]; then
  say "python3-rados has no module for .venv's Python ($ext): it is built for Debian's $(/usr/bin/python3 --version 2>&1)"
  say "  remove .venv and run me again with PYTHON=/usr/bin/python3"
  exit 1
fi
mkdir -p .venv/ceph-python
ln -sfn "$rados_so" .venv/ceph-python/
site=$(.venv/bin/python -c 'import sysconfig; print(sysconfig.get_paths()["purelib"])')
printf '%s\n' "$PWD/.venv/ceph-python" > "$site/cephbench-ceph-python.pth"
if ! .venv/bin/python -c 'import rados' 2>/dev/null; then
  say "python3-rados ($rados_so) does not load in .venv: $(.venv/bin/python -c 'import rados' 2>&1 | tail -1)"; exit 1
fi
if [ -n "$loadgen_pid" ]; then
  if ! wait "$loadgen_pid"; then
    loadgen_pid=""; cat build/loadgen-build.log
    if [ "$mode" = client ]; then
      # a client without the load generator still runs every kind but RGW's (a run with RGW tests says so at preflight)
      say "building the load generator failed (above; it needs Go $(sed -n 's/^go //p' loadgen/go.mod) or newer): RGW tests will not run"
    else
      say "building the load generator failed (above)"; exit 1
    fi
  fi
  loadgen_pid=""
fi
if [ -n "$cadvisor_pid" ]; then
  if ! wait "$cadvisor_pid"; then
    say "building cAdvisor failed (build/cadvisor-build.log): lab up --monitoring runs without it, no container CPU series"
  fi
  cadvisor_pid=""
fi
say "ready: .venv/bin/cephbench --help"
