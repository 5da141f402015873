"""Whether a disk baseline path is on an OSD's own data device, from `ceph osd metadata` (issue 25, item 7).

A figure measured on another device says nothing about the OSD's disk, so each baseline result records, per path,
which device it measured and whose it is; the model uses only the OSD's own (analysis/disks.py). "The OSD's
device" is the whole disk under its block file or device, as Ceph names it in `bluestore_bdev_devices`: the one-host
lab's OSDs are BlueStore files on the machine's disk (vda), so `<lab>/osd/N` beside them is on osd.N's device; a
multi-host lab's OSD on a loop device is not on the disk that holds `<lab>/osd/N`.
"""

from __future__ import annotations

from dataclasses import asdict, dataclass
from typing import Any


@dataclass(frozen=True)
class OsdDevice:
    own: bool | None            # True: an OSD's own data device; False: not; None: cannot tell (said in `text`)
    osds: tuple[int, ...]       # the OSDs the path stands for (the lab's osd.N; on a cluster those on its disks)
    device: str                 # the device measured ("vda", "loop0"; several joined by "+")
    osd_device: str             # the OSDs' data devices as Ceph names them ("osd.0's loop0"), "" when unknown
    text: str                   # one sentence a person reads: what was measured, and whether the model uses it

    def as_dict(self) -> dict[str, Any]:
        return {**asdict(self), "osds": list(self.osds)}


def data_devices(md: dict[str, Any]) -> list[str]:
    """An OSD's data devices: BlueStore's main device (its DB/WAL devices are not where data lands); FileStore's
    (or an older release's) `devices`."""
    text = md.get("bluestore_bdev_devices") or md.get("devices") or ""
    return [d.strip() for d in str(text).split(",") if d.strip()]


def _osd_id(md: dict[str, Any]) -> int | None:
    try:
        return int(md["id"])
    except (KeyError, TypeError, ValueError):
        return None


def _same_host(a: str, b: str) -> bool:
    return a == b or a.split(".")[0] == b.split(".")[0]


def check(label: str, host: str, disks: tuple[str, ...], metadata: list[dict[str, Any]], osd: int | None = None,
          lab_drive: str = "") -> OsdDevice:
    """`label` (on `host`, on the whole disks `disks`) against the OSDs of `metadata`: osd.`osd`'s when the path is
    known to be that OSD's (the lab's <lab>/osd/N), else those of its host. `lab_drive`: the lab records the OSD's
    own drive, and fio measured it (disk_baseline.LabDrive)."""
    device = "+".join(disks) or "an unknown device"
    if lab_drive:
        return OsdDevice(True, (osd,) if osd is not None else (), lab_drive, lab_drive,
                         f"{label}: osd.{osd}'s own drive {lab_drive}, as the lab records it")
    by_id = {i: m for m in metadata if isinstance(m, dict) and (i := _osd_id(m)) is not None}
    if osd is not None:
        candidates = {osd: by_id[osd]} if osd in by_id else {}
        if not candidates:
            return OsdDevice(None, (osd,), device, "", f"{label}: `ceph osd metadata` has no osd.{osd}: cannot tell "
                             "whether it is that OSD's device")
    else:
        candidates = {i: m for i, m in by_id.items() if _same_host(str(m.get("hostname") or ""), host)}
        if not candidates:
            return OsdDevice(None, (), device, "", f"{label}: no OSD on host {host} in `ceph osd metadata`: cannot "
                             "tell whether it is an OSD's device")
    devs = {i: data_devices(m) for i, m in candidates.items()}
    theirs = ", ".join(f"osd.{i}'s {'+'.join(d)}" for i, d in sorted(devs.items()) if d)
    if not disks or not theirs:
        what = f"which device {label} is on" if not disks else "which device the OSDs use"
        return OsdDevice(None, tuple(sorted(candidates)), device, theirs, f"{label}: cannot tell {what} "
                         "(sysfs or `ceph osd metadata` does not say)")
    mine = tuple(sorted(i for i, d in devs.items() if set(d) & set(disks)))
    if mine:
        return OsdDevice(True, mine, device, theirs,
                         f"{label}: on {device}, {', '.join(f'osd.{i}' for i in mine)}'s own device")
    return OsdDevice(False, tuple(sorted(candidates)), device, theirs,
                     f"disk baseline measured {label} on {device}, not {theirs}: not used")
