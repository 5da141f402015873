"""Lab shapes as data, before any lab is touched: a variant's `lab:` key read with `lab up`'s own parsers, the
build it describes, which change takes the lab from one build to the next (nothing, `lab throttle`, or a rebuild),
and the order a suite's variants run in so that the lab is rebuilt as seldom as possible.

Everything here is pure: run/shapes.py rebuilds and throttles the lab.
"""

from __future__ import annotations

import json
from dataclasses import dataclass, replace
from typing import TYPE_CHECKING, Any, Sequence

from ..core.errors import UserError
from ..core.units import exact_size

# The lab's parsers and types are imported by the functions that use them: a suite without lab shapes (most, and
# every `validate` of one) needs none of the lab's modules
if TYPE_CHECKING:
    from ..lab.multihost import MultiHostSpec
    from ..lab.rates import LinkShape
    from ..lab.throttle import DriveLimit, DriveRef, ThrottleSpec

DEFAULT_OSDS = 3                    # `lab up`'s defaults, which a shape's missing keys take
DEFAULT_OSD_SIZE = 10 * 1024**3
# a suite's lab-shape key -> the `lab up` flag it stands for (the errors of those parsers name the flag)
SHAPE_FLAGS = {"hosts": "--hosts", "osds_per_host": "--osds-per-host", "clients": "--clients",
               "public_net": "--public-net", "cluster_net": "--cluster-net", "client_net": "--client-net",
               "osd_throttle": "--osd-throttle", "db_device": "--db-device", "objectstore": "--objectstore",
               "fs": "--fs", "osds": "--osds", "osd_size": "--osd-size", "rgw": "--no-rgw", "release": "--release",
               "cpu_limit": "--cpu-limit", "host_load": "--host-load"}
_KEY_OF_FLAG = {flag: key for key, flag in SHAPE_FLAGS.items()}


@dataclass(frozen=True)
class LabBuild:
    """One lab as `lab up` would start it: the one-host lab (multi None) or a multi-host one, with its throttles,
    on a Ceph release ('': the one the lab as found runs, Keeper.for_run)."""

    multi: MultiHostSpec | None
    osds: int = DEFAULT_OSDS
    osd_size_bytes: int = DEFAULT_OSD_SIZE
    rgw: bool = True
    release: str = ""

    @property
    def throttles(self) -> dict[DriveRef, DriveLimit]:
        return {t.drive: t.limit for t in self.multi.throttles} if self.multi else {}

    def bare(self) -> "LabBuild":
        """The build without its throttles: what only a rebuild changes."""
        return replace(self, multi=replace(self.multi, throttles=())) if self.multi else self

    def key(self) -> str:
        """Two builds with the same key differ at most in their throttles (`lab throttle`, no rebuild)."""
        return json.dumps(self.bare().to_json(), sort_keys=True)

    def with_throttles(self, throttles: dict[DriveRef, DriveLimit]) -> "LabBuild":
        from ..lab.throttle import ThrottleSpec
        if self.multi is None:
            return self
        return replace(self, multi=replace(self.multi, throttles=tuple(
            ThrottleSpec(ref, lim) for ref, lim in sorted(throttles.items()))))

    def to_json(self) -> dict[str, Any]:
        m = self.multi
        multi = None if m is None else {
            "hosts": m.hosts, "osds_per_host": m.osds_per_host, "clients": m.clients,
            "public": m.public.to_json() if m.public else None, "cluster": m.cluster.to_json() if m.cluster else None,
            "separate_cluster": m.separate_cluster, "client": m.client.to_json() if m.client else None,
            "objectstore": m.store.objectstore, "fs": m.store.fs, "db_device_bytes": m.db_size_bytes,
            "throttles": {str(t.drive): t.limit.to_json() for t in m.throttles},
            **({"cpu_limits": {c.daemon: c.cores for c in m.cpu_limits}} if m.cpu_limits else {}),
            **({"host_loads": {h.host: h.cores for h in m.host_loads}} if m.host_loads else {})}
        return {"osds": self.osds, "osd_size_bytes": self.osd_size_bytes, "rgw": self.rgw, "multi": multi,
                **({"release": self.release} if self.release else {})}

    @classmethod
    def from_json(cls, d: dict[str, Any]) -> "LabBuild":
        from ..lab.cpulimit import CpuLimitSpec, HostLoadSpec
        from ..lab.drives import check_objectstore
        from ..lab.multihost import MultiHostSpec
        from ..lab.rates import LinkShape
        from ..lab.throttle import DriveLimit, ThrottleSpec
        m = d.get("multi")
        release = str(d.get("release") or "")
        if m is None:
            return cls(None, int(d["osds"]), int(d["osd_size_bytes"]), bool(d["rgw"]), release)
        link = lambda x: LinkShape.from_json(x) if x else None      # noqa: E731
        spec = MultiHostSpec(
            int(m["hosts"]), int(m["osds_per_host"]), int(m["clients"]), link(m.get("public")),
            link(m.get("cluster")), bool(m.get("separate_cluster")), link(m.get("client")),
            check_objectstore(m.get("objectstore") or "bluestore", m.get("fs")), m.get("db_device_bytes"),
            tuple(ThrottleSpec(_ref(name), DriveLimit.from_json(lim))
                  for name, lim in sorted((m.get("throttles") or {}).items())),
            tuple(CpuLimitSpec(d, float(c)) for d, c in sorted((m.get("cpu_limits") or {}).items())),
            tuple(HostLoadSpec(h, float(c)) for h, c in sorted((m.get("host_loads") or {}).items())))
        return cls(spec, spec.osds, int(d["osd_size_bytes"]), bool(d["rgw"]), release)

    def up_flags(self) -> list[str]:
        """The `cephbench lab up` flags that start this build."""
        out = ["--osd-size", _size(self.osd_size_bytes)] if self.osd_size_bytes != DEFAULT_OSD_SIZE else []
        out += [] if self.rgw else ["--no-rgw"]
        out += ["--release", self.release] if self.release else []
        m = self.multi
        if m is None:
            return ["--osds", str(self.osds), *out]
        out += ["--hosts", str(m.hosts)]
        out += ["--osds-per-host", str(m.osds_per_host)] if m.osds_per_host != 1 else []
        out += ["--clients", str(m.clients)] if m.clients else []
        out += ["--public-net", _link_flag(m.public)] if m.public else []
        out += ["--cluster-net", _link_flag(m.cluster)] if m.cluster else (
            ["--cluster-net", "unshaped"] if m.separate_cluster else [])
        out += ["--client-net", _link_flag(m.client)] if m.client else []
        out += ["--objectstore", m.store.objectstore] if m.store.objectstore != "bluestore" else []
        out += ["--fs", m.store.fs] if m.store.fs else []
        out += ["--db-device", _size(m.db_size_bytes)] if m.db_size_bytes else []
        out += [x for t in m.throttles for x in ("--osd-throttle", throttle_text(t))]
        out += [x for c in m.cpu_limits for x in ("--cpu-limit", c.text())]
        out += [x for h in m.host_loads for x in ("--host-load", h.text())]
        return out


