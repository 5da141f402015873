"""The parts of the suite schema every kind's model is made of: field types (sizes, durations, counts, sweeps)
and the workload bases (a workload, one that runs on clients, one on RBD images, fio on RBD images).

A kind's model (its module in kinds/) subclasses a base here and names its descriptor in `descriptor`, which the
bases' checks read. suite/config.py builds the suite from the registered models.
"""

from __future__ import annotations

import types
from typing import Annotated, Any, ClassVar, Literal, Union, get_args, get_origin

from pydantic import (BeforeValidator, Discriminator, Field, SerializerFunctionWrapHandler,
                      Tag, create_model, field_validator, model_serializer, model_validator)

from ..core.loadsearch import DEFAULT_MAX, is_power_of_two
from ..core.planned import Params
from ..core.units import parse_duration, parse_size
from .kind import Kind
from ..core.settings import Strict      # the base of every model of a suite's


MAX_TEST_DURATION_S = 24 * 3600      # one test longer than a day is a typo, not a benchmark


def _positive_size(v: Any) -> int:
    n = parse_size(v)
    if n <= 0:
        raise ValueError(f"{v!r} must be greater than zero")
    return n


def test_duration(v: Any) -> float:
    """A test's length: the tools count whole seconds (rados bench) or close to it, so at least 1 s."""
    d = parse_duration(v)
    if d <= 0:
        raise ValueError(f"{v!r} must be longer than zero")
    if d < 1:
        raise ValueError(f"{v!r} is shorter than a second, which the tools cannot honour; give at least 1s")
    if d > MAX_TEST_DURATION_S:
        raise ValueError(f"{v!r} is longer than 24h for one test; give a shorter duration")
    return d


def whole_seconds(v: Any, tool: str) -> float:
    """A test's length for a tool that counts whole seconds (rados bench, rados load-gen)."""
    d = test_duration(v)
    if not d.is_integer():
        raise ValueError(f"{v!r}: {tool} counts whole seconds; give e.g. {max(1, round(d))}s")
    return d


def _count(v: Any) -> Any:
    """A count written as "4,16" was meant as a sweep: say how to write one."""
    if v == "auto":
        raise ValueError("'auto' is a search of its own, not one value of a sweep: write it alone, in place of the "
                         "list")
    if isinstance(v, str) and ("," in v or " " in v.strip()):
        parts = [p for p in v.replace(",", " ").split() if p]
        raise ValueError(f"{v!r} is text, not a number; for a sweep write a YAML list: [{', '.join(parts)}]")
    return v


def _as_list(v: Any) -> Any:
    return v if isinstance(v, list) else [v]


Size = Annotated[int, BeforeValidator(_positive_size)]
Duration = Annotated[float, BeforeValidator(test_duration)]
PositiveInt = Annotated[int, Field(gt=0, strict=True), BeforeValidator(_count)]


def Sweep(inner: Any) -> Any:  # noqa: N802 - reads as a type in the schema below
    """A parameter that is one value or a list of values (a sweep dimension)."""
    return Annotated[list[inner], BeforeValidator(_as_list), Field(min_length=1)]


def _latency_bound(v: Any) -> float:
    d = parse_duration(v)
    if d <= 0:
        raise ValueError(f"{v!r} must be longer than zero")
    if d > MAX_TEST_DURATION_S:
        raise ValueError(f"{v!r} is longer than 24h, longer than any test; give a latency a test can reach")
    return d


