"""cephbench as a container image of a Ceph release, built here from that release's root: no registry.

The image is the release's lab root (lab/roots.py: Debian's ceph, rados, rbd, python3-rados, fio, and the daemons,
as cephadm's one image holds both the daemons and `cephadm shell`'s tools) with cephbench added: a virtual
environment at /opt/cephbench on the root's own python3 (`include-system-site-packages`, so librados' Python module
is the release's python3-rados; Debian 13's python is 3.13, the host's 3.11, so nothing of the host's .venv can be
copied into it), cephbench's dependencies installed there by the host's pip from PyPI as wheels for the root's
Python (`--python-version`, `--platform`, `--only-binary`: nothing is compiled and nothing runs in the root),
cephbench itself as a wheel built from this checkout, cephbench-loadgen (static Go), and the suites. The root and
those files are streamed by tar into `podman import` as `localhost/cephbench:<release>`, then a container of it
runs every tool once (`check`), so an image that is tagged works.

The image is labelled with what it was made from (the root's manifest, a digest of cephbench's sources and the load
generator): `ensure` keeps an image whose labels match and builds one whose do not.
"""

from __future__ import annotations

import fcntl
import hashlib
import json
import logging
import os
import platform
import shutil
import subprocess
import sys
import tempfile
import time
from dataclasses import dataclass
from pathlib import Path

from ..core.errors import UserError
from . import podman, roots

log = logging.getLogger(__name__)

REPO = "localhost/cephbench"
PREFIX = "/opt/cephbench"                 # the virtual environment in the image
WORKDIR = "/cephbench"                    # where a toolbox starts: mount a directory of suites and runs here
LABEL = "io.cephbench"                    # labels io.cephbench.<what>: an image without them is not ours
PIP_TIMEOUT_S = 900.0
IMPORT_TIMEOUT_S = 900.0
# what a toolbox must run, each printing its version: `check` runs them in a container of the new image
# `podman run`'s exit code for its own failure (no runtime, a refused setrlimit), and what a build then says
PODMAN_FAILED = 125
NO_RUN = "podman cannot run a container here"
TOOLS = ("cephbench --version", "ceph --version", "rados --version", "rbd --version", "fio --version",
         "cephbench-loadgen --version")


def checkout() -> Path:
    """This cephbench's source checkout (pyproject.toml beside src/cephbench), which the image's wheel is built
    from; an installed cephbench without its checkout cannot build an image."""
    here = Path(__file__).resolve().parents[3]
    if not (here / "pyproject.toml").is_file() or not (here / "src" / "cephbench").is_dir():
        raise UserError("building the toolbox image needs cephbench's source checkout, and this cephbench was "
                        "installed without it", "run it from a git clone (make image RELEASE=...)")
    return here


def loadgen_binary(repo: Path) -> Path:
    path = repo / "build" / "bin" / "cephbench-loadgen"
    if not path.is_file():
        raise UserError(f"the image holds cephbench-loadgen, which is not built ({path})",
                        "run make loadgen (it needs Go)")
    return path


def _source_files(repo: Path) -> list[Path]:
    src = repo / "src" / "cephbench"
    files = [p for p in src.rglob("*") if p.is_file() and "__pycache__" not in p.parts and not p.name.startswith(".")
             and (p.suffix in (".py", ".j2") or p.name == "py.typed")]
    return sorted([repo / "pyproject.toml", repo / "README.md", *files, *(repo / "suites").glob("*.yaml")])


def source_digest(repo: Path, loadgen: Path) -> str:
    """A digest of what cephbench puts in the image: its sources, pyproject, the suites and the load generator."""
    h = hashlib.sha256()
    for p in [*_source_files(repo), loadgen]:
        h.update(str(p.relative_to(repo)).encode() + b"\0" + p.read_bytes() + b"\0")
    return h.hexdigest()


def tag(release: str) -> str:
    return f"{REPO}:{release}"


