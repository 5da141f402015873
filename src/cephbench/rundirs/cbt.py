"""`cephbench suite from-cbt`: CBT's radosbench, librbdfio and rawfio benchmarks as a cephbench suite.

CBT (github.com/ceph/cbt) builds or reuses a cluster described under `cluster:` and runs the benchmarks under
`benchmarks:`; a list-valued benchmark key is a sweep there as here. What has a cephbench equivalent is
translated (pool profiles, sizes, concurrency, durations, iterations as `repeat`); every other key becomes one
line saying why it was left out, so nothing is dropped silently. The suite is checked with config.parse_suite
before it is returned. docs/suites.md ("From CBT") lists the mapping.
"""

from __future__ import annotations

import re
from pathlib import Path
from typing import Any

import yaml

from ..suite.config import MAX_SUITE_BYTES, parse_suite, read_yaml
from ..core.errors import UserError
from ..core.userfiles import read_bytes

TRANSLATED = ("radosbench", "librbdfio", "rawfio")
MIB = 1024 * 1024
CEPH_DEFAULT_SIZE = 3          # osd_pool_default_size: a CBT profile without replication gets it
CBT_DEFAULT_PG = 1024          # CBT's mkpool default pg_size

# cluster keys about deploying and watching the cluster CBT builds: cephbench runs against a cluster that exists
_DEPLOY_REASON = "CBT's cluster deployment; cephbench benchmarks the cluster that -c (or --lab) names"


class _Out:
    """The suite being built and the lines for what could not be translated."""

    def __init__(self) -> None:
        self.pools: dict[str, dict[str, Any]] = {}
        self.workloads: list[dict[str, Any]] = []
        self.baseline: dict[str, Any] | None = None
        self.lines: list[str] = []

    def skip(self, where: str, why: str) -> None:
        self.lines.append(f"{where}: {why}")


def _as_list(v: Any) -> list[Any]:
    return v if isinstance(v, list) else [v]


def _one(v: Any) -> Any:
    """A sweep of one value is that value."""
    return v[0] if isinstance(v, list) and len(v) == 1 else v


def _pool(cluster: dict[str, Any], name: str, out: _Out, where: str) -> str:
    """The cephbench pool profile for CBT's pool_profiles[name] (made once); returns its name."""
    if name in out.pools:
        return name
    profiles = cluster.get("pool_profiles") or {}
    prof = profiles.get(name) if isinstance(profiles, dict) else None
    if not isinstance(prof, dict):
        out.skip(where, f"pool profile {name!r} is not in cluster.pool_profiles; translated as replicated size "
                        f"{CEPH_DEFAULT_SIZE}")
        prof = {}
    base = f"cluster.pool_profiles.{name}"
    pg = prof.get("pg_size", CBT_DEFAULT_PG)
    if prof.get("pgp_size", pg) != pg:
        out.skip(f"{base}.pgp_size", "cephbench pools have pgp_num = pg_num")
    replication = str(prof.get("replication", ""))
    if replication == "erasure":
        ec_name = prof.get("erasure_profile")
        ec = (cluster.get("erasure_profiles") or {}).get(ec_name) if ec_name else None
        if not isinstance(ec, dict):
            out.skip(f"{base}.erasure_profile", f"{ec_name!r} is not in cluster.erasure_profiles; translated with "
                                                 "CBT's defaults k=6 m=2")
            ec = {}
        pool: dict[str, Any] = {"type": "erasure", "k": ec.get("erasure_k", 6), "m": ec.get("erasure_m", 2),
                                "pg_num": pg}
        for key in ec:
            if key not in ("erasure_k", "erasure_m"):
                out.skip(f"cluster.erasure_profiles.{ec_name}.{key}", "no cephbench equivalent")
        if prof.get("ec_overwrites"):
            pool["allow_ec_overwrites"] = True
    elif replication.isdigit():
        pool = {"type": "replicated", "size": int(replication), "pg_num": pg}
    else:                            # 'replicated' or absent: the cluster's default size
        pool = {"type": "replicated", "size": CEPH_DEFAULT_SIZE, "pg_num": pg}
    for key in prof:
        if key not in ("pg_size", "pgp_size", "replication", "erasure_profile", "ec_overwrites"):
            out.skip(f"{base}.{key}", "no cephbench equivalent (cache tiers, crush profiles, hit sets)")
    out.pools[name] = pool
    return name


def _repeat(cfg: dict[str, Any], iterations: Any) -> dict[str, Any]:
    n = cfg.get("iterations", iterations)
    return {"repeat": n} if isinstance(n, int) and n > 1 else {}


