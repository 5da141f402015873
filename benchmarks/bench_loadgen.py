"""What does cephbench-loadgen cost the client: against a null server on one core, and next to swift-bench and a
boto3 thread pool on the lab's RGW?

1. Null server (the client's own ceiling): cephbench-nullserver on core 1 (taskset -c 1), loadgen on core 0
   (taskset -c 0, GOMAXPROCS=1), S3, 4 KiB PUT and GET, 16 in flight, NULL_S seconds each, NULL_ROUNDS rounds.
   Per run: ops/s of the measured phase, client CPU (user + system, os.wait4) per request sent (measured ops +
   prefill + cleanup deletes + bucket calls), heap allocations per request (CEPHBENCH_LOADGEN_MEMSTATS=1) and the
   null server's CPU per request (/proc/PID/stat), so that its own ceiling (1e6 / that) shows it is not the limit.
   With BENCH_LOADGEN_OLD=/path/to/an/older/cephbench-loadgen each round runs old and new alternately (A B B A ...)
   and the ratios new/old are printed. The machine is shared: ops/s depend on the neighbours on core 0, CPU per op
   much less; medians of the rounds are reported, with the spread (min-max) as the noise.
2. Lab RGW (skipped with BENCH_LOADGEN_SKIP_LAB=1): 4 KiB PUT and GET at 32 in flight, ROUNDS rounds alternating
   the clients (the order rotates each round): cephbench-loadgen over S3 and Swift, swift-bench (Swift) and a boto3
   thread-pool client (S3, benchmarks/s3_threadpool_client.py). swift-bench and boto3 are installed at benchmark time
   into their own venv (build/bench-venv), never into cephbench's. Client CPU is the user + system time of the client
   process from os.wait4's rusage, per request it sent (loadgen: measured ops + prefill + cleanup deletes;
   swift-bench: its PUTs, GETs; boto3: its calls), less the CPU of the same program starting and exiting without
   load (interpreter, imports, client set-up), so that a longer run would not change the figure.

3. Low rate: loadgen with 1 request in flight (S3 PUT and GET), against the null server (NULL_LOW_S seconds, same
   pinning) and against the lab's RGW (LOW_N requests), so that the cost of a client that waits between requests
   (its wake-ups) shows beside the cost at full speed. With BENCH_LOADGEN_OLD the old binary alternates here too,
   and on the lab as one more client ("loadgen-old-s3") in the rounds of part 2.

4. The floor (benchmarks/floor_client.c, built here with the system's C compiler): the least a client can do per
   request, one thread on one epoll set sending the same prepared bytes again and again (no signing, no key
   choice, no statistics): one write, one read and a share of one epoll_wait per request. It runs beside loadgen in
   every round of parts 1 to 3: against the null server (same core, same requests in flight) and on the lab over
   Swift (a token, nothing to sign: the least any S3 or Swift client could pay). No client can cost less per
   request over the same kernel path, so the floor says which of the goals below any client could meet:
   floor_*_ops_per_cpu_s is the most requests per CPU-second on this machine's kernel, ratio_floor_swiftbench_* and
   ratio_floor_boto3_* the largest ratio to swift-bench and boto3 a client could reach, and loadgen_*_over_floor_*
   how far loadgen is above it.

Goals (issue 39): >= 200,000 ops/s of 4 KiB PUT and GET against the null server on one core; >= 25x fewer client
CPU-seconds per op than swift-bench and boto3 on the lab, in the same run; loadgen's CPU per op against the RGW close
to its cost against the null server.
RESULT: put_ops_s get_ops_s allocs_per_op cpu_us_per_op (null server, medians) and the per-op figures behind them,
the floor's beside them;
then (with the lab) CPU-s per 1000 ops, the ratios (other / loadgen, same operation), ops/s, and rgw_over_null_*
(loadgen's CPU per op on the lab over its CPU per op against the null server, same operation and in-flight count).
The machine is shared: load_avg_* and the *_min/*_max spread of the rounds are the noise.
"""

from __future__ import annotations

import functools
import json
import os
import re
import shutil
import statistics
import subprocess
import sys
import tempfile
import time
import urllib.parse
from pathlib import Path

from common import lab, result_line

