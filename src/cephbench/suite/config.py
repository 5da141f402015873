"""The suite file: schema (pydantic) and loading, with errors that name the YAML path.

Any list-valued workload parameter is a sweep dimension; suite/plan.py expands them.
"""

from __future__ import annotations

import difflib
import re
import typing
from pathlib import Path
from typing import Annotated, Any, Callable, Literal, Mapping, Union

import yaml
from pydantic_core import PydanticCustomError
from pydantic import (AfterValidator, BaseModel, BeforeValidator, ConfigDict, Discriminator, Field, PlainSerializer,
                      PrivateAttr, StrictBool, StrictFloat, StrictInt, Tag, ValidationError, ValidationInfo,
                      field_validator, model_validator)

from ..core.errors import UserError
from ..core.names import shown_url, without_credentials
from ..core.units import MAX_INT, exact_size, shown
from ..kinds import KINDS, WORKLOAD_MODELS
from ..kinds.schema import SWEEP_TAG, Auto, Duration, PositiveInt, RbdWorkload, Size, Strict as _Strict
from ..core.userfiles import read_bytes
from .shape_plan import LabBuild, pool_room
from ..core.variant_plan import OptionSpec, VariantSpec
from ..core.settings import Settings, SshSettings     # the run's settings: the schema takes them as they are


class TargetConfig(_Strict):
    conf: Path | None = None
    keyring: Path | None = None
    id: str | None = None


MAX_POOL_PGS = 65536        # the monitors' mon_max_pool_pg_num default: a pool with more PGs is refused there


class ReplicatedPool(_Strict):
    type: Literal["replicated"]
    size: Annotated[int, Field(gt=0, le=10, strict=True)] = 3
    min_size: PositiveInt | None = None
    pg_num: Annotated[int, Field(gt=0, le=MAX_POOL_PGS, strict=True)] = 32


class ErasurePool(_Strict):
    type: Literal["erasure"]
    k: PositiveInt
    m: PositiveInt
    plugin: Literal["jerasure", "isa", "lrc", "shec", "clay"] = "jerasure"
    pg_num: Annotated[int, Field(gt=0, le=MAX_POOL_PGS, strict=True)] = 32
    failure_domain: str | None = None      # default: osd on the lab, host elsewhere
    allow_ec_overwrites: bool | None = None  # None: on for RBD data pools, Ceph's default (off) otherwise


class ExistingPool(_Strict):
    """A pool the user made, named as it is on the cluster (`pools: {p: {existing: NAME}}`): the run writes its own
    objects there, in a RADOS namespace of its own name, and removes exactly those; it never creates, changes or
    deletes the pool. Its type and size are read from the cluster at preflight (pools.resolve_existing)."""

    type: Literal["existing"] = "existing"
    existing: str = Field(min_length=1, max_length=255)

    @field_validator("existing")
    @classmethod
    def _a_pool_name(cls, v: str) -> str:
        if any(c.isspace() or c in "/@" for c in v):
            raise ValueError(f"{v!r} is not a pool name (no spaces, '/' or '@'); give it as 'ceph osd pool ls' "
                             "lists it")
        return v

    @model_validator(mode="before")
    @classmethod
    def _as_it_is(cls, v: Any) -> Any:
        if isinstance(v, dict):
            given = [str(k) for k in v if k != "existing" and not (k == "type" and v[k] == "existing")]
            if given:
                raise ValueError(f"an existing pool is used as it is, and {', '.join(given)} would change it; "
                                 "remove " + ("them" if len(given) > 1 else "it") + ", or remove existing to have "
                                 "cephbench create a pool of its own")
        return v


EXISTING_TAG = "existing-pool"      # its branch's name in pydantic's error paths (not a field's name)


def _pool_kind(v: Any) -> str | None:
    if isinstance(v, dict):
        return EXISTING_TAG if "existing" in v else v.get("type")
    return EXISTING_TAG if isinstance(v, ExistingPool) else getattr(v, "type", None)


PoolProfile = Annotated[Union[Annotated[ReplicatedPool, Tag("replicated")], Annotated[ErasurePool, Tag("erasure")],
                              Annotated[ExistingPool, Tag(EXISTING_TAG)]], Discriminator(_pool_kind)]


KINDS_OF_MODELS = tuple(typing.get_args(m.model_fields["type"].annotation)[0] for m in WORKLOAD_MODELS)
Workload = Annotated[Union[WORKLOAD_MODELS], Field(discriminator="type")]


def _disk_paths(v: Any) -> Any:
    """lab-osds, a list of paths, or {host: [paths]}: checked here so that each form gets its own message rather
    than pydantic's account of every union branch."""
    def path_list(x: Any, what: str) -> list[str]:
        if not isinstance(x, list) or not all(isinstance(p, str) and p for p in x):
            raise ValueError(f"{what} is not a list of paths; give e.g. [/srv/disk1, /srv/disk2]")
        if not x:
            raise ValueError(f"{what} has no paths; give at least one")
        return x
    if v == "lab-osds":
        return v
    if isinstance(v, dict) and v:
        return {str(h): path_list(p, str(h)) for h, p in v.items()}
    if isinstance(v, list):
        return path_list(v, "the list")
    raise ValueError(f"give a list of paths, {{host: [paths]}}, or lab-osds, not {v!r}")


