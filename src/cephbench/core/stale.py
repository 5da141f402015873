"""Whether a change a dead run's ledger lists is still the run's own, from the cluster's own history.

A ledger entry outlives its change when a cleanup was skipped or a removal was done by hand: the flag the run set
was unset, and a person may have set it again since, for their own reasons. Undoing "the run's change" then would
undo theirs. So each entry records where the cluster's history stood before the run changed it (an osdmap epoch, a
config version), and cleanup reads the history since: the change is the run's only if nobody undid it in between.
When the history is gone (trimmed) or was never recorded, a person decides.
"""

from __future__ import annotations

from dataclasses import dataclass, field
from typing import Any, Callable

from .errors import OperationFailed

MAX_HISTORY = 2000      # osdmaps or config versions read to tell whose a change is; beyond that, a person decides

@dataclass(frozen=True)
class FlagVerdict:
    ours: list[str]             # set by the run and set ever since: to unset
    gone: list[str]             # not set now: nothing to undo
    others: dict[str, int]      # unset after the run set it, set again since (by someone else): flag -> epoch unset
    doubt: str | None = None    # why the history could not be read: a person decides


def flag_history(flags: list[str], epoch_before: int, dump: Callable[[int | None], dict]) -> FlagVerdict:
    """Whose each flag is, from the osdmaps since `epoch_before` (the epoch in which the run saw them missing,
    recorded in its ledger entry before it set them): the run's only if, once set, it stayed set in every osdmap
    up to now. `dump(None)` is the current `osd dump`, `dump(e)` that of epoch e (raising OperationFailed once the
    mon has trimmed it)."""
    def flags_of(d: dict) -> set[str]:
        return set(filter(None, str(d.get("flags", "")).split(",")))
    now = dump(None)
    current, last = flags_of(now), int(now.get("epoch") or 0)
    gone = [f for f in flags if f not in current]
    wanted = [f for f in flags if f in current]
    if not wanted:
        return FlagVerdict([], gone, {})
    if epoch_before <= 0 or last - epoch_before > MAX_HISTORY:
        why = "the entry records no osdmap epoch" if epoch_before <= 0 else \
            f"{last - epoch_before} osdmaps have passed since the run set them"
        return FlagVerdict([], gone, {}, f"cannot tell who set {', '.join(wanted)} ({why})")
    try:
        before = flags_of(dump(epoch_before))
    except OperationFailed as exc:
        return FlagVerdict([], gone, {}, f"cannot tell who set {', '.join(wanted)} (osdmap {epoch_before}: {exc})")
    if before & set(wanted):
        # the run records the epoch in which it saw them missing: set then, they were someone else's already
        return FlagVerdict([], gone, {}, f"{', '.join(sorted(before & set(wanted)))} already set in osdmap "
                                         f"{epoch_before}, where the entry says the run saw them missing: not "
                                         "the run's to unset")
    seen: set[str] = set()
    cleared: dict[str, int] = {}
    for epoch in range(epoch_before + 1, last):
        try:
            at = flags_of(dump(epoch))
        except OperationFailed as exc:
            return FlagVerdict([], gone, {}, f"cannot tell who set {', '.join(wanted)} (osdmap {epoch}: {exc})")
        for f in wanted:
            if f in at:
                seen.add(f)
            elif f in seen and f not in cleared:
                cleared[f] = epoch
    return FlagVerdict([f for f in wanted if f not in cleared], gone, cleared)


def history_state(run_id: str, set_to: str | None = None, **where: int | None) -> str:
    """A ledger entry's state: the run, when, where the cluster's history stood before its change, and the value
    it sets (`set_to`: cleanup undoes an option only while the cluster still holds a value the run set)."""
    import json
    import time
    return json.dumps({"run": run_id, "set_unix": round(time.time()),
                       **{k: v for k, v in where.items() if v is not None},
                       **({"set_to": [set_to]} if set_to is not None else {})})


def config_version(cluster: Any) -> int | None:
    """The configuration database's latest version (`config log 1`), or None when it cannot be read."""
    try:
        log = cluster.ceph_json("config", "log", "1")
    except OperationFailed:
        return None
    return max((int(c.get("version") or 0) for c in log if isinstance(c, dict)), default=0) \
        if isinstance(log, list) else None


@dataclass(frozen=True)
class OptionVerdict:
    ours: bool                  # set by the run and not put back since: to restore
    note: str = ""              # why there is nothing to restore
    doubt: str | None = None    # why the history could not be read: a person decides
    versions: list[int] = field(default_factory=list)      # the changes to the option since, in order
    # what the first change since found there (config log's previous_value; None: not set): the value to put back
    before: str | None = None


def option_history(who: str, name: str, previous: str | None, since: int | None,
                   read_log: Callable[[int], Any]) -> OptionVerdict:
    """Whose a config option is, from the configuration database's history (`config log N`, read_log(N)) since
    version `since` (recorded before the run set it): the run's only if no change since put back its previous value
    (`previous`, or no value: removed). One that was put back and changed again since is someone else's."""
    if since is None:
        return OptionVerdict(False, doubt=f"cannot tell who set {who} {name} (the entry records no config version)")
    try:
        latest = max((int(c["version"]) for c in read_log(1)), default=0)
        count = latest - since
        if count > MAX_HISTORY:
            return OptionVerdict(False, doubt=f"cannot tell who set {who} {name} ({count} configuration changes "
                                              "have been made since the run set it)")
        logged = read_log(count) if count > 0 else []
        sets = sorted((c for c in logged if int(c["version"]) > since), key=lambda c: int(c["version"]))
    except (OperationFailed, KeyError, TypeError, ValueError) as exc:
        return OptionVerdict(False, doubt=f"cannot tell who set {who} {name} (config log: {exc})")
    if [int(c["version"]) for c in sets] != list(range(since + 1, latest + 1)):
        return OptionVerdict(False, doubt=f"cannot tell who set {who} {name} (the configuration history since "
                                          f"version {since} is no longer kept)")
    keys = {f"{who}/{name}", *([name] if who == "global" else [])}
    mine = [(int(c["version"]), ch) for c in sets for ch in c.get("changes") or []
            if isinstance(ch, dict) and ch.get("name") in keys]
    changes = [(v, ch.get("new_value")) for v, ch in mine]
    versions = [v for v, _ in changes]
    if not changes:
        return OptionVerdict(False, f"{who} {name} was never changed (the run died before it set it)", None, versions)
    back = next((i for i, (_, new) in enumerate(changes) if new == previous), None)
    if back is None:
        return OptionVerdict(True, versions=versions, before=mine[0][1].get("previous_value"))
    if back == len(changes) - 1:
        return OptionVerdict(False, f"{who} {name} already put back (config version {changes[back][0]})",
                             None, versions)
    return OptionVerdict(False, f"{who} {name} was put back (config version {changes[back][0]}) after the run set it "
                                "and changed again since, not by this run: left as it is", None, versions)