@dataclass(frozen=True)
class Image:
    """An image of ours, as podman describes it."""

    release: str
    ref: str                 # localhost/cephbench:<release>
    id: str
    size_bytes: int
    labels: dict[str, str]

    def label(self, what: str) -> str:
        return self.labels.get(f"{LABEL}.{what}", "")


def python_of(root: Path) -> str:
    """The root's python3 version, 'X.Y', from what /usr/bin/python3 links to (Debian: python3.13)."""
    target = os.readlink(root / "usr" / "bin" / "python3")
    name = Path(target).name
    if not name.startswith("python3."):
        raise UserError(f"{root}/usr/bin/python3 links to {target}, not to a python3.X", "rebuild the root")
    return name.removeprefix("python")


def glibc_minor(packages: dict[str, str]) -> int:
    """The root's glibc's minor version (libc6 2.41-... -> 41): the newest manylinux wheels its python can load."""
    version = packages.get("libc6", "")
    try:
        major, minor = version.split("-")[0].split(".")[:2]
        return int(minor) if major == "2" else 17
    except ValueError:
        return 17            # manylinux2014's, which every Debian supported here exceeds


def pip_target_argv(python: str, glibc: int, target: Path, wheels: list[Path], machine: str) -> list[str]:
    """The host pip's install of cephbench's wheel and its dependencies into the image's site-packages, as wheels
    for the root's Python and glibc only: pip never compiles anything nor runs the root's python."""
    abi = "cp" + python.replace(".", "")
    platforms = [f"manylinux_2_{m}_{machine}" for m in range(glibc, 4, -1)]
    platforms += [f"manylinux2014_{machine}", f"manylinux2010_{machine}", f"manylinux1_{machine}"]
    argv = [sys.executable, "-m", "pip", "install", "--quiet", "--disable-pip-version-check", "--no-compile",
            "--target", str(target), "--only-binary=:all:", "--python-version", python, "--implementation", "cp",
            "--abi", abi]
    for p in platforms:
        argv += ["--platform", p]
    return argv + [str(w) for w in wheels]


def _run(argv: list[str], what: str, timeout_s: float, **kw) -> subprocess.CompletedProcess:
    try:
        res = subprocess.run(argv, capture_output=True, text=True, timeout=timeout_s, **kw)
    except subprocess.TimeoutExpired:
        raise UserError(f"{what} took over {timeout_s:.0f} s: stopped", "nothing was kept") from None
    if res.returncode != 0:
        tail = [ln.strip() for ln in (res.stderr or res.stdout).splitlines() if ln.strip()][-1:] or ["no output"]
        raise UserError(f"{what} failed (exit {res.returncode}): {tail[0]}", "nothing was kept")
    return res


def _venv(staging: Path, python: str) -> Path:
    """/opt/cephbench as a virtual environment of the root's python3, written by hand (the root has no ensurepip,
    and nothing runs in the root): pyvenv.cfg, bin/python3 linking to the root's, and its site-packages."""
    prefix = staging / PREFIX.lstrip("/")
    (prefix / "bin").mkdir(parents=True)
    site = prefix / "lib" / f"python{python}" / "site-packages"
    site.mkdir(parents=True)
    (prefix / "pyvenv.cfg").write_text(f"home = /usr/bin\ninclude-system-site-packages = true\nversion = {python}\n")
    for name in ("python3", "python", f"python{python}"):
        (prefix / "bin" / name).symlink_to("/usr/bin/python3")
    script = prefix / "bin" / "cephbench"
    script.write_text(f"#!{PREFIX}/bin/python3\nimport sys\n\nfrom cephbench.entry import main\n\nsys.exit(main())\n")
    script.chmod(0o755)
    return site


def _installed(site: Path) -> dict[str, str]:
    out = {}
    for d in site.glob("*.dist-info"):
        name, _, version = d.name.removesuffix(".dist-info").rpartition("-")
        out[name] = version
    return dict(sorted(out.items()))


