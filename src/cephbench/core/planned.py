"""What the plan makes of a suite: each test (Test), the search a test is a step of (Search), and why a search
stopped (SearchStop, on its last step's result).

Apart from the results (core/results.py, which names them too) because `validate` needs these alone: the results'
two dozen models cost every start that imports them their classes, even built when first used.
"""

from __future__ import annotations

import functools
import json
from collections.abc import Callable, Mapping
from typing import Any, Iterator, Literal

from pydantic import (BaseModel, ConfigDict, PrivateAttr, ValidationError, ValidatorFunctionWrapHandler,
                      model_serializer, model_validator)


class Search(BaseModel):
    """The search a test is a step of (`concurrency: auto`, core/loadsearch.py): the load parameter it doubles from 1,
    the largest load it may reach, and the latency bound that stops it (None: none)."""

    model_config = ConfigDict(extra="forbid", frozen=True, defer_build=True)

    param: str                  # "concurrency", "iodepth", "clients"
    max: int
    latency_max_s: float | None = None
    repeats: int = 1            # runs of each step (its noise their spread); 1: its per-second spread


class SearchStop(BaseModel):
    """Why a search stopped, on its last step: throughput stopped growing (or latency grew more than the knee
    rule allows), the latency passed the suite's bound, the largest load was reached, the step failed, the
    capacity guard left no room for the next write, or its steps changed within their noise (the knee unclear)."""

    model_config = ConfigDict(extra="forbid", defer_build=True)

    reason: Literal["throughput", "latency", "max", "failed", "capacity", "unclear"]
    text: str


class Params(BaseModel, Mapping):   # type: ignore[misc]  # pydantic's metaclass is an ABCMeta
    """A test's parameters, typed: its kind's model of them (kinds/schema.py test_params_model: each field of its
    suite model as one value, registered here in PARAMS_OF by the kinds' registry), or this base for a kind the
    registry does not know (a run directory of another cephbench, an import of foreign output), whose keys are
    attributes all the same. Read by attribute for the typed value (`params.phase`); read as the mapping it was
    made from (`params["phase"]`, `params.get`, `in`, iteration) for the value as given; dumped as that mapping,
    key for key and in its order, so results.json and the match keys of earlier runs stay as they were."""

    model_config = ConfigDict(extra="allow", frozen=True, defer_build=True)

    # the plan's keys of every kind (suite/plan.py expand): the phase of its group it runs, its length, the pools
    # its data and its metadata go to, and the whole a part stands for (the network baseline's osd-hosts)
    phase: str | None = None
    duration_s: float | None = None
    pool_profile: dict[str, Any] | None = None
    metadata_profile: dict[str, Any] | None = None
    part_of: str | None = None

    _given: dict[str, Any] = PrivateAttr(default_factory=dict)

    @model_validator(mode="wrap")
    @classmethod
    def _keep_as_given(cls, data: Any, handler: ValidatorFunctionWrapHandler) -> "Params":
        if isinstance(data, Params):
            if isinstance(data, cls):
                return data
            data = data._given
        if not isinstance(data, Mapping):
            raise ValueError(f"a test's parameters are a mapping, not {type(data).__name__}")
        made = handler(dict(data))
        made._given = dict(data)
        return made

    @model_serializer(mode="plain")
    def _as_given(self) -> dict[str, Any]:
        return dict(self._given)

    # read as the mapping it was made from
    def __getitem__(self, key: str) -> Any:
        return self._given[key]

    def get(self, key: str, default: Any = None) -> Any:
        return self._given.get(key, default)

    def __contains__(self, key: object) -> bool:
        return key in self._given

    def __iter__(self) -> Iterator[str]:       # type: ignore[override]  # a mapping's keys, not pydantic's pairs
        return iter(self._given)

    def __len__(self) -> int:
        return len(self._given)

    def keys(self) -> Any:
        return self._given.keys()

    def items(self) -> Any:
        return self._given.items()

    def values(self) -> Any:
        return self._given.values()

    def __eq__(self, other: object) -> bool:
        if isinstance(other, Params):
            return self._given == other._given
        if isinstance(other, Mapping):
            return self._given == dict(other)
        return NotImplemented

    __hash__ = None     # type: ignore[assignment]  # as a dict's

    def __repr__(self) -> str:
        return f"{type(self).__name__}({self._given!r})"