REPO = Path(__file__).resolve().parent.parent
LOADGEN = REPO / "build" / "bin" / "cephbench-loadgen"
NULLSERVER = REPO / "build" / "bin" / "cephbench-nullserver"
VENV = REPO / "build" / "bench-venv"
PINS = ["swift-bench==2.0.0", "python-swiftclient==4.11.0", "boto3==1.44.5"]
CLIENT = Path(__file__).resolve().parent / "s3_threadpool_client.py"
FLOOR_SRC = Path(__file__).resolve().parent / "floor_client.c"
FLOOR = REPO / "build" / "bin" / "floor-client"
ROUNDS = int(os.environ.get("BENCH_LOADGEN_ROUNDS", "3"))
N = int(os.environ.get("BENCH_LOADGEN_OPS", "3000"))    # measured requests per run
GET_KEYS = 100                                          # objects a GET run reads (written first)
CONC = 32
SIZE = 4096
NULL_S = float(os.environ.get("BENCH_LOADGEN_NULL_S", "10"))


def ensure_venv() -> Path:
    stamp = VENV / ".pins"
    if not (stamp.is_file() and stamp.read_text() == " ".join(PINS)):
        if not (VENV / "bin" / "python").exists():
            subprocess.run([sys.executable, "-m", "venv", str(VENV)], check=True)
        subprocess.run([str(VENV / "bin" / "pip"), "install", "-q", "--disable-pip-version-check", *PINS], check=True)
        stamp.write_text(" ".join(PINS))
    return VENV / "bin"


def ensure_floor() -> str:
    """The floor client, built from its source when missing or older (the C compiler installed first if absent)."""
    if FLOOR.exists() and FLOOR.stat().st_mtime >= FLOOR_SRC.stat().st_mtime:
        return str(FLOOR)
    if not (shutil.which("cc") or shutil.which("gcc")):
        subprocess.run(["apt-get", "install", "-y", "-qq", "--no-install-recommends", "gcc", "libc6-dev"], check=True,
                       stdout=subprocess.DEVNULL, env={**os.environ, "DEBIAN_FRONTEND": "noninteractive"})
    FLOOR.parent.mkdir(parents=True, exist_ok=True)
    subprocess.run([shutil.which("cc") or "gcc", "-O2", "-Wall", "-o", str(FLOOR), str(FLOOR_SRC)], check=True)
    return str(FLOOR)


def run_floor(binary: str, host: str, port: int, method: str, path: str, conc: int, seconds: float,
              max_requests: int = 0, headers: str = "", pin: list[str] | None = None) -> tuple[float, int, float]:
    """One floor run: (client CPU-s, answers, answers/s). headers go in its environment (a token is a secret)."""
    body = SIZE if method == "PUT" else 0
    cpu, out, _ = measured([*(pin or []), binary, host, str(port), method, path, str(body), str(conc),
                            f"{seconds:g}", str(max_requests)], {"FLOOR_CLIENT_HEADERS": headers})
    m = re.match(r"requests (\d+) errors (\d+) seconds ([\d.]+)", out)
    if not m or int(m.group(2)):
        raise RuntimeError(f"floor client {method} {path}: {out.strip()!r}")
    return cpu, int(m.group(1)), int(m.group(1)) / float(m.group(3))


def measured(argv: list[str], env: dict[str, str] | None = None, cwd: Path | None = None) -> tuple[float, str, str]:
    """Run argv; (client CPU seconds from wait4, stdout, stderr). Fails loudly on a non-zero exit."""
    with tempfile.TemporaryFile() as out, tempfile.TemporaryFile() as err:
        proc = subprocess.Popen(argv, stdout=out, stderr=err, env={**os.environ, **(env or {})}, cwd=cwd)
        _, status, ru = os.wait4(proc.pid, 0)
        proc.returncode = os.waitstatus_to_exitcode(status)
        out.seek(0)
        err.seek(0)
        stdout, stderr = out.read().decode(errors="replace"), err.read().decode(errors="replace")
    if proc.returncode != 0:
        raise RuntimeError(f"{argv[0]} exited {proc.returncode}: {stderr.strip()[-400:]}")
    return ru.ru_utime + ru.ru_stime, stdout, stderr


def runq_wait_s(pid: int) -> float:
    """Seconds the process's threads spent runnable but waiting for a CPU (/proc/PID/task/*/schedstat)."""
    total = 0
    for st in Path(f"/proc/{pid}/task").glob("*/schedstat"):
        try:
            total += int(st.read_text().split()[1])
        except (OSError, IndexError, ValueError):
            pass
    return total / 1e9