class Auto(Strict):
    """`auto` in place of a load (`concurrency: auto`, or `concurrency: {auto: {max: 64, latency_max: 50ms}}`): a
    search that doubles the load from 1 up to `max` and stops where the knee rule says more load no longer pays,
    or where the latency (p99 where the tool gives percentiles, else the mean) passes `latency_max`; with `repeats`,
    each step runs that many times and its noise is their spread."""
    max: Annotated[int, Field(strict=True)] = DEFAULT_MAX
    latency_max: Annotated[float, BeforeValidator(_latency_bound)] | None = None
    # runs of each step: the step's figure is the median run's and its noise their spread (core/loadsearch.py)
    repeats: Annotated[int, Field(strict=True, ge=1, le=9)] = 1

    @model_validator(mode="before")
    @classmethod
    def _auto(cls, v: Any) -> Any:
        if v == AUTO:
            return {}
        if isinstance(v, dict) and set(v) == {AUTO}:
            return {} if v[AUTO] is None else v[AUTO]
        return v

    @field_validator("max")
    @classmethod
    def _doubling(cls, v: int) -> int:
        if v < 1:
            raise ValueError(f"{v} is below 1: give the largest load the search may reach, a power of two (1, 2, "
                             f"4, ... {DEFAULT_MAX} by default)")
        if not is_power_of_two(v):
            raise ValueError(f"{v} is not a load the doubling from 1 reaches; give a power of two such as "
                             f"{2 ** (v.bit_length() - 1)} or {2 ** v.bit_length()}")
        return v

    @model_serializer(mode="wrap")
    def _as_written(self, handler: SerializerFunctionWrapHandler) -> dict[str, Any]:
        """Dumped as a suite writes it, `{auto: {...}}`: run.json keeps the suite's dump, and `run --resume` parses
        it again, which must read a search back, not a mapping where a count goes."""
        return {AUTO: handler(self)}


class ClientsAuto(Auto):
    """`clients: auto` (or `{auto: {max: 3, latency_max: 50ms}}`): a search of the client hosts the load comes from,
    1, 2, 4, ... up to `max` or, without it, every client host the run has (the suite's list, or the lab's client
    hosts, known once the run finds the lab). Hosts are counted, not doubled into being: a `max` need not be a power
    of two, and the last step is `max` itself (1, 2, 3 of three)."""
    max: Annotated[int, Field(strict=True)] | None = None      # type: ignore[assignment]

    @field_validator("max")
    @classmethod
    def _doubling(cls, v: int | None) -> int | None:
        if v is not None and v < 1:
            raise ValueError(f"{v} is below 1: give the most client hosts the search may use, or leave max out "
                             "for every client host")
        return v


AUTO = "auto"
SWEEP_TAG = "sweep"         # the sweep's branch name in pydantic's error paths (not a key of the suite)


def is_auto(v: Any) -> bool:
    return v == AUTO or isinstance(v, Auto) or (isinstance(v, dict) and AUTO in v)


def _sweep_or_auto(v: Any) -> str:
    return AUTO if is_auto(v) else SWEEP_TAG


def Searchable(inner: Any, auto: type[Auto] = Auto) -> Any:  # noqa: N802 - reads as a type in the schema below
    """A load that is a sweep of values, or `auto`: a search of it (Auto, or the search's own kind of it)."""
    return Annotated[Union[Annotated[auto, Tag(AUTO)], Annotated[Sweep(inner), Tag(SWEEP_TAG)]],
                     Discriminator(_sweep_or_auto)]


class SteadyState(Strict):
    """Run a phase in rounds of its `duration` until throughput is steady (SNIA: over the last `window` rounds the
    range is within `max_range` of their mean and the best-fit line moves less than `max_slope` of it), or for
    `max` in all."""
    max: Duration
    window: Annotated[int, Field(ge=2, strict=True)] = 5
    max_range: float = Field(0.2, gt=0, lt=1)
    max_slope: float = Field(0.1, gt=0, lt=1)


def steady_rounds_fit(st: SteadyState | None, durations: list[float] | None) -> None:
    """With steady_state a phase's duration is one round: max must hold a whole window of them."""
    if st is None:
        return
    if not durations:
        raise ValueError("steady_state: a phase runs in rounds of its duration; give duration (a length in bytes "
                         "or operations is not rounds of time)")
    need = st.window * max(durations)
    if st.max < need:
        raise ValueError(f"steady_state: max {st.max:g}s holds fewer than the window's {st.window} rounds of "
                         f"{max(durations):g}s (each round is one duration); give max at least {need:g}s")


