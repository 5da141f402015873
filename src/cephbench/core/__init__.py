"""The core: types, units, pure rules and the run's ledger; nothing here talks to a host or the cluster."""