def measured_waits(argv: list[str], env: dict[str, str]) -> tuple[float, str, float, float]:
    """Like measured, sampling the process's run-queue wait every 50 ms: (client CPU-s, stderr, run-queue wait s,
    wall s). The wait is what the neighbours on its core cost it: time it was ready to run and did not."""
    with tempfile.TemporaryFile() as out, tempfile.TemporaryFile() as err:
        t0 = time.monotonic()
        proc = subprocess.Popen(argv, stdout=out, stderr=err, env={**os.environ, **env})
        wait = 0.0
        while True:
            pid, status, ru = os.wait4(proc.pid, os.WNOHANG)
            if pid:
                break
            wait = max(wait, runq_wait_s(proc.pid))
            time.sleep(0.05)
        wall = time.monotonic() - t0
        proc.returncode = os.waitstatus_to_exitcode(status)
        err.seek(0)
        stderr = err.read().decode(errors="replace")
    if proc.returncode != 0:
        raise RuntimeError(f"{argv[0]} exited {proc.returncode}: {stderr.strip()[-400:]}")
    return ru.ru_utime + ru.ru_stime, stderr, wait, wall


def per_1k(cpu: float, requests: float) -> float:
    return cpu / requests * 1000


# ---- the clients ---------------------------------------------------------------------------------

def run_loadgen(endpoint: str, proto: str, op: str, env: dict[str, str], tag: str,
                pin: list[str] | None = None, extra_env: dict[str, str] | None = None,
                duration_s: float | None = None, binary: str | None = None, conc: int = CONC,
                n: int = N) -> tuple[float, int, float]:
    """(client CPU-s, requests sent, ops/s of the measured phase)."""
    with tempfile.TemporaryDirectory() as d:
        out = Path(d) / "r.json"
        argv = [*(pin or []), binary or str(LOADGEN), "run", "--protocol", proto, "--endpoint", endpoint,
                "--workload", op, "--object-size", str(SIZE), "--concurrency", str(conc), "--bucket-prefix",
                f"bench-lg-{tag}-", "--objects", str(n if op == "put" else GET_KEYS), "--output", str(out)]
        argv += ["--duration", f"{duration_s:g}s"] if duration_s else ["--ops", str(n)]
        cpu, _, _ = measured(argv, {**env, **(extra_env or {})})
        doc = json.loads(out.read_text())
    requests = doc["total"]["ops"] + (doc["prefill"] or {}).get("objects", 0) + doc["cleanup"]["objects_deleted"] \
        + 2 * len(doc["cleanup"]["buckets_deleted"])
    return cpu, requests, doc["total"]["ops_per_s"]


def loadgen_startup(env: dict[str, str]) -> float:
    return measured([str(LOADGEN), "version"], env)[0]


_FINAL = re.compile(r"(\d+) (PUTS|GETS|DEL) \*\*FINAL\*\* \[(\d+) failures\], ([\d.]+)/s")


def swift_bench(bin_dir: Path, auth: str, user: str, key: str, op: str, tag: str) -> tuple[float, int, float]:
    """swift-bench PUT (-n N -g 0) or GET (-n GET_KEYS -g N); (client CPU-s, measured requests, ops/s).

    The GET run PUTs its GET_KEYS objects first (the caller takes their CPU off). Objects are kept (-x) and
    removed afterwards with the swift CLI, outside the measurement.
    """
    with tempfile.TemporaryDirectory() as d:
        conf = Path(d) / "bench.conf"
        fd = os.open(conf, os.O_WRONLY | os.O_CREAT, 0o600)
        with os.fdopen(fd, "w") as f:
            f.write(f"[bench]\nauth = {auth}\nuser = {user}\nkey = {key}\nauth_version = 1.0\n")
        container = f"bench-sb-{tag}"
        n, g = (N, 0) if op == "put" else (GET_KEYS, N)
        argv = [str(bin_dir / "swift-bench"), "-c", str(CONC), "-s", str(SIZE), "-n", str(n), "-g", str(g), "-x",
                "-C", "1", "--container-name", container, str(conf)]
        cpu, out, err = measured(argv, {"PYTHONWARNINGS": "ignore"})
        finals = {m.group(2): (int(m.group(1)), int(m.group(3)), float(m.group(4))) for m in _FINAL.finditer(out + err)}
        swift_cli(bin_dir, auth, user, key, "delete", container)
    kind = "PUTS" if op == "put" else "GETS"
    if kind not in finals or finals[kind][1]:
        raise RuntimeError(f"swift-bench {op}: no clean FINAL line ({finals}): {err.strip()[-300:]}")
    return cpu, N, finals[kind][2]