def on_release(build: LabBuild | None, release: str) -> LabBuild | None:
    """A variant's build on the lab as found: a shape that names no release keeps the lab's `release`, so that a
    rebuild does not bring back the host's own Ceph under a lab of another release."""
    return replace(build, release=release) if build is not None and not build.release else build


def _size(n: int) -> str:
    """Exact (a flag must give back the very same bytes)."""
    return exact_size(n, byte_unit="")


def _link_flag(shape: LinkShape) -> str:
    rate = next((f"{shape.rate_bits_per_s // f}{u}" for u, f in (("gbit", 10**9), ("mbit", 10**6), ("kbit", 10**3))
                 if shape.rate_bits_per_s % f == 0), f"{shape.rate_bits_per_s}bit")
    return rate + (f"/{shape.delay_s * 1e6:g}us" if shape.delay_s else "")


def throttle_text(t: ThrottleSpec) -> str:
    """`osd.1=8MiB/s,200iops`: what `lab throttle` takes."""
    parts = ([f"{_size(t.limit.bytes_per_s)}/s"] if t.limit.bytes_per_s else []) + (
        [f"{t.limit.iops}iops"] if t.limit.iops else [])
    return f"{t.drive}=" + ",".join(parts)


def _ref(name: str) -> DriveRef:
    from ..lab.throttle import DriveRef
    osd, _, role = name.removeprefix("osd.").partition(".")
    return DriveRef(int(osd), role or "data")


def restore_commands(record: str) -> list[str]:
    """What a person types to put back the lab a `lab-shape` ledger record names (shapes.Keeper.record)."""
    d = json.loads(record)
    down = f"cephbench lab down --dir {d['dir']}"
    if not d.get("original"):
        return [down]
    return [down, " ".join(["cephbench lab up --dir", d["dir"], *LabBuild.from_json(d["original"]).up_flags()])]


# ---- a suite's `lab:` key ------------------------------------------------------------------------

def build_of(shape: dict[str, Any], path: str) -> LabBuild:
    """A variant's `lab:` mapping (its keys are `lab up`'s flags) -> the build; UserError naming the YAML path of
    the bad key (`variants[0].lab.public_net`) with the same message `lab up` gives for that flag."""
    from ..lab.multihost import size_flag, spec_from_flags

    def text(key: str) -> str | None:
        v = shape.get(key)
        return None if v is None else str(v)
    throttle = shape.get("osd_throttle")
    throttle_values = None if not throttle else [f"{k}={v}" for k, v in throttle.items()]
    cpu_values = {key: [f"{k}={v}" for k, v in shape[key].items()] if shape.get(key) else None
                  for key in ("cpu_limit", "host_load")}
    try:
        multi = spec_from_flags(
            shape.get("hosts"), int(shape.get("osds_per_host") or 1), int(shape.get("clients") or 0),
            text("public_net"), text("cluster_net"), shape.get("osds"),
            {"--client-net": text("client_net"), "--osd-throttle": throttle_values,
             "--db-device": shape.get("db_device"),
             "--objectstore": text("objectstore") if text("objectstore") != "bluestore" else None,
             "--fs": text("fs"), "--cpu-limit": cpu_values["cpu_limit"], "--host-load": cpu_values["host_load"]})
        size = size_flag(shape["osd_size"], "--osd-size") if shape.get("osd_size") is not None else DEFAULT_OSD_SIZE
    except UserError as exc:
        key = _KEY_OF_FLAG.get(exc.where, "")
        raise UserError(_as_keys(exc.message), _as_keys(exc.hint), where=f"{path}.{key}" if key else path) from None
    if size < 2 * 1024**3:
        raise UserError(f"osd_size must be at least 2GiB for BlueStore, got {shape['osd_size']}",
                        where=f"{path}.osd_size")
    rgw = shape.get("rgw", True) is not False
    release = release_of(shape["release"], f"{path}.release") if shape.get("release") is not None else ""
    if multi is None:
        return LabBuild(None, int(shape.get("osds") or DEFAULT_OSDS), size, rgw, release)
    return LabBuild(multi, multi.osds, size, rgw, release)


