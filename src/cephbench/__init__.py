"""cephbench: is my Ceph cluster running at its maximum performance, and if not, why?"""

__version__ = "0.1.0"