def swift_cli(bin_dir: Path, auth: str, user: str, key: str, *args: str) -> str:
    """The swift CLI (python-swiftclient, in the benchmark's venv) with the lab's Swift user: what it printed."""
    done = subprocess.run([str(bin_dir / "swift"), *args], capture_output=True, text=True, timeout=600,
                          env={**os.environ, "ST_AUTH": auth, "ST_USER": user, "ST_KEY": key})
    if done.returncode != 0:
        raise RuntimeError(f"swift {' '.join(args)} failed: {done.stderr.strip()[-300:]}")
    return done.stdout


def swift_bench_startup(bin_dir: Path) -> float:
    return measured([str(bin_dir / "swift-bench"), "--help"], {"PYTHONWARNINGS": "ignore"})[0]


def boto3_client(bin_dir: Path, endpoint: str, op: str, env: dict[str, str], tag: str) -> tuple[float, int, float]:
    """(client CPU-s, measured requests, ops/s); the GET run's objects are written by another process."""
    bucket = f"bench-boto3-{tag}"
    py = str(bin_dir / "python")
    if op == "put":
        cpu, out, _ = measured([py, str(CLIENT), endpoint, bucket, "put", str(N), str(CONC), str(SIZE)], env)
        res = json.loads(out)
        measured([py, str(CLIENT), endpoint, bucket, "cleanup", str(N), str(CONC), str(SIZE)], env)
    else:
        measured([py, str(CLIENT), endpoint, bucket, "put", str(GET_KEYS), str(CONC), str(SIZE)], env)
        cpu, out, _ = measured([py, str(CLIENT), endpoint, bucket, "get", str(N), str(CONC), str(SIZE),
                                str(GET_KEYS)], env)
        res = json.loads(out)
        measured([py, str(CLIENT), endpoint, bucket, "cleanup", str(GET_KEYS), str(CONC), str(SIZE)], env)
    if res["errors"]:
        raise RuntimeError(f"boto3 {op}: {res['errors']} errors")
    return cpu, N, res["ops"] / res["elapsed_s"]


def boto3_startup(bin_dir: Path, endpoint: str, env: dict[str, str]) -> float:
    """What the client script costs before its first request: interpreter, boto3, the client, a thread pool."""
    code = ("import sys, os, boto3; from botocore.config import Config; from concurrent.futures import "
            "ThreadPoolExecutor; boto3.client('s3', endpoint_url=sys.argv[1], region_name='us-east-1', "
            "aws_access_key_id=os.environ['CEPHBENCH_S3_ACCESS_KEY'], aws_secret_access_key="
            "os.environ['CEPHBENCH_S3_SECRET_KEY'], config=Config(max_pool_connections=32, s3={'addressing_style':"
            "'path'})); ThreadPoolExecutor(max_workers=32).shutdown()")
    return measured([str(bin_dir / "python"), "-c", code, endpoint], env)[0]


# ---- the null server ------------------------------------------------------------------------------

NULL_ROUNDS = int(os.environ.get("BENCH_LOADGEN_NULL_ROUNDS", "3"))
NULL_CONC = 16
NULL_LOW_S = float(os.environ.get("BENCH_LOADGEN_NULL_LOW_S", "3"))
LOW_N = int(os.environ.get("BENCH_LOADGEN_LOW_OPS", "1000"))   # requests per low-rate run on the lab
OLD = os.environ.get("BENCH_LOADGEN_OLD", "")
_MEMSTATS = re.compile(r"memstats mallocs=(\d+)")


def proc_cpu_s(pid: int) -> float:
    """User + system CPU seconds of a running process."""
    fields = Path(f"/proc/{pid}/stat").read_text().rsplit(")", 1)[1].split()
    return (int(fields[11]) + int(fields[12])) / os.sysconf("SC_CLK_TCK")


