"""Variants as data, before any cluster is touched: the order they run in, each option's value checked against
Ceph's own description of the option (`ceph config help NAME -f json`), the commands that apply and restore it,
and the ledger record that lets `cephbench cleanup` restore it after the run died.

Everything here is pure: run/options.py does the talking to the cluster.
"""

from __future__ import annotations

import difflib
import json
import math
from dataclasses import dataclass
from typing import Any, Sequence

from .units import parse_duration, parse_size

# option types whose values are whole numbers (Ceph 16: Option::TYPE_*)
_WHOLE = {"uint": 0, "int": None, "size": 0, "secs": 0, "millisecs": 0}
_TRUE, _FALSE = ("true", "yes", "on", "1"), ("false", "no", "off", "0")
# the daemon types whose daemons cephbench asks what they run with (config show); the others are not checked
CHECKED_TYPES = ("osd", "mon")


@dataclass(frozen=True)
class OptionSpec:
    """One option of one variant, as the suite gives it, with the YAML paths errors name."""

    who: str
    name: str
    value: Any              # as the suite gives it (a bool stays a bool, to be refused where a number belongs)
    path: str               # of the option, e.g. variants[1].options[0] or variants[2].sweep

    @property
    def key(self) -> tuple[str, str]:
        return (self.who, self.name)

    def value_path(self, index: int | None = None) -> str:
        return f"{self.path}.values[{index}]" if index is not None else f"{self.path}.value"


@dataclass(frozen=True)
class VariantSpec:
    name: str
    options: tuple[OptionSpec, ...]
    path: str                               # variants[i]
    sweep_index: int | None = None          # the value's index when a sweep made it
    lab: Any = None                         # the lab's shape (shape_plan.LabBuild); None: the lab as it is

    def value_path(self, opt: OptionSpec) -> str:
        return opt.value_path(self.sweep_index)


def variant_order(names: Sequence[str], block: int) -> list[str]:
    """The order of the variants in the `block`-th run of one configuration (a workload's parameter combination
    and repeat): forward in even blocks, backward in odd ones, so the plan reads A B | B A | A B ...: drift over
    the run (a cluster filling up, a neighbour's load) falls on every variant alike, and two blocks that meet
    share their variant, which saves a change of configuration."""
    return list(names) if block % 2 == 0 else list(reversed(names))


# ---- checking a value against `ceph config help` ------------------------------------------------------------

def close_name(word: str, known: Sequence[str]) -> str:
    close = difflib.get_close_matches(word, list(known), n=1, cutoff=0.75)
    return f" (did you mean {close[0]!r}?)" if close else ""


def needs_restart(help_: dict[str, Any]) -> bool:
    """An option the daemons read only when they start (Ceph: flag "startup", or not updatable at runtime)."""
    return "startup" in (help_.get("flags") or []) or help_.get("can_update_at_runtime") is False


def _bound(help_: dict[str, Any], key: str) -> float | None:
    v = help_.get(key)
    if v in (None, ""):
        return None
    try:
        return float(v)
    except (TypeError, ValueError):
        return None


def checked_value(help_: dict[str, Any], value: Any) -> str:
    """The text `ceph config set` gets for `value`, after the checks the monitor would make (type, range, the
    permitted values); ValueError says what is wrong. Sizes take cephbench's spelling (4MiB), durations
    (30s, 500ms) for options in seconds or milliseconds."""
    name, kind = help_.get("name", "the option"), help_.get("type", "str")
    shown = f"{value!r}" if isinstance(value, str) else str(value).lower() if isinstance(value, bool) else str(value)
    if kind == "bool":
        text = str(value).lower()
        if text in _TRUE:
            return "true"
        if text in _FALSE:
            return "false"
        raise ValueError(f"{shown} is not true or false, and {name} is a bool option")
    if kind in _WHOLE or kind == "float":
        if isinstance(value, bool):
            raise ValueError(f"{shown} is not a number: {name} takes {_what(kind)}")
        number = _number(value, kind)
        if number is None:
            raise ValueError(f"{shown} is not {_what(kind)}, which {name} takes")
        low, high = _bound(help_, "min"), _bound(help_, "max")
        if _WHOLE.get(kind) == 0 and number < 0:
            raise ValueError(f"{shown} is negative: {name} takes {_what(kind)} of zero or more")
        if low is not None and number < low:
            raise ValueError(f"{shown} is below {name}'s minimum {low:g}")
        if high is not None and number > high:
            raise ValueError(f"{shown} is above {name}'s maximum {high:g}")
        return str(int(number)) if kind in _WHOLE else repr(float(number))
    text = str(value).lower() if isinstance(value, bool) else str(value)
    allowed = [str(v) for v in help_.get("enum_values") or []]
    if allowed and text not in allowed:
        raise ValueError(f"{shown} is not one of {', '.join(allowed)}{close_name(text, allowed)}, which {name} takes")
    return text


