"""S3 or Swift load on RGW with cephbench-loadgen; hooks in drivers/rgw/."""

from __future__ import annotations

import math
from typing import Annotated, Any, ClassVar, Literal, Mapping

from pydantic import Field, field_validator, model_validator

from .kind import Kind, Needs, ResourceType
from .schema import (ClientWorkload, Duration, PositiveInt, Ramp, Searchable, Size, Sweep, is_auto,
                     steady_rounds_fit)

# the run's RGW user, cephbench-<run id>-rgw, removed with everything it owns
RGW_USER = ResourceType("rgw-user", "rgw.admin:remove_user_entry",
                        lambda uid: f"radosgw-admin user rm --uid {uid} --purge-data", order=1)
# the buckets loadgen makes under one prefix with keys the user gave ("<prefix>*", the prefix cephbench-<run id>-...)
RGW_BUCKETS = ResourceType("rgw-buckets", "rgw.admin:remove_buckets_entry",
                           lambda name: f"radosgw-admin bucket rm --bucket NAME --purge-objects  (each bucket named "
                                        f"{name})")

# What loadgen spends on the lab's RGW around the phase it measures (bench estimates, suites/rgw.yaml on the
# one-host lab, 2026-12-07, 35 tests; the quick suite's rgw group in 3 runs): a read phase filled its key space
# first, 1000 objects of 4 KiB in 2.2-3.1 s and 200 of 4 MiB in 9.3-10.1 s; each phase deleted what it had written
# at its end, 1000 objects in 2-3.4 s with its start; a put's last operations in flight ended after its duration
# (64 of 4 MiB: 3 s); an ops-bound phase ran 190 PUTs, 250 DELETEs and 1000 GETs a second. A group's buckets came
# and went in 0.1-0.3 s between tests, not the 4 s counted before (an estimate 0.79 of the run's 939 s).
RGW_OBJECTS_PER_S = 400.0               # objects written by a prefill, or deleted at a phase's end, a second
RGW_PUT_BYTES_PER_S = 90 * 1024**2      # bytes a second of PUTs: a prefill's, and a put's last in flight
RGW_OPS_PER_S = {"get": 1000.0, "stat": 1000.0, "list": 1000.0}     # an ops-bound phase's; else RGW_OPS_PER_S_WRITE
RGW_OPS_PER_S_WRITE = 200.0
RGW_TEST_START_S = 0.3                  # loadgen's start and its buckets'


def tool_s(params: Mapping[str, Any], measured_s: float | None) -> float:
    """The seconds a test's loadgen runs: its warm-up, the phase it measures (a duration, or its ops at the lab's
    rates), a read's prefill of its key space, a put's operations still in flight at its end, and the deletion of
    what the phase wrote; each instance has a key space of its own (`objects`), all at the one RGW's rates."""
    op, n, size = params["phase"], int(params.get("instances") or 1), int(params["object_size"])
    objects = int(params["objects"]) * n
    per_object = 1 / RGW_OBJECTS_PER_S + size / RGW_PUT_BYTES_PER_S
    ops = params.get("ops")
    if measured_s is None and ops:
        measured_s = int(ops) * n / RGW_OPS_PER_S.get(op, RGW_OPS_PER_S_WRITE) \
            + (int(ops) * n * size / RGW_PUT_BYTES_PER_S if op == "put" else 0.0)
    run = float(params.get("warmup") or 0.0) + float(measured_s or KIND.default_test_s)
    if op == "put":     # its keys at random: those it wrote; then its last operations in flight
        written = objects if not (ops and params.get("duration_s") is None) else \
            objects * (1 - math.exp(-int(ops) * n / objects))
        return run + written / RGW_OBJECTS_PER_S + int(params["concurrency"]) * n * size / RGW_PUT_BYTES_PER_S
    prefill = objects * per_object
    deleted = 0 if op == "delete" else objects       # delete uses up the key space it filled
    return run + prefill + deleted / RGW_OBJECTS_PER_S