def null_run(binary: str, addr: str, op: str, server_pid: int, conc: int = NULL_CONC,
             seconds: float = NULL_S) -> dict[str, float]:
    """One loadgen run on core 0 against the null server: ops/s, client CPU and allocations per request, and the
    null server's CPU per request."""
    env = {"CEPHBENCH_S3_ACCESS_KEY": "null", "CEPHBENCH_S3_SECRET_KEY": "null", "GOMAXPROCS": "1",
           "CEPHBENCH_LOADGEN_MEMSTATS": "1"}
    with tempfile.TemporaryDirectory() as d:
        out = Path(d) / "r.json"
        argv = ["taskset", "-c", "0", binary, "run", "--protocol", "s3", "--endpoint", f"http://{addr}",
                "--workload", op, "--object-size", str(SIZE), "--concurrency", str(conc), "--objects", "1000",
                "--bucket-prefix", f"bench-null-{op}-", "--duration", f"{seconds:g}s", "--output", str(out)]
        srv0 = proc_cpu_s(server_pid)
        cpu, err, wait, wall = measured_waits(argv, env)
        srv = proc_cpu_s(server_pid) - srv0
        doc = json.loads(out.read_text())
    requests = doc["total"]["ops"] + (doc["prefill"] or {}).get("objects", 0) + doc["cleanup"]["objects_deleted"] \
        + 2 * len(doc["cleanup"]["buckets_deleted"])
    m = _MEMSTATS.search(err)
    return {"ops_s": doc["total"]["ops_per_s"], "cpu_us": cpu / requests * 1e6,
            "allocs": int(m.group(1)) / requests if m else float("nan"), "server_us": srv / requests * 1e6,
            "requests": requests, "cpu_frac": cpu / wall, "runq_frac": wait / wall}