def stage(root: roots.Root, repo: Path, loadgen: Path, staging: Path, digest: str) -> dict:
    """Everything the image adds to the root, under `staging`: the venv with cephbench and its dependencies,
    cephbench-loadgen, the suites, and /opt/cephbench/image.json saying what they are."""
    python = python_of(root.path)
    site = _venv(staging, python)
    src = staging / "src-copy"     # the wheel is built from a copy: setuptools writes build/ and egg-info beside it
    src.mkdir()
    shutil.copy2(repo / "pyproject.toml", src)
    shutil.copy2(repo / "README.md", src)
    shutil.copytree(repo / "src" / "cephbench", src / "src" / "cephbench",
                    ignore=shutil.ignore_patterns("__pycache__", ".*"))
    wheels = staging / "wheels"
    _run([sys.executable, "-m", "pip", "wheel", "--quiet", "--disable-pip-version-check", "--no-deps",
          "--no-build-isolation", "-w", str(wheels), str(src)], "building cephbench's wheel", PIP_TIMEOUT_S)
    built = sorted(wheels.glob("cephbench-*.whl"))
    _run(pip_target_argv(python, glibc_minor(root.packages), site, built, platform.machine()),
         f"installing cephbench's wheels for Python {python} (pip, from PyPI)", PIP_TIMEOUT_S)
    shutil.rmtree(site / "bin", ignore_errors=True)    # pip's scripts name the host's python; bin/cephbench is ours
    bindir = staging / "usr" / "local" / "bin"
    bindir.mkdir(parents=True)
    shutil.copy2(loadgen, bindir / loadgen.name)
    share = staging / "usr" / "share" / "cephbench" / "suites"
    share.mkdir(parents=True)
    for s in sorted((repo / "suites").glob("*.yaml")):
        shutil.copy2(s, share / s.name)
    facts = {"release": root.release, "ceph_version": root.ceph_version, "suite": root.suite, "python": python,
             "root_manifest_sha256": root.manifest_sha256, "source_sha256": digest, "python_packages": _installed(site)}
    (staging / PREFIX.lstrip("/") / "image.json").write_text(json.dumps(facts, indent=1) + "\n")
    return facts


def import_changes(facts: dict) -> list[str]:
    """podman import's --change lines: the toolbox's environment and our labels."""
    labels = {"release": facts["release"], "ceph_version": facts["ceph_version"], "python": facts["python"],
              "root_manifest_sha256": facts["root_manifest_sha256"], "source_sha256": facts["source_sha256"]}
    return [f"ENV PATH={PREFIX}/bin:/usr/local/sbin:/usr/local/bin:/usr/sbin:/usr/bin:/sbin:/bin",
            # a toolbox's cluster is the one in /etc/ceph: `cephbench run SUITE` targets it without -c
            "ENV CEPH_CONF=/etc/ceph/ceph.conf",
            f"WORKDIR {WORKDIR}", 'CMD ["/bin/bash"]',
            *(f"LABEL {LABEL}.{k}={v}" for k, v in labels.items())]


def tar_argv(root: Path, staging: Path) -> list[str]:
    """The root, then the staged files: only paths below directories the root already has, so no directory of the
    root gets the staging directory's owner or mode."""
    return ["tar", "--numeric-owner", "-C", str(root), "-c", ".", "-C", str(staging),
            "." + PREFIX, "./usr/local/bin/cephbench-loadgen", "./usr/share/cephbench"]


