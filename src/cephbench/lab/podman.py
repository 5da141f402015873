"""podman as cephbench runs it: the command's prefix, the containers.conf it is given, and whether a container runs.

Everything cephbench starts with podman (the toolbox image's check, a `--containers` lab's daemons) goes through
`argv`: runc as the runtime when it is installed (crun, podman's preferred one, fails here: setrlimit on a cgroup v1
hybrid host), cgroupfs as the cgroup manager (no systemd is needed, and a container's limits are plain cgroup v1
files the lab can read), and CONTAINERS_CONF naming a file that empties podman's default ulimits (its built-in
nofile of 1048576 is refused by this kernel's setrlimit: every `podman run` failed before the file). No registry is
ever asked: images are imported from roots (lab/image.py).
"""

from __future__ import annotations

import os
import shutil
import subprocess
from pathlib import Path

CONTAINERS_CONF = """# written by cephbench (lab/podman.py): podman's default ulimits fail setrlimit here
[containers]
default_ulimits = []
"""


def exe() -> str | None:
    return shutil.which("podman")


def argv(podman: str) -> list[str]:
    """The prefix of every podman command cephbench runs."""
    runc = shutil.which("runc")
    return [podman, *(["--runtime", runc] if runc else []), "--cgroup-manager", "cgroupfs"]


def conf_env(directory: Path) -> dict[str, str]:
    """The environment of a podman command: CONTAINERS_CONF names `directory`/containers.conf, written if absent."""
    conf = directory / "containers.conf"
    if not conf.exists():
        conf.write_text(CONTAINERS_CONF)
    return {**os.environ, "CONTAINERS_CONF": str(conf)}


def problem(image: str, directory: Path, timeout_s: float = 120.0) -> str:
    """'' when podman runs a container of `image` here (`true`, host network), else why not, in one line: what a
    test skips with, and what `lab up --containers` refuses with."""
    podman = exe()
    if podman is None:
        return "podman is not installed (apt-get install podman runc; scripts/setup.sh installs both for the lab)"
    try:
        res = subprocess.run([*argv(podman), "run", "--rm", "--net", "host", image, "true"],
                             capture_output=True, text=True, timeout=timeout_s, env=conf_env(directory))
    except subprocess.TimeoutExpired:
        return f"podman did not run a container of {image} in {timeout_s:.0f} s"
    if res.returncode != 0:
        lines = [ln.strip() for ln in (res.stderr or res.stdout).splitlines() if ln.strip()]
        return f"podman cannot run a container here: {(lines or ['exit ' + str(res.returncode)])[-1]}"
    return ""