def _hosts_or_keyword(keyword_means: str, none_ok: bool) -> Any:
    """A validator of a list of host names or osd-hosts, its message saying what the keyword means here."""
    def check(v: Any) -> Any:
        if (v is None and none_ok) or v == "osd-hosts":
            return v
        if isinstance(v, list) and v and all(isinstance(h, str) and h for h in v):
            return v
        raise ValueError(f"give a list of host names, or osd-hosts ({keyword_means}), not {v!r}")
    return BeforeValidator(check)


DiskPaths = Annotated[Union[Literal["lab-osds"], list[str], dict[str, list[str]]], BeforeValidator(_disk_paths)]


class DiskBaselineConfig(_Strict):
    """fio direct I/O on a test file in each directory: on this host, on each of `hosts` (over ssh), or per host
    ({host: [paths]}); "lab-osds": the lab's OSD directories, on whichever lab host each OSD is."""
    paths: DiskPaths
    hosts: Annotated[Union[Literal["osd-hosts"], list[str], None],
                     _hosts_or_keyword("every host with an OSD", none_ok=True)] = None
    size: Size = 1024**3
    runtime: Duration = 10.0
    patterns: list[Literal["dd", "write-1MiB", "write-4MiB", "read-1MiB", "read-4MiB", "randread-4KiB-qd1",
                           "randread-4KiB-qd32", "randwrite-4KiB-qd1", "randwrite-4KiB-qd32"]] | None = None
    allow_raw_device: bool = False

    @model_validator(mode="after")
    def _hosts_with_one_list(self) -> "DiskBaselineConfig":
        if self.hosts is not None and not isinstance(self.paths, list):
            which = "lab-osds already names each lab host's OSD directories" if self.paths == "lab-osds" else \
                "paths already names the hosts ({host: [paths]})"
            raise ValueError(f"hosts: {which}; remove hosts, or give paths as one list for every host")
        if isinstance(self.hosts, list) and len(set(self.hosts)) < len(self.hosts):
            raise ValueError("hosts: a host is given twice; give each host once")
        return self


class NetBaselineConfig(_Strict):
    """iperf3 between the hosts: ordered pairs with 1 and `streams` streams, each one to all others, and all others
    to the first at once; `osd-hosts`: this host (first) and every host with an OSD, named when the run starts."""
    hosts: Annotated[Union[Literal["osd-hosts"], list[str]],
                     _hosts_or_keyword("this host and every host with an OSD", none_ok=False)] = ["localhost"]
    streams: PositiveInt = 4
    duration: Duration = 10.0
    port: Annotated[int, Field(ge=1, le=65535)] | None = None


class BaselineConfig(_Strict):
    disks: DiskBaselineConfig | None = None
    network: NetBaselineConfig | None = None


def _default_pools() -> dict[str, Any]:
    return {"default": ReplicatedPool(type="replicated")}


def _client_hosts(v: Any) -> Any:
    """`lab`, or a list of host names each given once: checked here so that each gets its own message."""
    if v is None or v == "lab":
        return v
    if not isinstance(v, list) or not v:
        raise ValueError(f"give a list of client host names, or lab (the multi-host lab's client hosts), not {v!r}")
    seen: dict[str, int] = {}
    for j, h in enumerate(v):
        if not isinstance(h, str) or not h.strip():
            raise ValueError(f"clients[{j}]: {h!r} is not a host name")
        if h in seen:
            raise ValueError(f"clients[{j}]: host {h!r} is listed twice (first as clients[{seen[h]}]); "
                             "list each client host once")
        seen[h] = j
    return v


ClientHosts = Annotated[Union[Literal["lab"], list[str]], BeforeValidator(_client_hosts)]


_WHO_RE = re.compile(r"(global|mon|mgr|osd|mds|client)(\.[A-Za-z0-9_.-]+)?(/[a-z_]+:[A-Za-z0-9_.-]+)?")


def _who(v: Any) -> Any:
    if isinstance(v, str) and not _WHO_RE.fullmatch(v):
        raise ValueError(f"{v!r} is not a target of ceph config set: give global, mon, mgr, osd, mds, client, one "
                         "daemon (osd.3, client.rgw.x) or a type with a mask (osd/host:node1, osd/class:ssd)")
    return v


def _scalar(v: Any) -> Any:
    if isinstance(v, (list, dict)) or v is None:
        raise ValueError(f"must be a number, text or true/false, got {v!r}")
    return v


OptionValue = Annotated[Union[StrictBool, StrictInt, StrictFloat, str], BeforeValidator(_scalar)]
OptionName = Annotated[str, Field(pattern=r"^[A-Za-z0-9_][A-Za-z0-9_./-]*$", max_length=128)]
VariantName = Annotated[str, Field(pattern=r"^[A-Za-z0-9][A-Za-z0-9_.=+-]*$", max_length=64)]


class VariantOption(_Strict):
    """One `ceph config set WHO NAME VALUE`: checked against `ceph config help NAME` before the run changes
    anything, restored to what was there after it."""
    who: Annotated[str, BeforeValidator(_who)]
    name: OptionName
    value: OptionValue


class VariantSweep(_Strict):
    """One option over several values: one variant per value, named NAME=VALUE."""
    who: Annotated[str, BeforeValidator(_who)]
    name: OptionName
    values: list[OptionValue] = Field(min_length=1)


