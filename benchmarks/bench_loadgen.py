"""What does cephbench-loadgen cost the client, next to swift-bench and a boto3 thread pool?

Against the lab's RGW, 4 KiB PUT and GET at 32 in flight, ROUNDS rounds alternating the clients (the order
rotates each round): cephbench-loadgen over S3 and Swift, swift-bench (Swift) and a boto3 thread-pool client
(S3, benchmarks/s3_threadpool_client.py). swift-bench and boto3 are installed at benchmark time into their own
venv (build/bench-venv), never into cephbench's. Client CPU is the user + system time of the client process from
os.wait4's rusage, per request it sent (loadgen: measured ops + prefill + cleanup deletes; swift-bench: its PUTs,
GETs; boto3: its calls), less the CPU of the same program starting and exiting without load (interpreter,
imports, client set-up), so that a longer run would not change the figure. Then loadgen alone against
cephbench-nullserver with loadgen on one core (taskset -c 0, GOMAXPROCS=1) and the server on another, 10 s.

Goal: >= 5x fewer client CPU-seconds per op than swift-bench and boto3; >= 20,000 ops/s against the null server.
RESULT: CPU-s per 1000 ops (medians), the ratios (other / loadgen, same operation), ops/s.
"""

from __future__ import annotations

import json
import os
import re
import statistics
import subprocess
import sys
import tempfile
import time
from pathlib import Path

from common import lab, result_line

REPO = Path(__file__).resolve().parent.parent
LOADGEN = REPO / "build" / "bin" / "cephbench-loadgen"
NULLSERVER = REPO / "build" / "bin" / "cephbench-nullserver"
VENV = REPO / "build" / "bench-venv"
PINS = ["swift-bench==2.0.0", "python-swiftclient==4.11.0", "boto3==1.44.5"]
CLIENT = Path(__file__).resolve().parent / "s3_threadpool_client.py"
ROUNDS = int(os.environ.get("BENCH_LOADGEN_ROUNDS", "3"))
N = int(os.environ.get("BENCH_LOADGEN_OPS", "3000"))    # measured requests per run
GET_KEYS = 100                                          # objects a GET run reads (written first)
CONC = 32
SIZE = 4096
NULL_S = 10


def ensure_venv() -> Path:
    stamp = VENV / ".pins"
    if not (stamp.is_file() and stamp.read_text() == " ".join(PINS)):
        if not (VENV / "bin" / "python").exists():
            subprocess.run([sys.executable, "-m", "venv", str(VENV)], check=True)
        subprocess.run([str(VENV / "bin" / "pip"), "install", "-q", "--disable-pip-version-check", *PINS], check=True)
        stamp.write_text(" ".join(PINS))
    return VENV / "bin"


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


def per_1k(cpu: float, requests: float) -> float:
    return cpu / requests * 1000


# ---- the clients ---------------------------------------------------------------------------------

def run_loadgen(endpoint: str, proto: str, op: str, env: dict[str, str], tag: str,
                pin: list[str] | None = None, extra_env: dict[str, str] | None = None,
                duration_s: float | None = None) -> tuple[float, int, float]:
    """(client CPU-s, requests sent, ops/s of the measured phase)."""
    with tempfile.TemporaryDirectory() as d:
        out = Path(d) / "r.json"
        argv = [*(pin or []), str(LOADGEN), "run", "--protocol", proto, "--endpoint", endpoint, "--workload", op,
                "--object-size", str(SIZE), "--concurrency", str(CONC), "--bucket-prefix", f"bench-lg-{tag}-",
                "--objects", str(N if op == "put" else GET_KEYS), "--output", str(out)]
        argv += ["--duration", f"{duration_s:g}s"] if duration_s else ["--ops", str(N)]
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
        gone = subprocess.run([str(bin_dir / "swift"), "delete", container], capture_output=True, text=True,
                              timeout=600, env={**os.environ, "ST_AUTH": auth, "ST_USER": user, "ST_KEY": key})
        if gone.returncode != 0:
            raise RuntimeError(f"swift delete {container} failed: {gone.stderr.strip()[-300:]}")
    kind = "PUTS" if op == "put" else "GETS"
    if kind not in finals or finals[kind][1]:
        raise RuntimeError(f"swift-bench {op}: no clean FINAL line ({finals}): {err.strip()[-300:]}")
    return cpu, N, finals[kind][2]


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

