"""A suite's lab shapes on the lab: the lab rebuilt (down, then up with the variant's build) or throttled
(`lab throttle`) before the tests of each variant, and put back as the user had it at the end, through the run's
ledger, so that `cephbench cleanup` after a kill -9 puts it back too.

Which change each variant needs, and the order of the variants, are pure: suite/shape_plan.py.
"""

from __future__ import annotations

import json
import logging
from dataclasses import dataclass, field
from pathlib import Path
from typing import Any, Callable

from ..cluster.ceph import Target
from ..suite.config import Suite
from ..core.errors import UserError
from ..core.interrupts import held
from ..lab import Lab
from ..lab import drives as lab_drives
from ..lab import labdir
from ..lab.multihost import spec_from_topology
from ..lab.throttle import ThrottleSpec
from ..suite.shape_plan import LabBuild, Step, on_release, step

log = logging.getLogger(__name__)

LAB_SHAPE = "lab-shape"     # ledger kind: the lab a run rebuilds; its name is Keeper.record()


def shaped(suite: Suite) -> bool:
    return any(v.lab is not None for v in suite.variant_specs())


def check_target(suite: Suite, target: Target, lab: Lab | None) -> None:
    """Lab shapes only on cephbench's own lab: anything else is refused before the run changes anything."""
    first = next((v for v in suite.variant_specs() if v.lab is not None), None)
    if first is not None and (lab is None or not target.is_lab):
        raise UserError(f"variant {first.name!r} has a lab shape, and the target {target.conf} is not a cephbench "
                        "lab, which cephbench could rebuild", "run it with --lab or --lab-dir DIR, or drop the "
                        "variants' lab: keys for this cluster", where=f"{first.path}.lab")


def first_build(suite: Suite) -> LabBuild | None:
    """The build the plan enters first: what to start when no lab runs (None: the default lab)."""
    specs = suite.variant_specs()
    return specs[0].lab if specs else None


def build_of_lab(lab: Lab, whole: bool = False) -> LabBuild | None:
    """The build of the lab running in `lab.dir` (lab.json, drives.json); None when none runs, or when its start was
    cut short (a rebuild killed half-way: lab.json already names the new build, but the lab is not whole).
    `whole` (the way back after a change that failed or was killed): None also when any of its daemons is not
    running. A down cut short stops some and leaves the others, and a lab without its monitor is no lab: it must be
    started again. A run's first look leaves it False: the user's lab with an OSD they stopped is still theirs."""
    daemons = lab.daemons()
    running = [d for d in daemons if d.running]
    info = lab.info() if lab.started() and running and not (whole and len(running) < len(daemons)) else None
    if info is None:
        return None
    if info.topology is None:
        return LabBuild(None, info.osds, info.osd_size_bytes, info.rgw, info.release)
    record = lab.drives()
    spec = spec_from_topology(info.topology, [ThrottleSpec(d.ref, d.limit) for d in (record.drives if record else [])
                                              if d.limit])
    return LabBuild(spec, spec.osds, info.osd_size_bytes, info.rgw, info.release)