LAB_SHAPE_ERROR = "lab_shape"       # pydantic's type of a lab shape's refusal: _message repeats it as it is


def _parsed(v: Any, info: ValidationInfo) -> Any:
    """A lab shape's value parsed once, as the suite is read, by `lab up`'s own parser for its key
    (multihost.parse_value): a LinkShape, ThrottleSpecs, bytes, ...; a refusal at this key's YAML path, in the words
    of the suite's keys."""
    from ..lab.multihost import parse_value        # here: a suite without lab shapes imports none of the lab
    from ..lab.shapekeys import KEYS
    try:
        return parse_value(str(info.field_name), v, KEYS) if v is not None else None
    except UserError as exc:       # said as `lab up` says it, and as it is (it names the part of the value it means)
        raise PydanticCustomError(LAB_SHAPE_ERROR, UserError(exc.message, exc.hint).one_line()) from None


def _written(text: Callable[[Any], Any]) -> PlainSerializer:
    """A parsed value as the suite would give it (run.json's suite, and a resumed run's comparison of two suites)."""
    return PlainSerializer(text, when_used="unless-none")


_PARSED = AfterValidator(_parsed)
_LINK_TEXT = _written(lambda v: v if isinstance(v, str) else v.text())        # a LinkShape, or unshaped
_SIZE_TEXT = _written(exact_size)


class LabShape(_Strict):
    """A variant's lab shape: the keys are `cephbench lab up`'s flags (lab/shapekeys.py), each value parsed by that
    flag's own parser as the suite is read, and the whole checked into the build the lab takes as it is (`build`)."""
    # as `lab up` refuses an empty flag: '' is no rate or release (it read as none, the host's own release)
    model_config = ConfigDict(str_min_length=1)
    hosts: StrictInt | None = None
    osds_per_host: StrictInt = 1
    clients: StrictInt = 0
    osds: StrictInt | None = None               # the one-host lab's OSDs (no hosts)
    osd_size: Annotated[Union[StrictInt, str] | None, _PARSED, _SIZE_TEXT] = None
    public_net: Annotated[str | None, _PARSED, _LINK_TEXT] = None
    cluster_net: Annotated[str | None, _PARSED, _LINK_TEXT] = None      # RATE[/DELAY] or unshaped
    client_net: Annotated[str | None, _PARSED, _LINK_TEXT] = None
    # {osd.1: 8MiB/s, osd.2.db: "20MiB/s,200iops"}
    osd_throttle: Annotated[dict[str, str] | None, _PARSED,
                            _written(lambda specs: {str(t.drive): t.limit_text() for t in specs})] = None
    # {osd.2: 0.08}: cores
    cpu_limit: Annotated[dict[str, Union[StrictFloat, StrictInt, str]] | None, _PARSED,
                         _written(lambda specs: {s.daemon: s.cores for s in specs})] = None
    # {h2: 1.5}: cores burnt beside
    host_load: Annotated[dict[str, Union[StrictFloat, StrictInt, str]] | None, _PARSED,
                         _written(lambda specs: {s.host: s.cores for s in specs})] = None
    db_device: Annotated[Union[StrictInt, str] | None, _PARSED, _SIZE_TEXT] = None
    objectstore: Literal["bluestore", "filestore"] = "bluestore"
    fs: str | None = None
    rgw: StrictBool = True
    release: Annotated[str | None, _PARSED] = None      # pacific, reef, tentacle (none: the lab's as found)
    _build: LabBuild | None = PrivateAttr(None)

    @model_validator(mode="after")
    def _whole(self) -> "LabShape":
        from ..lab.shapekeys import KEYS
        try:
            self._build = LabBuild.of({k: getattr(self, k) for k in KEYS}, KEYS)
        except UserError as exc:
            raise ValueError(exc.one_line()) from None      # "public_net: ...": at that key's YAML path
        return self

    @property
    def build(self) -> LabBuild:
        """The build this shape describes, made once as the suite was read."""
        assert self._build is not None
        return self._build


class Variant(_Strict):
    """A named configuration every workload also runs under (options: none is the cluster as it is; lab: the lab
    rebuilt to a shape), or a sweep."""
    name: VariantName | None = None
    options: list[VariantOption] = []
    sweep: VariantSweep | None = None
    lab: LabShape | None = None

    @model_validator(mode="after")
    def _named_or_swept(self) -> "Variant":
        if self.sweep is not None and (self.name is not None or self.options or self.lab is not None):
            raise ValueError("sweep: a sweep names its variants itself (NAME=VALUE); give name, options and lab, "
                             "or a sweep, not both")
        if self.sweep is None and self.name is None:
            raise ValueError("a variant needs a name (and options, or a lab shape), or a sweep: {who, name, values}")
        return self


def _variant_list(v: Any) -> Any:
    """`variants: {sweep: ...}` is a list of one sweep."""
    return [v] if isinstance(v, dict) else v


def _value_text(v: Any) -> str:
    return str(v).lower() if isinstance(v, bool) else str(v)


def swept_name(name: str, value: Any) -> str:
    """A sweep's variant for one value: NAME=VALUE, with what a name may not hold made `_`."""
    return re.sub(r"[^A-Za-z0-9_.=+-]", "_", f"{name}={_value_text(value)}")[:64]