def _radosbench(cfg: dict[str, Any], cluster: dict[str, Any], iterations: Any, out: _Out) -> None:
    where = "benchmarks.radosbench"
    w: dict[str, Any] = {"name": "radosbench", "type": "rados_bench",
                         "pool": _pool(cluster, str(cfg.get("pool_profile", "default")), out, f"{where}.pool_profile")}
    read_mode = cfg.get("readmode", "seq")
    if read_mode not in ("seq", "rand"):
        out.skip(f"{where}.readmode", f"{read_mode!r} is not seq or rand; seq used")
        read_mode = "seq"
    if cfg.get("read_only"):
        out.skip(f"{where}.read_only", "cephbench reads only what its own write wrote: write then read")
    modes = ["write"] if cfg.get("write_only") else ["write", read_mode]
    w["modes"] = modes
    w["object_size"] = _one(cfg.get("op_size", 4 * MIB))
    w["concurrency"] = _one(cfg.get("concurrent_ops", 16))
    procs = _one(cfg.get("concurrent_procs", 1))
    if procs != 1:
        w["instances"] = procs
        if not cfg.get("pool_per_proc", False):
            out.skip(f"{where}.concurrent_procs", "translated as instances, each writing its own pool (CBT's "
                                                  "pool_per_proc: true); CBT's default shares one pool")
    time_s = cfg.get("time", 300)
    per_mode = {"write": cfg.get("write_time", time_s), read_mode: cfg.get("read_time", time_s)}
    if len({str(per_mode[m]) for m in modes}) > 1:
        w["duration"] = {m: f"{per_mode[m]}s" for m in modes}
    else:
        w["duration"] = [f"{t}s" for t in _as_list(time_s)] if isinstance(time_s, list) else f"{time_s}s"
    w.update(_repeat(cfg, iterations))
    known = {"pool_profile", "readmode", "read_only", "write_only", "op_size", "concurrent_ops", "concurrent_procs",
             "pool_per_proc", "time", "write_time", "read_time", "iterations", "use_existing"}
    for key in cfg:
        if key not in known:
            out.skip(f"{where}.{key}", _WHY.get(key, "no cephbench equivalent"))
    out.workloads.append(w)


_FIO_RW = ("read", "write", "randread", "randwrite", "randrw")
_WHY = {
    "cmd_path": "cephbench runs the rados, rbd and fio it finds on PATH",
    "osd_ra": "cephbench does not change the OSDs' read-ahead",
    "poolname": "cephbench creates its own pools, named cephbench-<run id>-...",
    "target_pool": "cephbench creates its own pools, named cephbench-<run id>-...",
    "rbdname": "cephbench creates its own images",
    "use_existing_volumes": "cephbench creates (and removes) its own images",
    "prefill_time": "cephbench's reads read what the write phase wrote",
    "prefill_objects": "cephbench's reads read what the write phase wrote",
    "max_objects": "cephbench bounds writes by the capacity guard (settings.max_raw_used)",
    "log_avg_msec": "cephbench records per-second figures itself",
    "log_iops": "cephbench records per-second figures itself",
    "log_bw": "cephbench records per-second figures itself",
    "log_lat": "cephbench records per-second figures itself",
    "fio_out_format": "cephbench reads fio's JSON always",
}


def _fio_common(cfg: dict[str, Any], where: str, w: dict[str, Any], out: _Out) -> None:
    """mode, op_size, iodepth, numjobs, rwmixread, time, ramp of a fio benchmark (or one of its workloads)."""
    if "mode" in cfg:
        modes = [m for m in _as_list(cfg["mode"]) if m in _FIO_RW]
        for m in _as_list(cfg["mode"]):
            if m not in _FIO_RW:
                out.skip(f"{where}.mode", f"{m!r} is not one of cephbench's fio_rbd rw values "
                                          f"({', '.join(_FIO_RW)}); left out")
        if modes:
            w["rw"] = _one(modes)
    for cbt_key, key in (("op_size", "block_size"), ("iodepth", "iodepth"), ("numjobs", "numjobs")):
        if cbt_key in cfg:
            w[key] = _one(cfg[cbt_key])
    if "rwmixread" in cfg:
        w["rwmixread"] = cfg["rwmixread"]
    if "time" in cfg:
        w["duration"] = f"{cfg['time']}s" if not isinstance(cfg["time"], list) else [f"{t}s" for t in cfg["time"]]
    if "ramp" in cfg:
        w["ramp"] = f"{cfg['ramp']}s"