# kind -> what makes the model of its tests' parameters, filled by the kinds' registry (kinds/__init__.py): the core
# names no kind. Made when a test of that kind is first made, not when the kinds are imported, which every command
# does (issue 39: a start pays for no model it does not use). A Test made before the kinds are imported carries the
# base (nothing in cephbench makes or reads one without importing them).
PARAMS_OF: dict[str, Callable[[], type[Params]]] = {}


@functools.lru_cache(maxsize=None)
def params_model(kind: str) -> type[Params]:
    """The model of a kind's tests' parameters; the base for a kind the registry does not know."""
    made = PARAMS_OF.get(kind)
    return made() if made is not None else Params


def params_of(kind: str, given: Mapping[str, Any]) -> Params:
    """A test's parameters as its kind's model; as the base where that model refuses them (a run directory of an
    older cephbench, an import of foreign output: they are read as they were written)."""
    for model in dict.fromkeys((params_model(kind) if kind in PARAMS_OF else Params, Params)):
        try:
            return model.model_validate(given)
        except ValidationError:
            pass
    # not even the plan's keys as the plan writes them: kept as given, as a test's parameters always were, and read
    # as given by attribute too
    made = Params.model_construct(**{k: v for k, v in given.items() if isinstance(k, str)})
    made._given = dict(given)
    return made


class Test(BaseModel):
    """One fully resolved benchmark: every parameter known, nothing left to expand."""

    model_config = ConfigDict(extra="forbid", frozen=True, defer_build=True)
    __test__ = False  # not a pytest test class

    id: str                     # unique in the run, e.g. "0003-rados-write-4MiB-t16-r1"
    index: int
    workload: str               # the suite's workload name
    kind: str                   # the driver: rados_bench, osd_bench, fio_rados, ...
    group: str                  # tests of one group share setup (a pool, written objects)
    params: Params              # its kind's model (PARAMS_OF), dumped as the mapping it was made from
    repeat: int = 1
    est_duration_s: float = 0.0
    variant: str | None = None  # the suite's variant it runs under; None: no variants (the cluster as it is)
    search: Search | None = None    # a step of a search; its load is in params as any load is

    @model_validator(mode="before")
    @classmethod
    def _typed_params(cls, data: Any) -> Any:
        """Its parameters as its kind's model (params_of)."""
        if isinstance(data, dict) and isinstance(data.get("params"), Mapping) \
                and (str(data.get("kind")) not in PARAMS_OF or type(data["params"]) is not params_model(data["kind"])):
            data = {**data, "params": params_of(str(data.get("kind")), data["params"])}
        return data

    def model_copy(self, *, update: Mapping[str, Any] | None = None, deep: bool = False) -> "Test":
        """A copy, whose parameters given in `update` are typed as a made test's are: pydantic's copy validates
        nothing, and would keep a mapping as it is."""
        if update is not None and "params" in update and not isinstance(update["params"], Params):
            update = {**update, "params": params_of(str(update.get("kind", self.kind)), update["params"])}
        return super().model_copy(update=update, deep=deep)

    def with_params(self, params: Mapping[str, Any]) -> "Test":
        """This test with other parameters, typed as its own are."""
        return self.model_copy(update={"params": params})

    def match_key(self) -> str:
        """What makes two tests of different runs comparable: driver, parameters and variant, not ids."""
        key: dict[str, Any] = {"kind": self.kind, "params": dict(self.params)}
        if self.variant is not None:        # without variants, the key of every run before them
            key["variant"] = self.variant
        return json.dumps(key, sort_keys=True)