class WorkloadModel(Strict):
    descriptor: ClassVar[Kind]                  # each kind's model names its descriptor
    name: str | None = None
    repeat: PositiveInt = 1
    steady_state: SteadyState | None = None
    # only under these of the suite's variants (None: under every one); e.g. EC pools on a BlueStore shape alone
    variants: Annotated[list[str], BeforeValidator(_as_list), Field(min_length=1)] | None = None

    @model_validator(mode="before")
    @classmethod
    def _auto_where_searched(cls, data: Any) -> Any:
        """`auto` on a load this kind's search does not double is named here, before its own field's check (`auto`
        elsewhere, a workload's name or a pool profile's, is what it is)."""
        if not isinstance(data, dict):
            return data
        mine = searched(cls.descriptor)
        loads = {n for k in _descriptors(WorkloadModel) for n in k.load_params} | {"instances", "clients"}
        autos = [key for key, v in data.items() if key in loads and is_auto(v)]
        for key in autos:
            if key not in mine:
                able = ", ".join(f"{k.name} ({' or '.join(searched(k))})" for k in _descriptors(WorkloadModel)
                                 if searched(k))
                has = (f"{cls.descriptor.name} searches {' or '.join(mine)}, not {key}" if mine
                       else f"{cls.descriptor.name} runs no search")
                raise ValueError(f"{key}: auto is a search, and {has}; searches run on {able}; give {key} a "
                                 "value or a list")
        if len(autos) > 1:
            # two loads doubled in one group would make no curve of either: which of them bent it?
            raise ValueError(f"{autos[1]}: auto is a search, and {autos[0]} is searched already: a search doubles "
                             f"one load; give {autos[1]} a value or a list, or search it in a workload of its own")
        return data

    @model_validator(mode="after")
    def _steady_state_kind(self) -> "WorkloadModel":
        kind = self.descriptor
        if self.steady_state is not None and not kind.steady_phases:
            able = ", ".join(k.name for k in _descriptors(WorkloadModel) if k.steady_phases)
            raise ValueError(f"steady_state: {kind.name} does not run in rounds; only {able} do (remove "
                             "steady_state here, or give the phase a longer duration)")
        return self


ClientCount = Annotated[Union[Annotated[int, Field(gt=0, strict=True)], Literal["all"]], BeforeValidator(_count)]


class ClientWorkload(WorkloadModel):
    """A kind whose tool runs on client hosts: `clients: N` (the first N of the suite's `clients:`) or `all`, a
    list being a sweep ([1, 2]: from one client, then from two), or `auto` where its kind searches them (a search:
    ClientsAuto); None: this machine only."""
    clients: Searchable(ClientCount, ClientsAuto) | None = None


def _ramp(v: Any) -> float:
    d = parse_duration(v)
    if d < 0:
        raise ValueError(f"{v!r} must not be negative")
    if d > MAX_TEST_DURATION_S:
        raise ValueError(f"{v!r} is longer than 24h for one warm-up; give a shorter ramp")
    return d


Ramp = Annotated[float, BeforeValidator(_ramp)]     # a warm-up before the measured part: 0 or longer


class RbdWorkload(ClientWorkload):
    """RBD images in a pool made for the group: `pool` holds the data (an erasure profile becomes a data pool
    with allow_ec_overwrites, the metadata going to `metadata_pool`, by default replicated size 3)."""

    pool: Sweep(str) = ["default"]
    metadata_pool: str | None = None
    images: PositiveInt = 1
    image_size: Size = 1024**3
    object_size: Size = 4 * 1024**2
    prefill: bool = True                   # sequential 4 MiB writes over every image before the tests
    read_unprefilled: bool = False         # run reads on images that were not prefilled (flagged in results)

    @field_validator("image_size", "object_size")
    @classmethod
    def _nonzero(cls, v: int) -> int:
        if v <= 0:
            raise ValueError("must be greater than zero")
        return v

    @model_validator(mode="after")
    def _reads_need_prefill(self) -> "RbdWorkload":
        kind = self.descriptor
        reads = [p for p in getattr(self, kind.phase_field) if p in kind.read_phases()]
        if reads and not self.prefill and not self.read_unprefilled:
            raise ValueError(f"{reads[0]} on images that were not prefilled reads unallocated space and measures "
                             "nothing real: set prefill: true, or read_unprefilled: true to run it anyway "
                             "(flagged in the results)")
        return self