def _librbdfio(cfg: dict[str, Any], cluster: dict[str, Any], iterations: Any, out: _Out) -> None:
    where = "benchmarks.librbdfio"
    base: dict[str, Any] = {"type": "fio_rbd",
                            "pool": _pool(cluster, str(cfg.get("pool_profile", "default")), out,
                                          f"{where}.pool_profile")}
    _fio_common(cfg, where, base, out)
    if "vol_size" in cfg:
        base["image_size"] = f"{_one(cfg['vol_size'])}MiB"          # CBT: megabytes, rbd create --size
    if "volumes_per_client" in cfg:
        base["images"] = _one(cfg["volumes_per_client"])
        if isinstance(base["images"], list):
            out.skip(f"{where}.volumes_per_client", "the number of images is not a sweep in cephbench; first used")
            base["images"] = base["images"][0]
    for key in ("procs_per_volume", "procs_per_client"):
        if key in cfg and _one(cfg[key]) != 1:
            out.skip(f"{where}.{key}", "cephbench runs one fio per image; more jobs per image: numjobs")
    base.update(_repeat(cfg, iterations))
    known = {"pool_profile", "mode", "op_size", "iodepth", "numjobs", "rwmixread", "time", "ramp", "vol_size",
             "volumes_per_client", "procs_per_volume", "procs_per_client", "iterations", "workloads", "prefill"}
    for key in cfg:
        if key not in known:
            out.skip(f"{where}.{key}", _WHY.get(key, "no cephbench equivalent"))
    workloads = cfg.get("workloads")
    if not isinstance(workloads, dict) or not workloads:
        out.workloads.append({"name": "librbdfio", **base})
        return
    # CBT runs each of its nested workloads in turn with the benchmark's settings and its own overrides
    for name, sub in workloads.items():
        sub = sub if isinstance(sub, dict) else {}
        if "precond" in str(name):
            out.skip(f"{where}.workloads.{name}", "cephbench prefills every group's images itself (prefill: true)")
            continue
        w = {"name": f"librbdfio-{name}", **base}
        _fio_common(sub, f"{where}.workloads.{name}", w, out)
        for key in sub:
            if key not in ("mode", "op_size", "iodepth", "numjobs", "rwmixread", "time", "ramp", "jobname",
                           "monitor"):
                out.skip(f"{where}.workloads.{name}.{key}", _WHY.get(key, "no cephbench equivalent"))
        out.workloads.append(w)


def _disk_pattern(mode: str, size: int, depth: int) -> str | None:
    """The disk baseline's nearest pattern: sequential 1 or 4 MiB, random 4 KiB at queue depth 1 or 32."""
    if mode in ("write", "read"):
        return f"{mode}-{'1MiB' if size <= 2 * MIB else '4MiB'}"
    if mode in ("randwrite", "randread"):
        return f"{mode}-4KiB-qd{1 if depth < 8 else 32}"
    return None


def _rawfio(cfg: dict[str, Any], out: _Out) -> None:
    where = "benchmarks.rawfio"
    disks: dict[str, Any] = {}
    if cfg.get("use_dir"):
        disks["paths"] = _as_list(cfg.get("client_dir", "/mnt"))
    elif cfg.get("block_devices"):
        disks["paths"] = _as_list(cfg["block_devices"])
        out.skip(f"{where}.block_devices", "raw devices are overwritten only with baseline.disks.allow_raw_device: "
                                           "true; add it if they hold nothing (CBT formatted them)")
    else:
        out.skip(where, "neither block_devices nor use_dir/client_dir: no disk to measure")
        return
    patterns: list[str] = []
    for mode in _as_list(cfg.get("mode", "write")):
        for size in _as_list(cfg.get("op_size", 4 * MIB)):
            for depth in _as_list(cfg.get("iodepth", 16)):
                pat = _disk_pattern(str(mode), int(size), int(depth))
                if pat is None:
                    out.skip(f"{where}.mode", f"{mode!r} has no disk baseline pattern; left out")
                    continue
                exact = {"write-4MiB": (4 * MIB, 16), "write-1MiB": (MIB, 16), "read-4MiB": (4 * MIB, 16),
                         "read-1MiB": (MIB, 16)}.get(pat, (4096, 1 if pat.endswith("qd1") else 32))
                if (int(size), int(depth)) != exact:
                    out.skip(f"{where}.op_size", f"{mode} {size} B at iodepth {depth} is measured as the disk "
                                                 f"baseline's nearest pattern, {pat}")
                if pat not in patterns:
                    patterns.append(pat)
    if patterns:
        disks["patterns"] = ["dd", *patterns] if "dd" not in patterns else patterns
    if "time" in cfg:
        disks["runtime"] = f"{cfg['time']}s"
    if "vol_size" in cfg:
        disks["size"] = f"{cfg['vol_size']}MiB"
    known = {"use_dir", "client_dir", "block_devices", "mode", "op_size", "iodepth", "time", "vol_size",
             "iterations", "ioengine", "direct"}
    for key in cfg:
        if key not in known:
            out.skip(f"{where}.{key}", _WHY.get(key, "no cephbench equivalent (the disk baseline runs fio "
                                                     "direct=1 libaio on a test file)"))
    if cfg.get("ioengine", "libaio") != "libaio" or cfg.get("direct", 1) != 1:
        out.skip(f"{where}.ioengine", "the disk baseline always runs fio libaio with direct=1")
    out.baseline = {"disks": disks}


