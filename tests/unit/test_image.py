"""The toolbox image's pure parts (lab/image.py): what pip is asked for, what tar streams into podman import, and
what the image is labelled with. The image itself is built and run against a lab in tests/lab/test_toolbox_image.py."""

from __future__ import annotations

from pathlib import Path

import pytest

from cephbench.core.errors import UserError
from cephbench.lab import image


def test_pip_installs_only_wheels_for_the_roots_python_and_glibc():
    argv = image.pip_target_argv("3.13", 41, Path("/s/site"), [Path("/w/cephbench-0.1.0-py3-none-any.whl")],
                                 "x86_64")
    joined = " ".join(argv)
    assert "--only-binary=:all: --python-version 3.13 --implementation cp --abi cp313" in joined
    assert "--target /s/site" in joined and argv[-1] == "/w/cephbench-0.1.0-py3-none-any.whl"
    platforms = [argv[i + 1] for i, a in enumerate(argv) if a == "--platform"]
    # the newest glibc first, down to manylinux1: a wheel tagged for any of them loads on Debian 13's glibc 2.41
    assert platforms[0] == "manylinux_2_41_x86_64" and "manylinux_2_17_x86_64" in platforms
    assert "manylinux_2_42_x86_64" not in platforms and platforms[-1] == "manylinux1_x86_64"


@pytest.mark.parametrize("version, minor", [("2.41-12", 41), ("2.36-9+deb12u14", 36), ("", 17), ("junk", 17)])
def test_glibc_minor_from_the_roots_libc6(version, minor):
    assert image.glibc_minor({"libc6": version} if version else {}) == minor


def test_the_roots_python_is_what_its_python3_links_to(tmp_path):
    bindir = tmp_path / "usr" / "bin"
    bindir.mkdir(parents=True)
    (bindir / "python3").symlink_to("python3.13")
    assert image.python_of(tmp_path) == "3.13"
    (bindir / "python3").unlink()
    (bindir / "python3").symlink_to("/usr/bin/pypy3")
    with pytest.raises(UserError, match="not to a python3.X"):
        image.python_of(tmp_path)


def test_tar_streams_the_root_then_only_paths_below_the_roots_own_directories():
    argv = image.tar_argv(Path("/roots/reef/root"), Path("/roots/.image-reef-x"))
    assert argv[:6] == ["tar", "--numeric-owner", "-C", "/roots/reef/root", "-c", "."]
    assert argv[6:8] == ["-C", "/roots/.image-reef-x"]
    # never the staging directory itself ("."), whose mode (0700, mkdtemp's) would become the image's /
    assert "." not in argv[8:] and all(p.startswith("./opt/") or p.startswith("./usr/") for p in argv[8:])


def test_the_image_targets_etc_ceph_and_is_labelled_with_what_it_was_made_from():
    facts = {"release": "reef", "ceph_version": "18.2.7+ds-1", "python": "3.13", "root_manifest_sha256": "ab",
             "source_sha256": "cd"}
    changes = image.import_changes(facts)
    assert "ENV CEPH_CONF=/etc/ceph/ceph.conf" in changes and f"WORKDIR {image.WORKDIR}" in changes
    assert next(c for c in changes if c.startswith("ENV PATH=")).startswith(f"ENV PATH={image.PREFIX}/bin:")
    assert {c for c in changes if c.startswith("LABEL ")} == {
        "LABEL io.cephbench.release=reef", "LABEL io.cephbench.ceph_version=18.2.7+ds-1",
        "LABEL io.cephbench.python=3.13",
        "LABEL io.cephbench.root_manifest_sha256=ab", "LABEL io.cephbench.source_sha256=cd"}


def test_the_source_digest_follows_the_sources_and_the_load_generator(tmp_path):
    repo = tmp_path / "repo"
    (repo / "src" / "cephbench" / "__pycache__").mkdir(parents=True)
    (repo / "suites").mkdir()
    (repo / "pyproject.toml").write_text("[project]\n")
    (repo / "README.md").write_text("readme\n")
    mod = repo / "src" / "cephbench" / "a.py"
    mod.write_text("x = 1\n")
    (repo / "suites" / "q.yaml").write_text("name: q\n")
    loadgen = repo / "loadgen-bin"
    loadgen.write_bytes(b"\x7fELF")
    first = image.source_digest(repo, loadgen)
    (repo / "src" / "cephbench" / "__pycache__" / "a.cpython-311.pyc").write_bytes(b"compiled")
    assert image.source_digest(repo, loadgen) == first          # compiled files are not sources
    mod.write_text("x = 2\n")
    second = image.source_digest(repo, loadgen)
    assert second != first
    loadgen.write_bytes(b"\x7fELF2")
    assert image.source_digest(repo, loadgen) != second