def null_server_runs() -> dict[str, float]:
    """NULL_ROUNDS rounds of PUT and GET; old and new alternate when BENCH_LOADGEN_OLD is set."""
    binaries = {"new": str(LOADGEN)} | ({"old": OLD} if OLD else {})
    floor = ensure_floor()
    runs: dict[tuple[str, str], list[dict[str, float]]] = {}
    srv = subprocess.Popen(["taskset", "-c", "1", str(NULLSERVER), "--listen", "127.0.0.1:0", "--get-size",
                            str(SIZE)], stdout=subprocess.PIPE, text=True)
    load = [os.getloadavg()[0]]
    try:
        addr = srv.stdout.readline().strip()
        host, port = addr.rsplit(":", 1)

        def loadgen_runs(name: str) -> None:
            for op in ("put", "get"):
                r = null_run(binaries[name], addr, op, srv.pid)
                runs.setdefault((name, op), []).append(r)
                print(f"  null {name:<3} {op}: {r['ops_s']:8.0f} ops/s  {r['cpu_us']:6.1f} us CPU/op  "
                      f"{r['allocs']:5.2f} allocs/op  server {r['server_us']:5.1f} us/req  on core 0 "
                      f"{r['cpu_frac']:4.2f}, waiting for it {r['runq_frac']:4.2f} of the time", flush=True)
            for op in ("put", "get"):
                r = null_run(binaries[name], addr, op, srv.pid, conc=1, seconds=NULL_LOW_S)
                runs.setdefault((name, f"{op}_c1"), []).append(r)
                print(f"  null {name:<3} {op} 1 in flight: {r['ops_s']:8.0f} ops/s  {r['cpu_us']:6.1f} us CPU/op",
                      flush=True)

        def floor_runs() -> None:
            for op in ("put", "get"):
                for conc, seconds, key in ((NULL_CONC, NULL_S, op), (1, NULL_LOW_S, f"{op}_c1")):
                    cpu, answers, rate = run_floor(floor, host, int(port), op.upper(), f"/bench-null-floor/{op}",
                                                   conc, seconds, pin=["taskset", "-c", "0"])
                    runs.setdefault(("floor", key), []).append({"cpu_us": cpu / answers * 1e6, "ops_s": rate})
                    print(f"  null floor {key}: {rate:8.0f} ops/s  {cpu / answers * 1e6:6.1f} us CPU/op", flush=True)

        for rnd in range(NULL_ROUNDS):
            # A B in even rounds, B A in odd ones: the loadgen binaries, and the floor after or before them
            steps = [lambda name=name: loadgen_runs(name) for name in binaries] + [floor_runs]
            for step in (steps if rnd % 2 == 0 else steps[::-1]):
                step()
    finally:
        srv.terminate()
        srv.wait(timeout=10)
    load.append(os.getloadavg()[0])

    def med(name: str, op: str, key: str) -> float:
        return statistics.median(r[key] for r in runs[(name, op)])

    def spread(name: str, op: str, key: str) -> tuple[float, float]:
        xs = [r[key] for r in runs[(name, op)]]
        return min(xs), max(xs)

    out: dict[str, float] = {}
    for op in ("put", "get"):
        out[f"{op}_ops_s"] = med("new", op, "ops_s")
        # the share of the run the client ran on core 0, and waited for it (runnable, the neighbours on it)
        out[f"{op}_cpu_frac"] = med("new", op, "cpu_frac")
        out[f"{op}_runq_frac"] = med("new", op, "runq_frac")
        if OLD:
            out[f"old_{op}_cpu_frac"] = med("old", op, "cpu_frac")
            out[f"old_{op}_runq_frac"] = med("old", op, "runq_frac")
    every = runs[("new", "put")] + runs[("new", "get")]
    out["allocs_per_op"] = statistics.median(r["allocs"] for r in every)
    out["cpu_us_per_op"] = statistics.median(r["cpu_us"] for r in every)
    for op in ("put", "get"):
        lo, hi = spread("new", op, "ops_s")
        out[f"{op}_ops_s_min"], out[f"{op}_ops_s_max"] = lo, hi
        out[f"{op}_cpu_us_per_op"] = med("new", op, "cpu_us")
        lo, hi = spread("new", op, "cpu_us")
        out[f"{op}_cpu_us_min"], out[f"{op}_cpu_us_max"] = lo, hi
        out[f"{op}_allocs_per_op"] = med("new", op, "allocs")
        # What one whole core would do at this CPU per op: the figure the neighbours disturb least.
        out[f"{op}_ops_per_cpu_s"] = 1e6 / out[f"{op}_cpu_us_per_op"]
        out[f"null_server_{op}_us_per_req"] = med("new", op, "server_us")
        if OLD:
            out[f"old_{op}_ops_s"] = med("old", op, "ops_s")
            out[f"old_{op}_cpu_us_per_op"] = med("old", op, "cpu_us")
            out[f"ratio_{op}_ops_s_new_old"] = out[f"{op}_ops_s"] / out[f"old_{op}_ops_s"]
            out[f"ratio_{op}_cpu_old_new"] = out[f"old_{op}_cpu_us_per_op"] / out[f"{op}_cpu_us_per_op"]
    for op in ("put", "get"):
        out[f"{op}_c1_cpu_us_per_op"] = med("new", f"{op}_c1", "cpu_us")
        lo, hi = spread("new", f"{op}_c1", "cpu_us")
        out[f"{op}_c1_cpu_us_min"], out[f"{op}_c1_cpu_us_max"] = lo, hi
        if OLD:
            out[f"old_{op}_c1_cpu_us_per_op"] = med("old", f"{op}_c1", "cpu_us")
            out[f"ratio_{op}_c1_cpu_old_new"] = out[f"old_{op}_c1_cpu_us_per_op"] / out[f"{op}_c1_cpu_us_per_op"]
    # the floor: the least any client pays per request on this kernel, and loadgen's CPU over it
    for key in ("put", "get", "put_c1", "get_c1"):
        out[f"floor_{key}_cpu_us_per_op"] = med("floor", key, "cpu_us")
        lo, hi = spread("floor", key, "cpu_us")
        out[f"floor_{key}_cpu_us_min"], out[f"floor_{key}_cpu_us_max"] = lo, hi
        out[f"floor_{key}_ops_per_cpu_s"] = 1e6 / out[f"floor_{key}_cpu_us_per_op"]
        out[f"loadgen_over_floor_{key}"] = med("new", key, "cpu_us") / out[f"floor_{key}_cpu_us_per_op"]
    out["null_rounds"] = NULL_ROUNDS
    out["load_avg_start"], out["load_avg_end"] = load
    return out


# ---- main -----------------------------------------------------------------------------------------