def release_of(name: object, where: str) -> str:
    """A shape's `release:`: one `lab up --release` offers and a lab can run, or one line at its YAML path."""
    from ..lab import roots
    rel = roots.release(str(name), where=where)
    if rel.no_lab:
        raise UserError(f"a lab of {rel.name} is not yet supported: {rel.no_lab}",
                        f"choose one of {', '.join(n for n, r in roots.RELEASES.items() if not r.no_lab)}",
                        where=where)
    return rel.name


def _as_keys(text: str) -> str:
    """`lab up`'s words for a suite: each flag named by its key (--public-net -> public_net)."""
    for key, flag in sorted(SHAPE_FLAGS.items(), key=lambda kv: -len(kv[1])):
        text = text.replace(flag, key)
    return text


def pool_room(build: LabBuild, profile: dict[str, Any]) -> tuple[int, str] | None:
    """When a pool profile cannot be clean on this build: (what it needs, what the build has) in words' numbers;
    None when it fits. A multi-host lab puts replicas on different hosts (chooseleaf type 1); erasure-coded
    chunks go to different OSDs (failure_domain osd on the lab)."""
    if profile.get("type") == "replicated":
        have = build.multi.hosts if build.multi is not None else build.osds
        need = int(profile.get("size", 3))
    else:
        have, need = build.osds, int(profile.get("k", 2)) + int(profile.get("m", 1))
    return None if need <= have else (need, "hosts" if profile.get("type") == "replicated" and build.multi else "OSDs")


# ---- from one build to the next -------------------------------------------------------------------

@dataclass(frozen=True)
class Step:
    """What takes the lab from one build to the next: none, throttle (`lab throttle`), rebuild (down, then up
    with the new build), up (no lab yet) or down (the run started the lab: it goes at the end)."""

    kind: str
    build: LabBuild | None
    set: tuple[ThrottleSpec, ...] = ()
    clear: tuple[DriveRef, ...] = ()


def step(current: LabBuild | None, want: LabBuild | None) -> Step:
    if want is None:
        return Step("down" if current is not None else "none", None)
    if current is None:
        return Step("up", want)
    if current.key() != want.key():
        return Step("rebuild", want)
    from ..lab.throttle import ThrottleSpec
    have, need = current.throttles, want.throttles
    to_set = tuple(ThrottleSpec(r, lim) for r, lim in sorted(need.items()) if have.get(r) != lim)
    to_clear = tuple(r for r in sorted(have) if r not in need)
    return Step("throttle" if to_set or to_clear else "none", want, to_set, to_clear)


def steps(original: LabBuild | None, first: LabBuild | None, variants: Sequence[tuple[str, LabBuild | None]]
          ) -> list[tuple[str, Step]]:
    """Every change of the lab over a run: `first` is the lab the run starts with (None: none runs), `original`
    the one it must leave (None: take it down), `variants` each variant's build as the plan enters it (None: the
    lab as the user had it). The last step, named "", puts the original back."""
    out: list[tuple[str, Step]] = []
    current = first
    for name, build in variants:
        want = build if build is not None else original
        out.append((name, step(current, want)))
        current = want
    out.append(("", step(current, original)))
    return out


def rebuilds(plan: Sequence[tuple[str, Step]]) -> int:
    return sum(1 for _, s in plan if s.kind in ("rebuild", "up"))


# ---- the order of a suite's variants --------------------------------------------------------------

def shape_classes(variants: Sequence[tuple[str, LabBuild | None]]) -> list[list[str]]:
    """The variants grouped by the build only a rebuild changes, in the order each first appears; variants without
    a shape (the lab as the user had it) form one class. The plan runs one class after the other, interleaving the
    variants of a class as it interleaves options (A B | B A): a class's variants differ at most in throttles and
    options, which change in milliseconds, while a rebuild costs seconds."""
    if all(b is None for _, b in variants):
        return [[n for n, _ in variants]]
    classes: dict[str | None, list[str]] = {}
    for name, build in variants:
        classes.setdefault(None if build is None else build.key(), []).append(name)
    return list(classes.values())