KIND = Kind("rgw", "RGW", "RGW (cephbench-loadgen)", "rgw", "op",
            {"put": "write", "get": "read", "stat": "metadata", "list": "metadata", "delete": "metadata",
             "mixed": "mixed"}, group_setup_s=0.5, test_overhead_s=RGW_TEST_START_S, ops_name="req/s",   # S3 or Swift
            tool_s=tool_s,
            # delete uses up its keys: it does not run in rounds
            rgw_model=True, steady_phases=frozenset({"put", "get", "stat", "list", "mixed"}), prefills_in_run=True,
            search_param="concurrency", searches_clients=True,
            load_params={"concurrency": "t"}, load_tag="t", op_size_param="object_size",
            object_size_param="object_size",
            size_params=("object_size",), id_params=("object_size", "concurrency"),
            shown_params=("object_size", "concurrency"), swept_charts=("object_size", "concurrency"),
            table_params=("protocol",), resources=(RGW_USER, RGW_BUCKETS))
DRIVER = "rgw"


class Rgw(ClientWorkload):
    """S3 or Swift load on RGW with cephbench-loadgen. Each op is one phase of the group, run in order on fresh
    buckets; reads prefill the key space (loadgen --prefill), so they never depend on what a put wrote.
    Keys: `credentials` (a JSON file like the lab's rgw-user.json), else CEPHBENCH_S3_*/CEPHBENCH_SWIFT_* from the
    environment, else a user made for the run with radosgw-admin (removed afterwards with its data)."""

    descriptor: ClassVar[Kind] = KIND
    type: Literal["rgw"]
    protocol: Sweep(Literal["s3", "swift"]) = ["s3"]
    op: list[Literal["put", "get", "stat", "list", "delete", "mixed"]] = Field(["put", "get"], min_length=1)
    object_size: Sweep(Size) = [4096]
    concurrency: Searchable(PositiveInt) = [16]        # `auto`: a search of it (core/loadsearch.py)
    duration: Sweep(Duration) | None = None       # default 30 s unless ops is given
    ops: Sweep(PositiveInt) | None = None         # measured phase length in operations instead of time
    rate: Sweep(Annotated[float, Field(gt=0)]) | None = None   # open loop at this many ops/s
    arrival: Literal["constant", "poisson"] = "constant"
    mix: dict[Literal["put", "get", "delete", "list", "stat"], Annotated[int, Field(ge=0, strict=True)]] | None = None
    warmup: Ramp = 0.0
    buckets: PositiveInt = 1
    objects: PositiveInt = 1000
    instances: Sweep(PositiveInt) = [1]           # loadgen processes at once, their histograms merged exactly
    max_error_ratio: float = Field(0.01, gt=0, le=1)
    endpoint: str | None = None                   # RGW base URL; default: the lab's RGW
    credentials: str | None = None                # path of a JSON file with s3_access_key, s3_secret_key, ...

    @field_validator("endpoint")
    @classmethod
    def _url(cls, v: str | None) -> str | None:
        import re
        if v is not None and not re.fullmatch(r"https?://[A-Za-z0-9._\[\]:-]+/?", v):
            raise ValueError(f"{v!r} is not an RGW base URL: give e.g. http://rgw.example:8080 (no path)")
        return v.rstrip("/") if v else v

    @model_validator(mode="after")
    def _length_and_mix(self) -> "Rgw":
        if self.duration is not None and self.ops is not None:
            raise ValueError("give duration or ops, not both")
        if self.duration is None and self.ops is None:
            if self.rate is not None:
                raise ValueError("an open-loop rate needs a length: add duration (e.g. 30s) or ops")
            self.duration = [30.0]
        if self.mix is not None:
            if "mixed" not in self.op:
                raise ValueError("mix is used only by op mixed: add mixed to op, or remove mix")
            if sum(self.mix.values()) <= 0:
                raise ValueError("the mix weights sum to zero: give at least one op a weight above zero")
        if self.arrival != "constant" and self.rate is None:
            raise ValueError("arrival applies to an open loop: add rate (ops/s)")
        if self.rate is not None and is_auto(self.concurrency):
            raise ValueError("concurrency: auto searches the ops in flight of a closed loop, and rate makes an open "
                             "loop whose load the rate sets: remove rate, or give concurrency as numbers")
        return self

    @model_validator(mode="after")
    def _steady_rounds_fit(self) -> "Rgw":
        steady_rounds_fit(self.steady_state, self.duration)
        return self


def needs(params: Mapping[str, Any]) -> Needs:
    return Needs(key=False, loadgen=True)       # loadgen talks to RGW, not to the monitors


MODEL = Rgw