def inspect(ref: str) -> Image | None:
    """Our image called `ref`, or None (no such image, or one without our labels: not ours)."""
    exe = podman.exe()
    if exe is None:
        return None
    res = subprocess.run([exe, "image", "inspect", ref], capture_output=True, text=True, timeout=60)
    if res.returncode != 0:
        return None
    try:
        data = json.loads(res.stdout)[0]
        labels = {str(k): str(v) for k, v in (data.get("Labels") or data["Config"].get("Labels") or {}).items()}
        img = Image(labels.get(f"{LABEL}.release", ""), ref, str(data["Id"]), int(data.get("Size") or 0), labels)
    except (ValueError, KeyError, IndexError, TypeError):
        return None
    return img if img.release else None


def list_images() -> list[Image]:
    found = (inspect(tag(name)) for name in roots.RELEASES)
    return [i for i in found if i is not None]


def check(ref: str, conf_dir: Path) -> str:
    """Every tool of the toolbox, run once in a container of `ref`; their versions, one a line. The python that runs
    cephbench must load the release's librados module."""
    exe = podman.exe()
    assert exe is not None
    probe = ("import sys, rados, cephbench; print('python', '.'.join(map(str, sys.version_info[:3])), "
             "'rados', rados.__file__)")
    script = " && ".join([*TOOLS, f"{PREFIX}/bin/python3 -c \"{probe}\""])
    argv = [*podman.argv(exe), "run", "--rm", "--net", "none", ref, "/bin/sh", "-c", script]
    try:
        res = subprocess.run(argv, capture_output=True, text=True, timeout=300.0, env=podman.conf_env(conf_dir))
    except subprocess.TimeoutExpired:
        raise UserError(f"checking the tools of {ref} took over 300 s: stopped", "nothing was kept") from None
    tail = ([ln.strip() for ln in (res.stderr or res.stdout).splitlines() if ln.strip()] or ["no output"])[-1]
    if res.returncode == PODMAN_FAILED:
        # podman's own failure, before anything ran in the container (a tool's failure is its own exit code)
        raise UserError(f"{NO_RUN}: {tail}", "apt-get install runc (crun fails on cgroup v1 hosts); nothing was kept")
    if res.returncode != 0:
        raise UserError(f"checking the tools of {ref} failed (exit {res.returncode}): {tail}", "nothing was kept")
    return res.stdout


def build(release: str, progress=lambda msg: None) -> Image:
    """The image of `release` made now (its root built first if not cached), checked, and tagged."""
    exe = podman.exe()
    if exe is None:
        raise UserError("building the toolbox image needs podman, which is not installed",
                        "apt-get install podman runc")
    repo = checkout()
    loadgen = loadgen_binary(repo)
    root = roots.ensure(release, progress=progress, where="--build")
    digest = source_digest(repo, loadgen)
    ref = tag(root.release)
    old = inspect(ref)
    t0 = time.monotonic()
    staging = Path(tempfile.mkdtemp(prefix=f".image-{root.release}-", dir=roots.roots_dir()))
    try:
        progress(f"installing cephbench and its wheels for the {root.release} root's python")
        facts = stage(root, repo, loadgen, staging, digest)
        progress(f"importing {root.path} and cephbench into podman as {ref}")
        build_ref = f"{REPO}:{root.release}-build-{os.getpid()}"
        tar = subprocess.Popen(tar_argv(root.path, staging), stdout=subprocess.PIPE, stderr=subprocess.PIPE)
        try:
            imp = subprocess.run([exe, "import", *(a for c in import_changes(facts) for a in ("--change", c)),
                                  "-", build_ref], stdin=tar.stdout, capture_output=True, text=True,
                                 timeout=IMPORT_TIMEOUT_S)
        finally:
            assert tar.stdout is not None
            tar.stdout.close()
            tar_err = tar.stderr.read().decode(errors="replace") if tar.stderr else ""
            tar.wait()
        if tar.returncode != 0 or imp.returncode != 0:
            why = tar_err.strip() if tar.returncode != 0 else imp.stderr.strip()
            raise UserError(f"importing the {root.release} image failed: {(why.splitlines() or ['?'])[-1]}",
                            "nothing was kept")
        try:
            progress(f"checking {build_ref}: {', '.join(t.split()[0] for t in TOOLS)} and librados' python module")
            versions = check(build_ref, staging)
            subprocess.run([exe, "tag", build_ref, ref], check=True, capture_output=True, timeout=60)
        finally:
            subprocess.run([exe, "rmi", build_ref], capture_output=True, timeout=120)   # the tag only, when tagged
    finally:
        shutil.rmtree(staging, ignore_errors=True)
    img = inspect(ref)
    assert img is not None
    # the images this one replaces, untagged now: ours by their labels. One a container still used (a lab in
    # containers runs the release's image) was kept then; it goes now, if nothing uses it any more
    res = subprocess.run([exe, "images", "--quiet", "--no-trunc", "--filter", "dangling=true", "--filter",
                          f"label={LABEL}.release={root.release}"], capture_output=True, text=True, timeout=120)
    for old_id in {*res.stdout.split(), *([old.id] if old is not None and old.id != img.id else [])}:
        subprocess.run([exe, "rmi", old_id], capture_output=True, timeout=120)
    log.info("%s: %s", ref, versions.strip().replace("\n", "; "))
    progress(f"built {ref} in {time.monotonic() - t0:.0f} s ({img.size_bytes / 2**20:.0f} MiB, ceph "
             f"{img.label('ceph_version')}, python {img.label('python')})")
    return img


