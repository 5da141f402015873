"""The evidence a test carries (issue 16): Ceph's own counters, the hosts' disks and links, other clients' load.
Pure parsers live apart from the code that collects, so they are tested on real captured output."""
