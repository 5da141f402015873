"""Which client hosts a suite names (`clients:`): its list of hosts, or the multi-host lab's client hosts; the
searches of them checked against how many there are."""

from __future__ import annotations

from ..core.errors import UserError
from ..core.settings import Settings
from ..hosts.clients import Client
from ..hosts.remote import host_ref
from ..kinds.schema import Auto
from .config import Suite


def resolve_clients(suite: Suite, settings: Settings, lab: dict | None) -> list[Client]:
    """The suite's client hosts; `lab`: the client hosts of the multi-host lab `lab` (its lab.json topology)."""
    if suite.clients is None:
        return []
    if suite.clients == "lab":
        names = [h["name"] for h in (lab or {}).get("hosts", []) if h.get("role") == "client"]
        if not names:
            what = "the target is not a multi-host lab" if not lab else "the multi-host lab has no client hosts"
            raise UserError(f"clients: lab names the multi-host lab's client hosts, and {what}",
                            "start one with 'cephbench lab up --hosts 3 --clients 2', or list the client hosts",
                            where="clients")
        clients = [Client(n, host_ref(n, settings.ssh), "clients") for n in names]
        for i, w in enumerate(suite.workloads):
            counts = getattr(w, "clients", None)
            if isinstance(counts, Auto):        # a search of them: up to its max, or every one
                if counts.max is not None and counts.max > len(clients):
                    raise UserError(f"a search of up to {counts.max} client hosts, and the lab has {len(clients)}",
                                    f"give max at most {len(clients)}, or leave it out to search up to every one",
                                    where=f"workloads[{i}].clients.auto.max")
                continue
            for n in counts or []:
                if isinstance(n, int) and n > len(clients):
                    raise UserError(f"{n} clients, and the lab has {len(clients)} client hosts",
                                    f"give at most {len(clients)}, or all", where=f"workloads[{i}].clients")
        return clients
    return [Client(n, host_ref(n, settings.ssh), f"clients[{j}]") for j, n in enumerate(suite.clients)]