class Suite(_Strict):
    name: str = Field(pattern=r"^[A-Za-z0-9][A-Za-z0-9_.-]*$", max_length=64)
    description: str = ""
    target: TargetConfig | None = None
    settings: Settings = Field(default_factory=Settings)
    # client hosts the workloads' tools may run on (reached with settings.ssh), or `lab`: the multi-host lab's
    clients: ClientHosts | None = None
    pools: dict[str, PoolProfile] = Field(default_factory=_default_pools)
    baseline: BaselineConfig | None = None      # disk and network baselines, run before the workloads
    workloads: list[Workload] = Field(min_length=1)
    # configurations every workload runs under, interleaved (A B B A ...); none: the cluster as it is
    variants: Annotated[list[Variant], BeforeValidator(_variant_list), Field(min_length=1)] | None = None

    def variant_specs(self) -> list[VariantSpec]:
        """The variants in order, a sweep made into one variant per value; [] without variants."""
        out: list[VariantSpec] = []
        for i, v in enumerate(self.variants or []):
            if v.sweep is not None:
                sw = v.sweep
                out += [VariantSpec(swept_name(sw.name, value),
                                    (OptionSpec(sw.who, sw.name, value, f"variants[{i}].sweep"),),
                                    f"variants[{i}]", sweep_index=k) for k, value in enumerate(sw.values)]
            else:
                out.append(VariantSpec(str(v.name), tuple(OptionSpec(o.who, o.name, o.value,
                                                                     f"variants[{i}].options[{j}]")
                                                          for j, o in enumerate(v.options)), f"variants[{i}]",
                                       lab=v.lab.build if v.lab is not None else None))
        return out

    @model_validator(mode="after")
    def _variants_distinct(self) -> "Suite":
        seen: dict[str, str] = {}
        for i, v in enumerate(self.variants or []):
            if v.sweep is not None:
                values: dict[str, int] = {}
                for k, value in enumerate(v.sweep.values):
                    text = _value_text(value)
                    if text in values:
                        raise ValueError(f"variants[{i}].sweep.values[{k}]: {text} is given twice (first as "
                                         f"values[{values[text]}]); give each value once")
                    values[text] = k
            keys: dict[tuple[str, str], int] = {}
            for j, o in enumerate(v.options):
                if (o.who, o.name) in keys:
                    raise ValueError(f"variants[{i}].options[{j}]: {o.name} for {o.who} is set twice in this variant "
                                     f"(first as options[{keys[(o.who, o.name)]}]); keep one")
                keys[(o.who, o.name)] = j
        for spec in self.variant_specs():
            where = spec.path + (f".sweep.values[{spec.sweep_index}]" if spec.sweep_index is not None else ".name")
            if spec.name in seen:
                raise ValueError(f"{where}: variant {spec.name!r} is given twice (first as {seen[spec.name]}); give "
                                 "each variant its own name")
            seen[spec.name] = where.removesuffix(".name")
        return self

    @model_validator(mode="after")
    def _workload_variants_exist(self) -> "Suite":
        names = [spec.name for spec in self.variant_specs()]
        for i, w in enumerate(self.workloads):
            for j, v in enumerate(w.variants or []):
                if v not in names:
                    known = ", ".join(names) if names else "none: the suite has no variants"
                    raise ValueError(f"workloads[{i}].variants[{j}]: the suite has no variant {v!r} (variants: "
                                     f"{known}); name one of them, or remove the workload's variants")
        return self

    @model_validator(mode="after")
    def _shapes_fit(self) -> "Suite":
        """Every lab shape (one `lab up` would start: LabShape) holds every pool profile the workloads run under it."""
        for spec in self.variant_specs():
            used = [p for p in dict.fromkeys(p for w in self.workloads if w.variants is None or spec.name in w.variants
                                             for p in getattr(w, "pool", [])) if p in self.pools]
            for p in used if spec.lab is not None else []:
                if isinstance(self.pools[p], ExistingPool):
                    raise ValueError(f"{spec.path}.lab: variant {spec.name!r} rebuilds the lab, and pool profile "
                                     f"{p!r} names an existing pool, which a rebuilt lab does not have; run it in "
                                     "another suite")
                short = pool_room(spec.lab, self.pools[p].model_dump())
                if short is not None:
                    need, what = short
                    have = spec.lab.multi.hosts if what == "hosts" else spec.lab.osds
                    raise ValueError(f"{spec.path}.lab: variant {spec.name!r} has {have} {what}, and pool profile "
                                     f"{p!r} needs {need}" + (" (each replica on its own host)" if what == "hosts"
                                                              else "") + "; give the shape more, or run that pool "
                                     "in another suite")
        return self

    @model_validator(mode="after")
    def _pools_exist(self) -> "Suite":
        for i, w in enumerate(self.workloads):
            for p in getattr(w, "pool", []):
                if p not in self.pools:
                    known = ", ".join(sorted(self.pools)) or "none"
                    raise ValueError(f"workloads[{i}].pool: profile {p!r} is not defined in pools (defined: {known})")
        return self

    @model_validator(mode="after")
    def _existing_pools_written_by_rados_bench(self) -> "Suite":
        """rados bench writes its objects in a namespace of the run's (removed whole, the pool left as it was);
        the other tools' objects, images and buckets are not placed so yet (their kinds' existing_pools)."""
        able = [k.name for k in KINDS.values() if k.existing_pools]
        for i, w in enumerate(self.workloads):
            for key in ("pool", "metadata_pool"):
                named = getattr(w, key, None)
                for p in named if isinstance(named, list) else [named] if named else []:
                    if isinstance(self.pools.get(p), ExistingPool) and not KINDS[w.type].existing_pools:
                        raise ValueError(f"workloads[{i}].{key}: {p!r} names an existing pool, and only "
                                         f"{', '.join(able)} workloads write in one so far; give this workload a pool "
                                         "cephbench creates")
        return self

    @model_validator(mode="after")
    def _client_counts(self) -> "Suite":
        for i, w in enumerate(self.workloads):
            counts = getattr(w, "clients", None)
            if counts is None:
                continue
            if self.clients is None:
                raise ValueError(f"workloads[{i}].clients: the suite lists no client hosts; add "
                                 "clients: [host, ...] (or clients: lab) at the top of the suite")
            if isinstance(counts, Auto):
                self._client_search(i, counts)
                continue
            for n in counts:
                if isinstance(n, int) and isinstance(self.clients, list) and n > len(self.clients):
                    raise ValueError(f"workloads[{i}].clients: {n} clients, and the suite lists "
                                     f"{len(self.clients)}; give at most {len(self.clients)}, or all")
        return self

    def _client_search(self, i: int, auto: Auto) -> None:
        """`clients: auto`: a max within the hosts the suite lists (the lab's are checked when the run finds them:
        suite/clients.resolve_clients); with lab shapes, whose builds may have other client hosts, a max given."""
        where = f"workloads[{i}].clients.auto.max"
        if auto.max is not None and isinstance(self.clients, list) and auto.max > len(self.clients):
            raise ValueError(f"{where}: {auto.max} client hosts, and the suite lists {len(self.clients)}; give at "
                             f"most {len(self.clients)}, or leave max out to search up to every one")
        if auto.max is None and self.clients == "lab" and any(v.lab is not None for v in self.variant_specs()):
            raise ValueError(f"workloads[{i}].clients.auto: the variants' lab shapes may have other client hosts "
                             "than the lab the run starts from; give the search a max that every shape has, "
                             "e.g. clients: {auto: {max: 2}}")

    @model_validator(mode="after")
    def _bounded_load(self) -> "Suite":
        for i, w in enumerate(self.workloads):
            # its kind's load parameters bound by max_in_flight each, its processes by max_instances
            limits = {**{key: self.settings.max_in_flight for key in w.descriptor.load_params},
                      "instances": self.settings.max_instances}
            for key, limit in limits.items():
                values = getattr(w, key, None)
                where = f"workloads[{i}].{key}"
                if isinstance(values, Auto):        # a search reaches its max
                    values, where = values.max, f"{where}.auto.max"
                for v in values if isinstance(values, list) else [values] if values is not None else []:
                    if v > limit:
                        setting = "max_instances" if key == "instances" else "max_in_flight"
                        raise ValueError(f"{where}: {v:,} is more than the {limit:,} this suite "
                                         f"allows; if you mean it, raise settings.{setting}")
        return self

    @model_validator(mode="after")
    def _rbd_pools(self) -> "Suite":
        for i, w in enumerate(self.workloads):
            if not isinstance(w, RbdWorkload):
                continue
            meta = w.metadata_pool
            if meta is not None:
                if meta not in self.pools:
                    raise ValueError(f"workloads[{i}].metadata_pool: profile {meta!r} is not defined in pools")
                if self.pools[meta].type != "replicated":
                    raise ValueError(f"workloads[{i}].metadata_pool: RBD image metadata needs a replicated pool; "
                                     f"{meta!r} is erasure-coded (put it in pool, it becomes the data pool)")
            for p in w.pool:
                prof = self.pools[p]
                if prof.type == "erasure" and prof.allow_ec_overwrites is False:
                    raise ValueError(f"workloads[{i}].pool: RBD on the erasure-coded pool {p!r} needs "
                                     "allow_ec_overwrites (RBD writes parts of objects); remove "
                                     f"'allow_ec_overwrites: false' from pools.{p}")
        return self