class FioRbdWorkload(RbdWorkload):
    """fio on the group's RBD images, however it reaches them (librbd, krbd, a qemu-nbd export): its phases, block
    size, depth, clones per image, mix, duration and warm-up, and steady-state rounds that fit its max."""
    rw: Sweep(Literal["read", "write", "randread", "randwrite", "randrw"]) = ["randwrite", "randread"]
    block_size: Sweep(Size) = [4096]
    iodepth: Searchable(PositiveInt) = [32]
    numjobs: Sweep(PositiveInt) = [1]      # fio jobs per image
    rwmixread: int = Field(50, ge=0, le=100)
    duration: Sweep(Duration) = [30.0]
    ramp: Ramp = 0.0

    @model_validator(mode="after")
    def _steady_rounds_fit(self) -> "FioRbdWorkload":
        steady_rounds_fit(self.steady_state, self.duration)
        return self


def searched(kind: Kind) -> list[str]:
    """The loads a workload of this kind may search (`auto`): its search_param, and its client hosts where its
    driver takes them test by test."""
    return [p for p in (kind.search_param, "clients" if kind.searches_clients else None) if p]


def _descriptors(base: type[WorkloadModel]) -> list[Kind]:
    """The descriptors of every kind model made from `base`, in the order they were defined."""
    out: list[Kind] = []
    for m in base.__subclasses__():
        if "descriptor" in m.__dict__ and m.descriptor not in out:
            out.append(m.descriptor)
        out += [k for k in _descriptors(m) if k not in out]
    return out


# ---- a test's parameters, typed ----------------------------------------------------------------------------------

class KindParams(Params):
    """The parameters of one test of a kind (core/planned.py Params), read by role as its descriptor names them:
    its load, the size of one op and of its objects in bytes (None: it has none, or the test does not give it)."""
    descriptor: ClassVar[Kind]

    def _role(self, name: str | None) -> Any:
        return getattr(self, name, None) if name is not None else None

    @property
    def load(self) -> Any:
        return self._role(self.descriptor.load_param)

    @property
    def op_bytes(self) -> Any:
        return self._role(self.descriptor.op_size_param)

    @property
    def object_bytes(self) -> Any:
        return self._role(self.descriptor.object_size_param)


def _bare(t: Any) -> Any:
    return get_args(t)[0] if get_origin(t) is Annotated else t


def _element(annotation: Any) -> Any:
    """A sweep's element type, in a sweep or in a union with one (a search, None); None: no sweep."""
    t = _bare(annotation)
    if get_origin(t) is list:
        return get_args(t)[0]
    if get_origin(t) in (Union, types.UnionType):
        return next((e for arm in get_args(t) if (e := _element(arm)) is not None), None)
    return None


def one_value(annotation: Any) -> Any:
    """The type of one value of a suite model's field, as one test has it: a sweep's element (a search's too: the
    plan gives each step one load), the field's own type otherwise."""
    element = _element(annotation)
    return annotation if element is None else element


# a suite model's fields that are not a test's parameters, or are under another name: the plan's own (suite/plan.py
# _FIXED), and `duration`, which it gives as duration_s (Params); the phase field's value is `phase`
NOT_A_TEST_PARAM = frozenset({"name", "type", "variants", "duration"})


def test_params_model(model: type[WorkloadModel]) -> type[KindParams]:
    """The model of one test's parameters of a kind: each field of its suite model as one value (one_value), none
    required (a run directory of an older cephbench may lack one); keys the model does not declare are kept as
    given (Params). Made from the suite model, so that a field added there is typed here too."""
    kind = model.descriptor
    skip = NOT_A_TEST_PARAM | {kind.phase_field}
    fields: dict[str, Any] = {name: (one_value(f.annotation) | None, None)
                              for name, f in model.model_fields.items() if name not in skip}
    made = create_model(f"{model.__name__}Params", __base__=KindParams, **fields)
    made.descriptor = kind
    return made
