"""How fast each release gives back a removed pool's raw space (issue 36: what the estimate's capacity cut counts,
suite/plan.py FREE_BYTES_PER_S).

For each release (Pacific: the host's Ceph; Reef and Tentacle: their roots, `cephbench lab roots`): a one-host lab of
3 OSDs of 4 GiB, the seed suites' lab; a pool of 3 copies filled by `rados bench write --no-cleanup` (4 MiB objects,
16 in flight, 12 s: a few GiB of raw space, what one group of a seed suite leaves); `ceph df` read until it has
counted the write (raw used steady for 3 s); the pool removed; then `ceph df` read every 0.25 s until raw used is
back within 2 % of what it was before the write (at most 180 s). Prints, per release, the bytes freed, the seconds
to half and to 90 % of them, and the rate (90 % of the bytes over the seconds to it), then one RESULT line each.
CEPHBENCH_BENCH_RELEASES=reef,tentacle picks.
"""

from __future__ import annotations

import json
import shutil
import subprocess
import sys
import tempfile
import time
from pathlib import Path

from common import each_release, result_line

CLI = [sys.executable, "-m", "cephbench.cli"]
GiB = 2**30


def raw_used(env: dict[str, str]) -> int:
    out = subprocess.run(["ceph", "df", "--format", "json"], env=env, capture_output=True, text=True, timeout=30,
                         check=True).stdout
    return int(json.loads(out)["stats"]["total_used_raw_bytes"])


def steady(env: dict[str, str], quiet_s: float = 3.0, limit_s: float = 60.0) -> int:
    """Raw used once it has not moved for `quiet_s` (the mgr counts writes in lumps)."""
    last, since, end = raw_used(env), time.monotonic(), time.monotonic() + limit_s
    while time.monotonic() < end:
        time.sleep(0.5)
        now = raw_used(env)
        if now != last:
            last, since = now, time.monotonic()
        elif time.monotonic() - since >= quiet_s:
            break
    return last


def one(release: str, base_env: dict[str, str]) -> dict | None:
    d = Path(tempfile.mkdtemp(prefix=f"cephbench-bench-free-{release}-"))
    lab_dir = d / "lab"
    try:
        up = subprocess.run([*CLI, "lab", "up", "--dir", str(lab_dir), "--osd-size", "4GiB", "--no-rgw",
                             *(["--release", release] if release != "pacific" else [])], env=base_env,
                            capture_output=True, text=True)
        if up.returncode != 0:
            print(f"{release}: lab up failed, skipped: {up.stderr.strip().splitlines()[-1:]}", flush=True)
            return None
        env = {**base_env, "CEPH_CONF": str(lab_dir / "ceph.conf"),
               "CEPH_KEYRING": str(lab_dir / "keyring" / "ceph.client.admin.keyring")}
        ceph = ["ceph", "--conf", env["CEPH_CONF"], "--keyring", env["CEPH_KEYRING"]]
        subprocess.run([*ceph, "config", "set", "mon", "mon_allow_pool_delete", "true"], env=env, check=True,
                       capture_output=True)
        subprocess.run([*ceph, "osd", "pool", "create", "free-bench", "32", "32"], env=env, check=True,
                       capture_output=True)
        subprocess.run([*ceph, "osd", "pool", "set", "free-bench", "size", "3"], env=env, check=True,
                       capture_output=True)
        before = steady(env)
        subprocess.run(["rados", "--conf", env["CEPH_CONF"], "--keyring", env["CEPH_KEYRING"], "-p", "free-bench",
                        "bench", "12", "write", "-b", str(4 << 20), "-t", "16", "--no-cleanup"], env=env, check=True,
                       capture_output=True)
        full = steady(env)
        written = full - before
        subprocess.run([*ceph, "osd", "pool", "rm", "free-bench", "free-bench", "--yes-i-really-really-mean-it"],
                       env=env, check=True, capture_output=True)
        t0 = time.monotonic()
        half = ninety = None
        back = None
        while time.monotonic() - t0 < 180:
            now = raw_used(env)
            freed = full - now
            s = time.monotonic() - t0
            if half is None and freed >= 0.5 * written:
                half = s
            if ninety is None and freed >= 0.9 * written:
                ninety = s
            if now <= before + 0.02 * written:
                back = s
                break
            time.sleep(0.25)
        return {"release": release, "written": written, "half_s": half, "ninety_s": ninety, "back_s": back,
                "rate": 0.9 * written / ninety if ninety else None}
    finally:
        subprocess.run([*CLI, "lab", "down", "--dir", str(lab_dir)], env=base_env, capture_output=True)
        shutil.rmtree(d, ignore_errors=True)


def main() -> None:
    done = each_release(one)
    for x in done:
        fmt = lambda v: "-" if v is None else f"{v:.2f}"      # noqa: E731
        print(f"{x['release']}: {x['written'] / GiB:.2f} GiB raw written; freed half in {fmt(x['half_s'])} s, 90 % in "
              f"{fmt(x['ninety_s'])} s, all in {fmt(x['back_s'])} s: "
              + (f"{x['rate'] / GiB:.2f} GiB/s" if x["rate"] else "not freed in 180 s"), flush=True)
    for x in done:
        result_line("freeing", release=x["release"], written_gib=round(x["written"] / GiB, 2),
                    half_s=x["half_s"], ninety_s=x["ninety_s"], back_s=x["back_s"],
                    gib_per_s=round(x["rate"] / GiB, 3) if x["rate"] else None)
