"""Lab shapes as data, before any lab is touched: the build a variant's `lab:` key describes (its values parsed
once, when the suite is read, by `lab up`'s own parsers: config.LabShape), which change takes the lab from one build
to the next (nothing, `lab throttle`, or a rebuild), and the order a suite's variants run in so that the lab is
rebuilt as seldom as possible.

Everything here is pure: run/shapes.py rebuilds and throttles the lab.
"""

from __future__ import annotations

import json
from dataclasses import dataclass, replace
from typing import TYPE_CHECKING, Any, Mapping, Sequence

from ..core.errors import UserError
from ..core.units import exact_size

# The lab's parsers and types are imported by the functions that use them: a suite without lab shapes (most, and
# every `validate` of one) needs none of the lab's modules
if TYPE_CHECKING:
    from ..lab.multihost import MultiHostSpec
    from ..lab.shapekeys import Names
    from ..lab.throttle import DriveLimit, DriveRef, ThrottleSpec

DEFAULT_OSDS = 3                    # `lab up`'s defaults, which a shape's missing keys take
DEFAULT_OSD_SIZE = 10 * 1024**3
MIN_OSD_SIZE = 2 * 1024**3          # BlueStore's least (lab.up refuses less too)


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
        return {"osds": self.osds, "osd_size_bytes": self.osd_size_bytes, "rgw": self.rgw,
                "multi": self.multi.to_json() if self.multi is not None else None,
                **({"release": self.release} if self.release else {})}

    @classmethod
    def from_json(cls, d: dict[str, Any]) -> "LabBuild":
        from ..lab.multihost import MultiHostSpec
        release = str(d.get("release") or "")
        if d.get("multi") is None:
            return cls(None, int(d["osds"]), int(d["osd_size_bytes"]), bool(d["rgw"]), release)
        spec = MultiHostSpec.from_json(d["multi"])
        return cls(spec, spec.osds, int(d["osd_size_bytes"]), bool(d["rgw"]), release)

    @classmethod
    def of(cls, values: Mapping[str, Any], names: Names) -> "LabBuild":
        """A shape's typed values (multihost.parse_value's, keyed as `names` is) -> the build, checked as a whole;
        a UserError names the key or flag it is about (`where`: names[key])."""
        from ..lab.multihost import multi_host
        multi = multi_host(values, names)
        size, osds = values.get("osd_size"), values.get("osds")
        size = DEFAULT_OSD_SIZE if size is None else size
        if size < MIN_OSD_SIZE:
            raise UserError(f"{names['osd_size']} must be at least 2GiB for BlueStore, got {exact_size(size)}",
                            where=names["osd_size"])
        if osds is not None and osds < 1:
            raise UserError(f"{names['osds']} must be at least 1, got {osds}", where=names["osds"])
        rgw, release = values.get("rgw", True) is not False, values.get("release") or ""
        if multi is None:
            return cls(None, DEFAULT_OSDS if osds is None else osds, size, rgw, release)
        return cls(multi, multi.osds, size, rgw, release)

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
        out += ["--public-net", m.public.text()] if m.public else []
        out += ["--cluster-net", m.cluster.text()] if m.cluster else (
            ["--cluster-net", "unshaped"] if m.separate_cluster else [])
        out += ["--client-net", m.client.text()] if m.client else []
        out += ["--objectstore", m.store.objectstore] if m.store.objectstore != "bluestore" else []
        out += ["--fs", m.store.fs] if m.store.fs else []
        out += ["--db-device", _size(m.db_size_bytes)] if m.db_size_bytes else []
        out += [x for t in m.throttles for x in ("--osd-throttle", t.text())]
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


def restore_commands(record: str) -> list[str]:
    """What a person types to put back the lab a `lab-shape` ledger record names (shapes.Keeper.record)."""
    d = json.loads(record)
    down = f"cephbench lab down --dir {d['dir']}"
    if not d.get("original"):
        return [down]
    return [down, " ".join(["cephbench lab up --dir", d["dir"], *LabBuild.from_json(d["original"]).up_flags()])]


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
