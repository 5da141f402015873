"""Reaching hosts and daemons: a command here (local.py), the librados connection (mon.py), commands over
ssh (remote.py), one tool on many hosts at one instant (fanout.py), the suite's client hosts."""