def main() -> None:
    null = null_server_runs()
    if os.environ.get("BENCH_LOADGEN_SKIP_LAB"):
        result_line("loadgen", **null)
        return
    lab_figures = lab_runs()
    # loadgen's CPU per op on the lab's RGW over its CPU per op against the null server: at full speed (32 in
    # flight on the lab, 16 against the null server) and with 1 in flight on both.
    for op in ("put", "get"):
        lab_figures[f"rgw_over_null_{op}"] = lab_figures[f"loadgen_s3_{op}_cpu_s_per_1k"] * 1000 / null[f"{op}_cpu_us_per_op"]
        lab_figures[f"rgw_over_null_{op}_c1"] = (lab_figures[f"loadgen_s3_c1_{op}_cpu_s_per_1k"] * 1000
                                                 / null[f"{op}_c1_cpu_us_per_op"])
        # the same for the floor: what the kernel alone pays more per request for a real answer (its wake-ups)
        lab_figures[f"floor_rgw_over_null_{op}"] = (lab_figures[f"floor_swift_{op}_cpu_s_per_1k"] * 1000
                                                    / null[f"floor_{op}_cpu_us_per_op"])
        lab_figures[f"floor_rgw_over_null_{op}_c1"] = (lab_figures[f"floor_swift_c1_{op}_cpu_s_per_1k"] * 1000
                                                       / null[f"floor_{op}_c1_cpu_us_per_op"])
    result_line("loadgen", **null, **lab_figures)