def null_server_runs() -> dict[str, float]:
    out: dict[str, float] = {}
    srv = subprocess.Popen(["taskset", "-c", "1", str(NULLSERVER), "--listen", "127.0.0.1:0", "--get-size",
                            str(SIZE)], stdout=subprocess.PIPE, text=True)
    try:
        addr = srv.stdout.readline().strip()
        env = {"CEPHBENCH_S3_ACCESS_KEY": "null", "CEPHBENCH_S3_SECRET_KEY": "null", "GOMAXPROCS": "1"}
        for op in ("put", "get"):
            cpu, requests, ops_s = run_loadgen(f"http://{addr}", "s3", op, env, f"null-{op}",
                                               pin=["taskset", "-c", "0"], duration_s=NULL_S)
            out[f"null_{op}_ops_s"] = ops_s
            out[f"null_{op}_cpu_s_per_1k"] = per_1k(cpu, requests)
    finally:
        srv.terminate()
        srv.wait(timeout=10)
    return out


# ---- main -----------------------------------------------------------------------------------------

def main() -> None:
    bin_dir = ensure_venv()
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

        clients = ["loadgen-s3", "loadgen-swift", "swift-bench", "boto3"]
        for rnd in range(ROUNDS):
            order = clients[rnd % len(clients):] + clients[:rnd % len(clients)]
            print(f"round {rnd + 1}: {', '.join(order)}", flush=True)
            for client in order:
                for op in ("put", "get"):
                    tag = f"{rnd}-{op}-{int(time.time())}"
                    if client.startswith("loadgen"):
                        proto = client.split("-")[1]
                        cpu, requests, rate = run_loadgen(ep, proto, op, s3_env if proto == "s3" else sw_env,
                                                          f"{proto}-{tag}")
                        cpu -= start["loadgen"]
                    elif client == "swift-bench":
                        cpu, requests, rate = swift_bench(bin_dir, auth, keys["swift_user"], keys["swift_key"], op, tag)
                        cpu -= start["swift-bench"] + (GET_KEYS * put_cost["swift-bench"] if op == "get" else 0)
                    else:
                        cpu, requests, rate = boto3_client(bin_dir, ep, op, s3_env, tag)
                        cpu -= start["boto3"]
                    if op == "put" and client in put_cost:
                        put_cost[client] = cpu / requests
                    cost = per_1k(cpu, requests)
                    record(f"{client}-{op}", cost, rate)
    null = null_server_runs()
    print(f"null server: {null}", flush=True)

    med = {k: statistics.median(v) for k, v in costs.items()}
    rate = {k: statistics.median(v) for k, v in rates.items()}
    figures: dict[str, object] = {}
    for k in sorted(med):
        figures[f"{k.replace('-', '_')}_cpu_s_per_1k"] = med[k]
    for op in ("put", "get"):
        figures[f"ratio_swiftbench_{op}"] = med[f"swift-bench-{op}"] / med[f"loadgen-swift-{op}"]
        figures[f"ratio_boto3_{op}"] = med[f"boto3-{op}"] / med[f"loadgen-s3-{op}"]
    for k in sorted(rate):
        figures[f"{k.replace('-', '_')}_ops_s"] = rate[k]
    figures.update(null)
    figures["rounds"] = ROUNDS
    figures["ops_per_run"] = N
    result_line("loadgen", **figures)


if __name__ == "__main__":
    main()