def _loc_path(loc: tuple[Any, ...]) -> str:
    """('workloads', 1, 'rados_bench', 'object_size', 0) -> 'workloads[1].object_size[0]'."""
    out = ""
    parts = list(loc)
    for i, p in enumerate(parts):
        if isinstance(p, int):
            out += f"[{p}]"
            continue
        # pydantic puts the union branch (discriminator tag or type name) into the path
        prev = parts[i - 1] if i else None
        branch = p in ("replicated", "erasure", EXISTING_TAG, SWEEP_TAG)
        if p in KINDS or branch or "[" in p or p.startswith(("function-", "constrained-")):
            if isinstance(prev, int) or (prev is not None and prev not in ("workloads",)):
                continue
        out += f".{p}" if out else p
    return out


def _did_you_mean(word: Any, choices: Any) -> str:
    close = difflib.get_close_matches(str(word), [str(c) for c in choices], n=1, cutoff=0.6)
    return f" (did you mean {close[0]!r}?)" if close else ""


def _models_in(annotation: Any) -> list[type]:
    """The models anywhere inside a type (Annotated, list, Optional, ...)."""
    if isinstance(annotation, type) and issubclass(annotation, BaseModel):
        return [annotation]
    return list(dict.fromkeys(m for a in typing.get_args(annotation) for m in _models_in(a)))