def lab_runs() -> dict[str, object]:
    bin_dir = ensure_venv()
    floor = ensure_floor()
    with lab() as lb:
        info = lb.info()
        keys = json.loads(info.rgw_credentials_path.read_text())
        ep = info.rgw_endpoint
        s3_env = {"CEPHBENCH_S3_ACCESS_KEY": keys["s3_access_key"], "CEPHBENCH_S3_SECRET_KEY": keys["s3_secret_key"]}
        sw_env = {"CEPHBENCH_SWIFT_USER": keys["swift_user"], "CEPHBENCH_SWIFT_KEY": keys["swift_key"]}
        auth = f"{ep}/auth/v1.0"
        costs: dict[str, list[float]] = {}
        rates: dict[str, list[float]] = {}
        start = {"loadgen": loadgen_startup(s3_env), "swift-bench": swift_bench_startup(bin_dir),
                 "boto3": boto3_startup(bin_dir, ep, s3_env)}
        print("startup CPU-s (taken off every run): " + ", ".join(f"{k} {v:.3f}" for k, v in start.items()),
              flush=True)
        put_cost = {"swift-bench": 0.0, "boto3": 0.0}

        def record(name: str, cost: float, rate: float) -> None:
            costs.setdefault(name, []).append(cost)
            rates.setdefault(name, []).append(rate)
            print(f"  {name:<18} {cost:7.3f} CPU-s/1000 ops  {rate:8.0f} ops/s", flush=True)

        # the floor's container: one object, written and read again and again (`swift auth` prints the storage
        # URL and token as shell exports)
        swift = functools.partial(swift_cli, bin_dir, auth, keys["swift_user"], keys["swift_key"])
        said = dict(re.findall(r"export (OS_STORAGE_URL|OS_AUTH_TOKEN)=(\S+)", swift("auth")))
        name = f"bench-floor-{int(time.time())}"
        container = f"{urllib.parse.urlsplit(said['OS_STORAGE_URL']).path}/{name}"
        swift("post", name)
        host, port = urllib.parse.urlsplit(ep).hostname, urllib.parse.urlsplit(ep).port or 80
        token_header = f"X-Auth-Token: {said['OS_AUTH_TOKEN']}"

        def floor_run(op: str, conc: int, n: int) -> tuple[float, int, float]:
            if op == "get":     # the object it reads, written outside the measurement
                run_floor(floor, host, port, "PUT", f"{container}/obj", 1, 600, 1, token_header)
            return run_floor(floor, host, port, op.upper(), f"{container}/obj", conc, 600, n, token_header)

        clients = ["loadgen-s3", "loadgen-swift", "swift-bench", "boto3", "loadgen-s3-c1", "floor-swift",
                   "floor-swift-c1"]
        if OLD:
            clients += ["loadgen-old-s3", "loadgen-old-s3-c1"]
            start["loadgen-old"] = measured([OLD, "version"], s3_env)[0]
        try:
            for rnd in range(ROUNDS):
                order = clients[rnd % len(clients):] + clients[:rnd % len(clients)]
                print(f"round {rnd + 1}: {', '.join(order)}", flush=True)
                for client in order:
                    for op in ("put", "get"):
                        tag = f"{rnd}-{op}-{int(time.time())}"
                        if client.startswith("loadgen"):
                            old = client.startswith("loadgen-old")
                            proto = client.removeprefix("loadgen-").removeprefix("old-").split("-")[0]
                            low = client.endswith("-c1")
                            cpu, requests, rate = run_loadgen(ep, proto, op, s3_env if proto == "s3" else sw_env,
                                                              f"{proto}-{tag}", binary=OLD if old else None,
                                                              conc=1 if low else CONC, n=LOW_N if low else N)
                            cpu -= start["loadgen-old" if old else "loadgen"]
                        elif client.startswith("floor"):
                            low = client.endswith("-c1")
                            cpu, requests, rate = floor_run(op, 1 if low else CONC, LOW_N if low else N)
                        elif client == "swift-bench":
                            cpu, requests, rate = swift_bench(bin_dir, auth, keys["swift_user"], keys["swift_key"], op,
                                                              tag)
                            cpu -= start["swift-bench"] + (GET_KEYS * put_cost["swift-bench"] if op == "get" else 0)
                        else:
                            cpu, requests, rate = boto3_client(bin_dir, ep, op, s3_env, tag)
                            cpu -= start["boto3"]
                        if op == "put" and client in put_cost:
                            put_cost[client] = cpu / requests
                        cost = per_1k(cpu, requests)
                        record(f"{client}-{op}", cost, rate)
        finally:
            swift("delete", name)       # its object, then it

    med = {k: statistics.median(v) for k, v in costs.items()}
    rate = {k: statistics.median(v) for k, v in rates.items()}
    figures: dict[str, object] = {}
    for k in sorted(med):
        figures[f"{k.replace('-', '_')}_cpu_s_per_1k"] = med[k]
    for op in ("put", "get"):
        figures[f"ratio_swiftbench_{op}"] = med[f"swift-bench-{op}"] / med[f"loadgen-swift-{op}"]
        figures[f"ratio_boto3_{op}"] = med[f"boto3-{op}"] / med[f"loadgen-s3-{op}"]
        # the same against the round's lowest and highest loadgen figure: the noise of the ratio
        figures[f"ratio_swiftbench_{op}_min"] = min(costs[f"swift-bench-{op}"]) / max(costs[f"loadgen-swift-{op}"])
        figures[f"ratio_boto3_{op}_min"] = min(costs[f"boto3-{op}"]) / max(costs[f"loadgen-s3-{op}"])
        # the largest ratios any client could reach (the floor's), and loadgen's CPU per request over the floor's
        figures[f"ratio_floor_swiftbench_{op}"] = med[f"swift-bench-{op}"] / med[f"floor-swift-{op}"]
        figures[f"ratio_floor_boto3_{op}"] = med[f"boto3-{op}"] / med[f"floor-swift-{op}"]
        # over every pairing of rounds: the most a client at the floor could have been shown to reach by the noise
        figures[f"ratio_floor_swiftbench_{op}_max"] = max(costs[f"swift-bench-{op}"]) / min(costs[f"floor-swift-{op}"])
        figures[f"ratio_floor_boto3_{op}_max"] = max(costs[f"boto3-{op}"]) / min(costs[f"floor-swift-{op}"])
        figures[f"loadgen_swift_over_floor_{op}"] = med[f"loadgen-swift-{op}"] / med[f"floor-swift-{op}"]
        figures[f"loadgen_s3_over_floor_{op}"] = med[f"loadgen-s3-{op}"] / med[f"floor-swift-{op}"]
        figures[f"loadgen_s3_c1_over_floor_{op}"] = med[f"loadgen-s3-c1-{op}"] / med[f"floor-swift-c1-{op}"]
        if OLD:
            figures[f"ratio_rgw_{op}_cpu_old_new"] = med[f"loadgen-old-s3-{op}"] / med[f"loadgen-s3-{op}"]
            figures[f"ratio_rgw_{op}_c1_cpu_old_new"] = med[f"loadgen-old-s3-c1-{op}"] / med[f"loadgen-s3-c1-{op}"]
    for k in sorted(rate):
        figures[f"{k.replace('-', '_')}_ops_s"] = rate[k]
    figures["rounds"] = ROUNDS
    figures["ops_per_run"] = N
    return figures


if __name__ == "__main__":
    main()