def _what(kind: str) -> str:
    return {"uint": "a whole number", "int": "a whole number", "float": "a number",
            "size": "a size in bytes (e.g. 65536 or 64KiB)", "secs": "whole seconds (e.g. 30 or 30s)",
            "millisecs": "whole milliseconds (e.g. 500 or 500ms)"}[kind]


def _number(value: Any, kind: str) -> float | None:
    """The number a value stands for in an option of this type; None when it is none."""
    if isinstance(value, (int, float)):
        n = float(value)
    else:
        text = str(value).strip()
        try:
            n = float(text) if kind in ("float", "int", "uint") else float(int(text))
        except ValueError:
            try:
                if kind == "size":
                    n = float(parse_size(text))
                elif kind in ("secs", "millisecs"):
                    n = parse_duration(text) * (1000 if kind == "millisecs" else 1)
                else:
                    return None
            except ValueError:
                return None
    if not math.isfinite(n) or (kind in _WHOLE and not n.is_integer()):
        return None
    return n


# ---- applying and restoring ---------------------------------------------------------------------------------

def split_who(who: str) -> tuple[str, str]:
    """`osd/host:a` -> ("osd", "host:a"): the section and mask `ceph config dump` lists a setting under."""
    section, _, mask = who.partition("/")
    return section, mask


def previous_value(dump: list[dict[str, Any]], who: str, name: str) -> str | None:
    """What the configuration database holds for exactly this target and option; None: not set."""
    section, mask = split_who(who)
    for entry in dump or []:
        if entry.get("section") == section and entry.get("name") == name and (entry.get("mask") or "") == mask:
            return str(entry.get("value"))
    return None


def set_argv(who: str, name: str, value: str) -> list[str]:
    return ["ceph", "config", "set", who, name, value]


def restore_argv(who: str, name: str, previous: str | None) -> list[str]:
    """Back to exactly what was there: the previous value, or no setting at all."""
    return ["ceph", "config", "rm", who, name] if previous is None else set_argv(who, name, previous)


@dataclass(frozen=True)
class Restore:
    """A ledger entry's name says everything needed to restore one option (resources.json: kind config-option)."""

    who: str
    name: str
    previous: str | None        # None: it was not set
    restart: bool = False       # read only at start: the lab's OSDs restart after the restore

    def encode(self) -> str:
        return json.dumps({"who": self.who, "name": self.name, "previous": self.previous,
                           **({"restart": True} if self.restart else {})}, separators=(",", ":"))

    @classmethod
    def decode(cls, text: str) -> "Restore":
        d = json.loads(text)
        if not isinstance(d, dict) or not isinstance(d.get("who"), str) or not isinstance(d.get("name"), str):
            raise ValueError(f"not a config-option record: {text!r}")
        prev = d.get("previous")
        return cls(d["who"], d["name"], None if prev is None else str(prev), bool(d.get("restart")))

    def argv(self) -> list[str]:
        return restore_argv(self.who, self.name, self.previous)


def switch(applied: dict[tuple[str, str], str], target: dict[tuple[str, str], str]
           ) -> tuple[list[tuple[str, str]], list[tuple[str, str]]]:
    """From the options this run has set now to a variant's: (options to put back as they were, options to
    set), each once, in a stable order."""
    back = [k for k in applied if k not in target]
    to_set = [k for k, v in target.items() if applied.get(k) != v]
    return back, to_set


def daemon_type(who: str) -> str:
    """`osd.3` -> osd, `osd/host:a` -> osd, `client.rgw.x` -> client, `global` -> global."""
    return split_who(who)[0].split(".", 1)[0]


def is_one_daemon(who: str) -> bool:
    section, mask = split_who(who)
    return "." in section and not mask