def _keys_at(loc: tuple[Any, ...]) -> list[str]:
    """The keys a suite may have where `loc` points (its last part is the key given), for a "did you mean"."""
    model: Any = Suite
    for part in loc[:-1]:
        if isinstance(part, int):
            continue
        if part in KINDS:
            model = dict(zip(KINDS_OF_MODELS, WORKLOAD_MODELS)).get(part, model)
            continue
        if part in ("replicated", "erasure"):
            model = ReplicatedPool if part == "replicated" else ErasurePool
            continue
        field = getattr(model, "model_fields", {}).get(part)
        if field is None:
            continue            # a pool's or host's own name, a union branch pydantic named
        inner = [a for a in typing.get_args(field.annotation) or (field.annotation,)
                 if isinstance(a, type) and issubclass(a, BaseModel)]
        if not inner and len(_models_in(field.annotation)) == 1:
            inner = _models_in(field.annotation)       # a list of one model (variants)
        if inner:
            model = inner[0]
        elif part == "pools":
            return sorted(set(ReplicatedPool.model_fields) | set(ErasurePool.model_fields))
    return sorted(getattr(model, "model_fields", {}))


# pydantic's wording, said as this project says it
_PLAIN = {
    "int_parsing": "must be a whole number", "int_type": "must be a whole number",
    "int_from_float": "must be a whole number", "float_parsing": "must be a number", "float_type": "must be a number",
    "bool_parsing": "must be true or false", "bool_type": "must be true or false", "string_type": "must be text",
    "list_type": "must be a list, e.g. [a, b]", "dict_type": "must be a mapping (key: value)",
    "model_type": "must be a mapping (key: value)", "model_attributes_type": "must be a mapping (key: value)",
    "finite_number": "must be a finite number", "string_too_short": "must not be empty",
}


def _message(err: dict[str, Any], loc: tuple[Any, ...] = ()) -> str:
    kind = err.get("type", "")
    msg = str(err.get("msg", "invalid"))
    ctx = err.get("ctx") or {}
    value = err.get("input")
    if isinstance(value, str) and ("://" in value or (loc and loc[-1] == "prometheus")):
        value = shown_url(value)        # a URL's credentials are never repeated back
    if kind == "extra_forbidden":
        key = loc[-1] if loc else value
        keys = _keys_at(loc)
        return f"unknown key{_did_you_mean(key, keys)}; the keys here are {', '.join(keys)}"
    if kind == "missing":
        return "required key is missing"
    if kind == LAB_SHAPE_ERROR:
        return msg
    if kind == "union_tag_invalid":
        tag = ctx.get("tag", value.get("type") if isinstance(value, dict) else None)
        tags = [t for t in re.findall(r"'([^']*)'", str(ctx.get("expected_tags", ""))) if t != EXISTING_TAG] \
            or list(KINDS_OF_MODELS)
        return f"unknown type {tag!r}{_did_you_mean(tag, tags)}; the types are {', '.join(tags)}"
    if kind == "union_tag_not_found":
        tags = list(KINDS_OF_MODELS) if "workloads" in loc else ["replicated", "erasure"]
        return f"needs a 'type' key: one of {', '.join(tags)}"
    if kind == "too_short":
        n = ctx.get("min_length", 1)
        return f"needs at least {n} item{'s' if n != 1 else ''}"
    if kind == "literal_error":
        options = re.findall(r"'([^']*)'", str(ctx.get("expected", "")))
        return f"{shown(value)} is not one of {', '.join(options)}{_did_you_mean(value, options)}"
    if kind == "greater_than":
        return (f"must be greater than zero, got {shown(value)}" if ctx.get("gt") == 0
                else f"must be greater than {ctx.get('gt')}, got {shown(value)}")
    if kind == "greater_than_equal":
        return f"must be at least {ctx.get('ge')}, got {shown(value)}"
    if kind == "less_than_equal":
        return f"must be at most {ctx.get('le')}, got {shown(value)}"
    if kind == "less_than":      # a bound the value may not reach: a whole number's last allowed one, else "less than"
        lt = ctx.get("lt")
        return (f"must be at most {lt - 1}, got {shown(value)}" if isinstance(lt, int) and isinstance(value, int)
                else f"must be less than {lt}, got {shown(value)}")
    if kind in _PLAIN:
        return f"{_PLAIN[kind]}, got {shown(value)}"
    for prefix in ("Value error, ", "Assertion failed, "):
        if msg.startswith(prefix):
            msg = msg[len(prefix):]
    if isinstance(value, (str, int, float)) and not isinstance(value, bool) and repr(value) not in msg \
            and shown(value) not in msg:
        msg += f", got {shown(value)}"
    return msg


def _trim_scalar_index(loc: tuple[Any, ...], data: Any) -> tuple[Any, ...]:
    """A sweep parameter given as a scalar is reported without the list index pydantic adds."""
    node = data
    for i, part in enumerate(loc):
        if isinstance(part, int) and not isinstance(node, list):
            return loc[:i] + loc[i + 1:]
        if part == SWEEP_TAG:
            continue    # a sweep's branch name (a load that may also be auto), not a key of the data
        try:
            node = node[part]
        except (KeyError, IndexError, TypeError):
            if isinstance(part, str) and isinstance(node, (dict, list)) and (part in KINDS or part in ("replicated", "erasure")):
                continue  # a union branch name, not a key of the data
            return loc
    return loc