@dataclass
class Keeper:
    """The lab of a run with shapes: what to leave at the end (None: the run started the lab, and takes it down),
    what a variant without a shape runs on (the lab as the run found or started it), what the lab is now, and
    every variant's build."""

    lab: Lab
    original: LabBuild | None
    base: LabBuild | None
    builds: dict[str, LabBuild | None]          # variant -> its build; None: the base lab
    current: LabBuild | None = None
    dry_run: bool = False
    say: Callable[[str], None] = lambda _m: None
    changes: int = 0                            # rebuilds and throttles made (or, in a dry run, listed)
    _planned: list[str] = field(default_factory=list)
    _claimed: str | None = None                 # the run id whose claim is in the lab's directory

    @classmethod
    def for_run(cls, lab: Lab, suite: Suite, created: bool, dry_run: bool = False) -> "Keeper":
        now = build_of_lab(lab)
        builds = {v.name: on_release(v.lab, now.release) if now is not None else v.lab for v in suite.variant_specs()}
        return cls(lab, None if created else now, now, builds, now, dry_run)

    def claim(self, run_id: str, run_dir: str) -> None:
        """The run's claim in the lab's directory (labdir.SHAPED), before the ledger's entry and the lab's first
        change: what proves to `cephbench cleanup` that the run shapes this lab."""
        if not self.dry_run:
            labdir.claim_shape(self.lab.dir, run_id, run_dir, self.record())
            self._claimed = run_id

    def record(self) -> str:
        """The ledger's name for the lab's restore: enough for `cephbench cleanup` alone."""
        return json.dumps({"dir": str(self.lab.dir),
                           "original": self.original.to_json() if self.original else None}, separators=(",", ":"))

    def want(self, variant: str | None) -> LabBuild | None:
        b = self.builds.get(variant) if variant is not None else None
        return b if b is not None else self.base

    def release(self, variant: str) -> str | None:
        """The release `variant`'s tests run on (None: not known, the run's own, run.json's `release`)."""
        b = self.want(variant)
        return (b.release or None) if b is not None else None

    def enter(self, variant: str | None, planned: list[str] | None = None) -> Step:
        """The lab in the build of `variant` (None: the base lab); a dry run lists the commands instead, in
        `planned` (or this keeper's own list)."""
        s = step(self.current, self.want(variant))
        self._apply(s, planned if planned is not None else self._planned)
        return s

    def restore(self) -> Step:
        """The lab back as the user had it (or down, when the run started it), from what the lab is now: a
        rebuild cut short by a signal leaves no lab, or half of one, whatever `current` says."""
        self.resync()
        s = step(self.current, self.original)
        if s.kind == "none" and self.original is None and not self.dry_run:
            s = Step("down", None)      # a start of the run's own lab cut short: its records name what to remove
        self._apply(s, self._planned)
        if self._claimed is not None:
            labdir.release_shape(self.lab.dir, self._claimed)
        return s

    def resync(self) -> None:
        """After a change that failed half-way: what the lab is now (None: no lab runs)."""
        if not self.dry_run:
            self.current = build_of_lab(self.lab, whole=True)

    def take_planned(self) -> list[str]:
        out, self._planned = self._planned, []
        return out

    def _apply(self, s: Step, planned: list[str]) -> None:
        if s.kind == "none":
            return
        self.changes += 1
        d = f"--dir {self.lab.dir}"
        if self.dry_run:
            if s.kind in ("rebuild", "down"):
                planned.append(f"cephbench lab down {d}")
            if s.kind in ("rebuild", "up") and s.build is not None:
                planned.append(" ".join(["cephbench lab up", d, *s.build.up_flags()]))
            if s.kind == "throttle":
                planned += [f"cephbench lab throttle {d} --clear {ref}" for ref in s.clear]
                planned += [f"cephbench lab throttle {d} {t.text()}" for t in s.set]
        else:
            apply_step(self.lab, s, self.say)
        self.current = s.build


def apply_step(lab: Lab, s: Step, say: Callable[[str], None] = lambda _m: None) -> None:
    """One change of the lab: throttles set and cleared, or the lab down (and up again with the new build).

    Each part is held against Ctrl-C and SIGTERM, as every change of a cluster is: a lab cut in the middle of its
    down or up is neither the old lab nor the new. The signal is delivered between the parts or after them, and the
    way back (the run's `lab-shape` ledger entry, recorded before the first change) then starts from a lab that is
    whole or gone."""
    if s.kind == "none":
        return          # a run killed before its first change: the user's lab is as it was (not to be taken down)
    if s.kind == "throttle":
        with held():
            _throttle(lab, s)
        return
    if s.kind in ("rebuild", "down"):
        say(f"lab shape: taking the lab in {lab.dir} down")
    with held():
        lab.down()      # also before "up": a lab that stopped half-made goes first, as its records name it
    if s.kind in ("rebuild", "up") and s.build is not None:
        b = s.build
        say(f"lab shape: starting the lab as cephbench lab up {' '.join(b.up_flags())}")
        with held():
            lab.up(osds=b.osds, osd_size_bytes=b.osd_size_bytes, rgw=b.rgw, multi=b.multi,
                   release=b.release or None, progress=lambda m: log.info("lab: %s", m))
        say("lab shape: the lab is up")


def _throttle(lab: Lab, s: Step) -> None:
    record = lab.drives()
    if record is None:
        raise UserError(f"the lab in {lab.dir} has no drives record to throttle", "rebuild it: lab down, lab up")
    for ref in s.clear:
        lab_drives.clear_throttle(record, ref, where="lab shape")
    for t in s.set:
        lab_drives.apply_throttle(record, t, where="lab shape")
    log.info("lab shape: throttles %s", " ".join(t.text() for t in s.set) or "cleared")


def restore_recorded(name: str) -> None:
    """What a run that died left (a ledger record): the lab rebuilt or throttled back as the user had it, or taken
    down when the run had started it."""
    d: dict[str, Any] = json.loads(name)
    lab = Lab(Path(d["dir"]))
    if not d.get("original"):
        with held():
            lab.down()      # also a lab whose start was cut short: its records name what to remove
    else:
        apply_step(lab, step(build_of_lab(lab, whole=True), LabBuild.from_json(d["original"])))
    labdir.release_shape(lab.dir, None)