def translate(doc: Any, source: str) -> tuple[dict[str, Any], list[str]]:
    """CBT YAML data -> (suite data, one line per key not translated). UserError when it has no benchmarks."""
    if not isinstance(doc, dict) or not isinstance(doc.get("benchmarks"), dict) or not doc["benchmarks"]:
        raise UserError("not a CBT configuration: no benchmarks block",
                        "give a CBT YAML with benchmarks: radosbench, librbdfio or rawfio", where=source)
    cluster = doc.get("cluster") if isinstance(doc.get("cluster"), dict) else {}
    benchmarks = doc["benchmarks"]
    if not any(name in benchmarks for name in TRANSLATED):
        raise UserError(f"no radosbench, librbdfio or rawfio benchmark to translate (it has "
                        f"{', '.join(map(str, benchmarks))})", "cephbench translates those three", where=source)
    out = _Out()
    iterations = cluster.get("iterations")
    for name, cfg in benchmarks.items():
        if not isinstance(cfg, dict):
            out.skip(f"benchmarks.{name}", "not a mapping of settings")
        elif name == "radosbench":
            _radosbench(cfg, cluster, iterations, out)
        elif name == "librbdfio":
            _librbdfio(cfg, cluster, iterations, out)
        elif name == "rawfio":
            _rawfio(cfg, out)
        else:
            out.skip(f"benchmarks.{name}", f"cephbench translates only {', '.join(TRANSLATED)}")
    for key in cluster:
        if key in ("iterations", "pool_profiles", "erasure_profiles"):
            continue
        if key == "use_existing" and cluster[key]:
            continue
        out.skip(f"cluster.{key}", _DEPLOY_REASON)
    for key in doc:
        if key not in ("cluster", "benchmarks"):
            out.skip(key, "no cephbench equivalent (cephbench watches CPU and the cluster itself)"
                          if key == "monitoring_profiles" else "no cephbench equivalent")
    if not out.workloads:
        out.workloads.append({"type": "osd_bench"})
        out.skip("benchmarks", "a suite needs a workload besides its baseline: osd_bench (ceph tell osd.N bench) "
                               "added, the figure the disk baseline is compared with")
    stem = re.sub(r"[^A-Za-z0-9_.-]+", "-", Path(source).stem).strip("-.") or "suite"
    suite: dict[str, Any] = {"name": f"cbt-{stem}"[:64], "description": f"translated from CBT {Path(source).name}"}
    if out.pools:
        suite["pools"] = out.pools
    if out.baseline:
        suite["baseline"] = out.baseline
    suite["workloads"] = out.workloads
    return suite, out.lines


def to_yaml(suite: dict[str, Any], lines: list[str], source: str) -> str:
    head = [f"# cephbench suite translated from the CBT configuration {source}",
            "# (cephbench suite from-cbt; docs/suites.md, 'From CBT')"]
    if lines:
        head.append("# not translated:")
        head += [f"#   {ln}" for ln in lines]
    return "\n".join(head) + "\n" + yaml.safe_dump(suite, sort_keys=False, default_flow_style=None, width=100)


def translate_file(path: Path) -> tuple[str, list[str]]:
    """A CBT YAML file -> (suite YAML text, lines for what was not translated); the suite is validated first."""
    source = str(path)
    data = read_bytes(Path(path), "", "give the path of a CBT YAML file", MAX_SUITE_BYTES, where="CBT.yaml")
    try:
        text = data.decode("utf-8")
    except UnicodeDecodeError as exc:
        raise UserError(f"not UTF-8 text (byte {exc.start})", "give a CBT YAML file", where=source) from None
    doc = read_yaml(text, source)
    suite, lines = translate(doc, source)
    out = to_yaml(suite, lines, source)
    # the text we print is what is checked: a value CBT takes and cephbench refuses is one line naming it
    parse_suite(read_yaml(out, f"{source} (translated)"), f"{source} (translated)")
    return out, lines