def _node(data: Any, loc: tuple[Any, ...]) -> Any:
    """The part of the suite data at a pydantic location (union branch names skipped)."""
    node = data
    for part in loc:
        if isinstance(node, dict) and part in node:
            node = node[part]
        elif isinstance(node, list) and isinstance(part, int) and part < len(node):
            node = node[part]
        elif isinstance(part, str) and (part in KINDS or part in ("replicated", "erasure", SWEEP_TAG)):
            continue
        else:
            return None
    return node


# A suite is a page or two, and a plan at most 10,000 tests: a sweep of thousands of values is far below these.
# YAML's anchors let a small file stand for a huge tree ("billion laughs": each alias repeats what it names, nine
# times a level), which the schema would walk node by node: the tree is counted as the schema would see it, and
# refused past the bound. The text is measured before it is parsed (parsing 100,000 values took seconds, and 10,000
# brackets deep ran Python's parser out of stack for seconds, libyaml's out of the process's own).
MAX_NODES = 20_000
MAX_DEPTH = 32


def _bounded(data: Any, source: str) -> list[str]:
    """Refuse, in one line at its YAML path, what no suite holds: more than MAX_NODES values once aliases are
    expanded, nesting past MAX_DEPTH, a whole number past MAX_INT (.nan and .inf are each field's to refuse, in its
    words: kinds.schema.Strict). The texts holding an "@" (URLs with credentials, as written) are returned: errors
    repeat none of them whole."""
    secrets: list[str] = []
    count = 0
    stack: list[tuple[Any, str, int]] = [(data, "", 0)]
    while stack:
        node, path, depth = stack.pop()
        count += 1
        where = f"{source}: {path}" if path else source
        if count > MAX_NODES:
            raise UserError(f"the suite holds more than {MAX_NODES:,} values (YAML anchors and aliases counted as "
                            "often as they are repeated)", "write a smaller suite", where=source)
        if depth > MAX_DEPTH:
            raise UserError(f"nested too deeply to be a suite (more than {MAX_DEPTH} levels)", "fix the YAML",
                            where=where)
        if isinstance(node, dict):
            stack += [(v, f"{path}.{shown(k, 30).strip(chr(39))}" if path else shown(k, 30).strip("'"), depth + 1)
                      for k, v in node.items()]
            secrets += [k for k in node if isinstance(k, str) and "@" in k]
        elif isinstance(node, list):
            stack += [(v, f"{path}[{i}]", depth + 1) for i, v in enumerate(node)]
        elif isinstance(node, bool):
            continue
        elif isinstance(node, int) and abs(node) > MAX_INT:
            raise UserError(f"{shown(node)} is past the largest number any tool takes ({MAX_INT})",
                            "give a smaller number", where=where)
        elif isinstance(node, str) and "@" in node:
            secrets.append(node)
    return secrets


def parse_suite(data: Any, source: str) -> Suite:
    if not isinstance(data, dict):
        raise UserError(f"{source}: a suite is a YAML mapping with name and workloads", "see docs/suites.md")
    urls = tuple(_bounded(data, source))
    try:
        return Suite.model_validate(data)
    except ValidationError as exc:
        problems = []
        for err in exc.errors():
            loc = tuple(err.get("loc", ()))
            msg = _message(err, loc)
            path = _loc_path(_trim_scalar_index(loc, data))
            if ": " in msg and msg.split(": ", 1)[0].startswith(("workloads[", "clients[", "variants[")):
                path, msg = msg.split(": ", 1)
            elif ": " in msg and re.fullmatch(r"[a-z_]+", msg.split(": ", 1)[0]):
                key, rest = msg.split(": ", 1)      # a model check names its field first: "duration: ..."
                if isinstance(_node(data, loc), dict) and key in _node(data, loc):
                    path, msg = f"{path}.{key}" if path else key, rest
            # pydantic and the validators echo the input: a URL's credentials, whatever they hold, go first
            path, msg = without_credentials(path, urls), without_credentials(msg, urls)
            if (path, msg) not in problems:
                problems.append((path, msg))
        # every problem, each at its YAML path, on the one line a bad input gets
        first_path, first = problems[0]
        rest = "".join(f"; {p}: {m}" if p else f"; {m}" for p, m in problems[1:])
        raise UserError(f"{first}{rest}", where=f"{source}: {first_path}" if first_path else source) from None


# The operator's Prometheus URL with its credentials, for a resumed run whose suite file is not given again
# (`cephbench lab env` prints the lab's, which has none)
PROMETHEUS_ENV = "CEPHBENCH_PROMETHEUS"


def resumed_suite(recorded: Any, source: str, given: Suite | None, env: dict[str, str]) -> Suite | None:
    """A resumed run's suite, read as the original run read it: run.json keeps the suite without the Prometheus
    URL's credentials (https://***@host), so they come from the suite file given again (`given`, which must be the
    recorded suite once its credentials are removed: else None), or from PROMETHEUS_ENV naming the same URL. A run
    whose URL had credentials and has neither is refused: it would send `***` as its user."""
    suite = parse_suite(recorded, source)
    if given is not None:
        return given if given.model_dump(mode="json") == suite.model_dump(mode="json") else None
    url = suite.settings.prometheus
    if url is None or "***@" not in url:
        return suite
    from_env = env.get(PROMETHEUS_ENV, "")
    if from_env and shown_url(from_env) == url and "***@" not in from_env:
        settings = suite.settings.model_copy(update={"prometheus": from_env})
        return suite.model_copy(update={"settings": settings})
    raise UserError(f"the run's Prometheus ({url}) takes credentials, which run.json does not keep",
                    f"give the run's suite file again (cephbench run SUITE --resume DIR), or set {PROMETHEUS_ENV} "
                    "to the URL with them", where="--resume")