def ensure(release: str, progress=lambda msg: None, daemons_only: bool = False) -> Image:
    """The image of `release`: the one podman holds when it was made from today's root and sources, else a new one.
    `daemons_only` (a lab in containers: its daemons are the root's packages, not cephbench): any image of today's
    root will do. One build of a release at a time (a lock on its root's directory: no lock file is left): a
    second process waits for the first's image and uses it (two lab tests in two shares of `make test-lab`)."""
    rel = roots.release(release, where="--build")
    current = _current(rel.name, daemons_only)
    if current is not None:
        return current
    if podman.exe() is None:
        raise UserError("building the toolbox image needs podman, which is not installed",
                        "apt-get install podman runc")
    root = roots.ensure(rel.name, progress=progress, where="--build")
    fd = os.open(root.dir, os.O_RDONLY | os.O_DIRECTORY)
    try:
        try:
            fcntl.flock(fd, fcntl.LOCK_EX | fcntl.LOCK_NB)
        except BlockingIOError:
            progress(f"another process is building the {rel.name} image: waiting for it")
            fcntl.flock(fd, fcntl.LOCK_EX)
        return _current(rel.name, daemons_only) or build(rel.name, progress)
    finally:
        os.close(fd)


def _current(release: str, daemons_only: bool) -> Image | None:
    """Our image of `release` when it was made from today's root (and, unless `daemons_only`, sources)."""
    current = inspect(tag(release))
    if current is None or podman.exe() is None:
        return None
    root = roots.read_root(roots.roots_dir() / release)
    if root is None or roots.whole(root) or current.label("root_manifest_sha256") != root.manifest_sha256:
        return None
    if daemons_only:
        return current
    repo = checkout()
    return current if current.label("source_sha256") == source_digest(repo, loadgen_binary(repo)) else None


def remove(release: str) -> Image:
    """Remove our image of `release` (only one with our labels); refused while a container uses it."""
    rel = roots.release(release, where="--remove")
    img = inspect(tag(rel.name))
    if img is None:
        raise UserError(f"podman holds no cephbench image of {rel.name}: nothing was removed",
                        "cephbench lab image lists them", where="--remove")
    exe = podman.exe()
    assert exe is not None
    res = subprocess.run([exe, "rmi", img.ref], capture_output=True, text=True, timeout=120)
    if res.returncode != 0:
        why = (res.stderr.strip().splitlines() or ["?"])[-1]
        raise UserError(f"podman did not remove {img.ref}: {why}", "stop the containers that use it first",
                        where="--remove")
    return img