def with_prometheus(suite: Suite, flag: str | None, env: Mapping[str, str]) -> tuple[Suite, str]:
    """The operator's Prometheus for a new run: `--prometheus`, else the suite's settings.prometheus, else
    PROMETHEUS_ENV (what `lab env` exports for a lab with monitoring, as CEPH_CONF names its cluster); and where the
    URL came from ('' when none names one). Either is checked as the suite's is, and refused in one line naming it."""
    if flag is not None:
        url, where = flag, "--prometheus"
    elif suite.settings.prometheus:
        return suite, "settings.prometheus"
    elif env.get(PROMETHEUS_ENV):
        url, where = env[PROMETHEUS_ENV], PROMETHEUS_ENV
    else:
        return suite, ""
    try:
        Settings.model_validate({"prometheus": url})
    except ValidationError as exc:
        msg = str(exc.errors()[0].get("msg", "not a URL")).removeprefix("Value error, ")
        raise UserError(without_credentials(msg), where=where) from None
    return suite.model_copy(update={"settings": suite.settings.model_copy(update={"prometheus": url})}), where


class _StrictLoader(getattr(yaml, "CSafeLoader", yaml.SafeLoader)):  # type: ignore[misc]
    """SafeLoader (libyaml's where PyYAML has it: several times faster) that refuses a key given twice in one
    mapping (PyYAML silently keeps the last)."""


def _mapping_without_duplicates(loader: _StrictLoader, node: yaml.MappingNode, deep: bool = False) -> dict:
    loader.flatten_mapping(node)
    seen: dict[Any, yaml.Node] = {}
    for key_node, _ in node.value:
        key = loader.construct_object(key_node, deep=True)
        try:
            hash(key)
        except TypeError:
            raise yaml.constructor.ConstructorError(
                None, None, "a key must be a plain value (a name), not a list or mapping", key_node.start_mark) from None
        if key in seen:
            first = seen[key].start_mark.line + 1
            raise yaml.constructor.ConstructorError(
                None, None, f"key {key!r} is given twice (first on line {first}); keep one", key_node.start_mark)
        seen[key] = key_node
    return loader.construct_mapping(node, deep=deep)


_StrictLoader.add_constructor(yaml.resolver.BaseResolver.DEFAULT_MAPPING_TAG, _mapping_without_duplicates)


def _measured(text: str, source: str) -> None:
    """Refuse, before parsing, a text of more values than MAX_NODES (counted from above: a value is at most one per
    comma or line) or of brackets nested past MAX_DEPTH (block nesting past it takes more than the file's bound)."""
    if text.count(",") + text.count("\n") > MAX_NODES:
        raise UserError(f"the suite has more than {MAX_NODES:,} values or lines", "write a smaller suite",
                        where=source)
    depth = 0
    for c in re.sub(r"[^][{}]+", "", text):
        depth += 1 if c in "[{" else -1
        if depth > MAX_DEPTH:
            raise UserError(f"the YAML is nested too deeply to be a suite (brackets more than {MAX_DEPTH} deep)",
                            "fix the YAML", where=source)


def read_yaml(text: str, source: str) -> Any:
    """YAML text -> data, with duplicate keys refused and errors as one line naming the file, line and column."""
    _measured(text, source)
    try:
        return yaml.load(text, Loader=_StrictLoader)  # noqa: S506 - a SafeLoader subclass
    except RecursionError:
        raise UserError("the YAML is nested too deeply to be a suite", "fix the YAML", where=source) from None
    except ValueError as exc:       # e.g. an integer of more than 4300 digits
        raise UserError(f"a value cannot be read: {exc}", "fix the YAML", where=source) from None
    except yaml.YAMLError as exc:
        mark = getattr(exc, "problem_mark", None)
        where = f"{source}:{mark.line + 1}:{mark.column + 1}" if mark else source
        problem = getattr(exc, "problem", None) or "not valid YAML"
        raise UserError(f"{problem}", "fix the YAML syntax", where=where) from None


# A suite is a page or two of YAML; a sweep of thousands of values is still far below this.
MAX_SUITE_BYTES = 4 * 1024**2


def load_suite(path: Path) -> Suite:
    hint = "give the path of a suite YAML, e.g. suites/quick.yaml"
    data = read_bytes(Path(path), "suite file", hint, MAX_SUITE_BYTES)
    try:
        text = data.decode("utf-8")
    except UnicodeDecodeError as exc:
        raise UserError(f"suite file {path} is not UTF-8 text (byte {exc.start} cannot be decoded)",
                        "give a YAML suite file, e.g. suites/quick.yaml") from None
    if "\0" in text:
        raise UserError(f"suite file {path} is binary, not YAML", "give a YAML suite file, e.g. suites/quick.yaml")
    return parse_suite(read_yaml(text, str(path)), str(path))
