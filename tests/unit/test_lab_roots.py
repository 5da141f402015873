"""Roots of other Ceph releases (lab/roots.py, lab/chroot.py): the pure parts, and the bad input of `lab up
--release` and `lab roots`, each one line with exit 2 that makes and removes nothing."""

from __future__ import annotations

import json
import shutil
from pathlib import Path

import pytest

from clirun import cephbench
from cephbench.core.errors import UserError
from cephbench.lab import chroot, roots

FIXTURES = Path(__file__).resolve().parents[1] / "fixtures" / "lab"


def one_line_exit_2(res, *fragments):
    assert res.returncode == 2, (res.returncode, res.stdout, res.stderr)
    lines = res.stderr.strip().splitlines()
    assert len(lines) == 1 and lines[0].startswith("cephbench: "), res.stderr
    for f in fragments:
        assert f in lines[0], lines[0]


def test_releases_offered_and_a_did_you_mean():
    assert roots.release("Reef").suite == "trixie"
    assert roots.release("tentacle").suite == "sid"
    with pytest.raises(UserError) as e:
        roots.release("quincy")
    assert "pacific, reef, tentacle" in e.value.one_line()
    with pytest.raises(UserError) as e:
        roots.release("reaf")
    assert "did you mean reef?" in e.value.one_line() and e.value.where == "--release"


@pytest.mark.parametrize("text, name", [
    ("ceph version 16.2.15 (618f440892089921c3e944a991122ddc44e60516) pacific (stable)", "pacific"),
    ("ceph version 18.2.7 (6b0e988052ec84cf2d4a54ff9bbbc5e720b621ad) reef (stable)", "reef"),
    ("20.2.4+ds-1", "tentacle"),
    ("", ""),
])
def test_release_of_version(text, name):
    assert roots.release_of_version(text) == name


def test_plan_builds_into_a_staging_directory_with_the_suite_and_its_apt_options(tmp_path):
    reef = roots.plan_build(roots.release("reef"), tmp_path, 42, "/usr/bin/mmdebstrap")
    assert reef.final == tmp_path / "reef" and reef.staging == tmp_path / ".reef.build-42"
    assert reef.argv[-2:] == ("trixie", str(tmp_path / ".reef.build-42" / "root"))
    assert not any(a.startswith("--aptopt") for a in reef.argv)
    include = next(a for a in reef.argv if a.startswith("--include="))
    for pkg in ("ceph-osd", "radosgw", "fio", "iperf3", "openssh-server"):
        assert pkg in include.split("=", 1)[1].split(",")
    sid = roots.plan_build(roots.release("tentacle"), tmp_path, 42)
    assert '--aptopt=Acquire::Check-Valid-Until "false"' in sid.argv and sid.argv[-2] == "sid"


def test_dpkg_query_of_a_real_root_and_its_manifest_round_trip(tmp_path):
    packages = roots.parse_dpkg_query((FIXTURES / "dpkg-query-trixie-reef.txt").read_text())
    assert packages["ceph-osd"].startswith("18.2.") and packages["fio"]
    manifest = roots.manifest_json(roots.release("reef"), packages, 1.7e9, 210.0, 700 * 2**20, ("mmdebstrap",))
    d = tmp_path / "reef"
    text = json.dumps(manifest)
    root = roots.parse_manifest(text, d)
    assert root is not None and root.ceph_version == packages["ceph-osd"] and root.packages == packages
    assert root.record()["manifest_sha256"] == root.manifest_sha256 and len(root.manifest_sha256) == 64
    # a manifest of another release, or not ours, names no root here
    assert roots.parse_manifest(text, tmp_path / "tentacle") is None
    assert roots.parse_manifest(json.dumps({**manifest, "what": "x"}), d) is None
    assert roots.parse_manifest("{", d) is None


def test_a_root_without_its_binaries_is_not_whole(tmp_path):
    d = tmp_path / "reef"
    (d / "root" / "usr" / "bin").mkdir(parents=True)
    packages = roots.parse_dpkg_query((FIXTURES / "dpkg-query-trixie-reef.txt").read_text())
    (d / roots.MANIFEST).write_text(json.dumps(roots.manifest_json(roots.release("reef"), packages, 1.7e9, 1.0, 1, ())))
    root = roots.read_root(d)
    assert root is not None and "usr/bin/ceph-osd" in roots.whole(root)
    for b in roots.ESSENTIAL:
        if b != "usr/bin/fio":
            (d / "root" / b).touch()
    # the disk baseline's fio runs from the root: a root without it is rebuilt
    assert "lacks usr/bin/fio," in roots.whole(root)
    (d / "root" / "usr/bin/fio").touch()
    # Reef's mgr cannot load Debian 13's bcrypt: a Reef root without the module in its place is not whole
    shim = roots.MGR_BCRYPT_SHIM[0]
    assert shim in roots.whole(root)
    (d / "root" / shim).parent.mkdir(parents=True)
    (d / "root" / shim).write_text(roots.MGR_BCRYPT_SHIM[1])
    assert roots.whole(root) == ""
    assert [r.release for r in roots.list_roots(tmp_path)] == ["reef"]


def test_a_root_built_from_an_older_package_list_is_not_whole(tmp_path):
    """A cached root built before a package joined the list (iperf3, say) is detected by its manifest, and `lab up`
    rebuilds it rather than let this machine's tool stand in for the release's."""
    d = tmp_path / "reef"
    packages = roots.parse_dpkg_query((FIXTURES / "dpkg-query-trixie-reef.txt").read_text())
    del packages["iperf3"]
    (d / "root").mkdir(parents=True)
    (d / roots.MANIFEST).write_text(json.dumps(roots.manifest_json(roots.release("reef"), packages, 1.7e9, 1.0, 1, ())))
    for p in (*roots.ESSENTIAL, roots.MGR_BCRYPT_SHIM[0]):
        (d / "root" / p).parent.mkdir(parents=True, exist_ok=True)
        (d / "root" / p).touch()
    root = roots.read_root(d)
    assert root is not None
    assert roots.whole(root) == f"{root.manifest} lists no iperf3 (built from an older package list)"


def test_remove_only_a_directory_with_our_manifest(tmp_path, monkeypatch):
    monkeypatch.setenv("CEPHBENCH_ROOTS_DIR", str(tmp_path))
    precious = tmp_path / "reef"
    (precious / "root").mkdir(parents=True)
    (precious / "root" / "data").write_text("keep")
    res = cephbench("lab", "roots", "--remove", "reef")
    one_line_exit_2(res, "no cephbench root of reef", "--remove")
    assert (precious / "root" / "data").read_text() == "keep"
    (precious / roots.MANIFEST).write_text(json.dumps(roots.manifest_json(
        roots.release("reef"), {"ceph-osd": "18.2.7+ds-1"}, 1.7e9, 1.0, 1, ())))
    res = cephbench("lab", "roots")
    assert res.returncode == 0 and "reef" in res.stdout and "18.2.7+ds-1" in res.stdout
    res = cephbench("lab", "roots", "--remove", "reef")
    assert res.returncode == 0, res.stderr
    assert not precious.exists()
    one_line_exit_2(cephbench("lab", "roots", "--remove", "quincy"), "not offered", "--remove")


def test_a_missing_mmdebstrap_is_one_line_and_leaves_nothing(tmp_path, monkeypatch):
    monkeypatch.setenv("CEPHBENCH_ROOTS_DIR", str(tmp_path / "roots"))
    monkeypatch.setattr(roots.shutil, "which", lambda name: None)
    with pytest.raises(UserError) as e:
        roots.ensure("tentacle")
    assert "mmdebstrap" in e.value.one_line() and "apt-get install mmdebstrap" in e.value.one_line()
    assert not (tmp_path / "roots").exists()


def test_a_directory_in_the_roots_place_that_is_not_ours_is_left_alone(tmp_path, monkeypatch):
    monkeypatch.setenv("CEPHBENCH_ROOTS_DIR", str(tmp_path))
    (tmp_path / "reef").mkdir()
    (tmp_path / "reef" / "x").write_text("keep")
    with pytest.raises(UserError, match="not a cephbench root"):
        roots.ensure("reef")
    assert (tmp_path / "reef" / "x").read_text() == "keep"


@pytest.mark.parametrize("args, fragments", [
    (["--release", "quincy"], ["--release", "not offered", "pacific, reef, tentacle"]),
])
def test_bad_release_flags_make_nothing(tmp_path, monkeypatch, args, fragments):
    monkeypatch.setenv("CEPHBENCH_ROOTS_DIR", str(tmp_path / "roots"))
    res = cephbench("lab", "up", "--dir", tmp_path / "lab", *args)
    one_line_exit_2(res, *fragments)
    assert not (tmp_path / "lab").exists() and not (tmp_path / "roots").exists()


def _release_dir(tmp_path: Path) -> Path:
    d = tmp_path / "roots" / "reef"
    (d / "root" / "tmp").mkdir(parents=True)
    (d / "manifest.json").write_text("{}")
    return d


def _lab(tmp_path: Path, *parts: str) -> Path:
    lab = tmp_path.joinpath("labs", *parts)
    lab.mkdir(parents=True)
    return lab


def test_the_lab_mount_point_is_recorded_and_only_its_empty_directories_removed(tmp_path):
    root = _release_dir(tmp_path) / "root"
    lab = _lab(tmp_path, "one", "lab")
    record = lab / "root.json"
    made = chroot.make_mount_point(root, lab, record)
    inside = root / lab.relative_to("/")
    assert inside.is_dir() and inside in made and all(p.is_dir() for p in made)
    assert json.loads(record.read_text())["made_dirs"] == [str(p) for p in made]
    assert not (root / "run").exists()          # /run is each command's own tmpfs (inroot.py): nothing made for sshd
    # something else's file beside ours keeps its parent
    (inside.parent / "other").write_text("x")
    chroot.remove_mount_points(record)
    assert not inside.exists() and (inside.parent / "other").exists() and not record.exists()
    assert (root / "tmp").is_dir()


@pytest.mark.parametrize("first", ["a", "b"])
def test_two_labs_sharing_parents_leave_nothing_whichever_goes_down_first(tmp_path, first):
    """Labs under one new parent: the one that made the parents may go down first, and the other still needs
    them; once both are down nothing of either is left in the root, and the root's own directories stay."""
    root = _release_dir(tmp_path) / "root"
    labs = {n: _lab(tmp_path, "shared", n, "lab") for n in ("a", "b")}
    for lab in labs.values():
        chroot.make_mount_point(root, lab, lab / "root.json")
    top = root / (tmp_path / "labs").relative_to("/")
    assert all((root / lab.relative_to("/")).is_dir() for lab in labs.values())
    second = "b" if first == "a" else "a"
    chroot.remove_mount_points(labs[first] / "root.json")
    assert (root / labs[second].relative_to("/")).is_dir()          # the other lab's mount point stays whole
    assert not (root / labs[first].relative_to("/")).exists()
    chroot.remove_mount_points(labs[second] / "root.json")
    assert not top.exists() and [p.name for p in root.iterdir()] == ["tmp"] and not any((root / "tmp").iterdir())
    assert json.loads(chroot.ledger_file(root.parent).read_text())["dirs"] == {}


def test_a_lab_whose_directory_was_deleted_without_lab_down_gives_up_its_claims(tmp_path):
    root = _release_dir(tmp_path) / "root"
    gone, kept = _lab(tmp_path, "x", "gone"), _lab(tmp_path, "y", "kept")
    chroot.make_mount_point(root, gone, gone / "root.json")
    shutil.rmtree(gone)
    chroot.make_mount_point(root, kept, kept / "root.json")      # the next lab up on this root tidies
    assert not (root / gone.relative_to("/")).exists() and not (root / gone.parent.relative_to("/")).exists()
    assert (root / kept.relative_to("/")).is_dir()


def test_a_forged_record_reaches_no_ledger_and_removes_nothing(tmp_path):
    elsewhere = tmp_path / "not-a-root"
    keep = elsewhere / "keep"
    keep.mkdir(parents=True)
    lab = _lab(tmp_path, "forged")
    (lab / "root.json").write_text(json.dumps({"root": str(elsewhere), "made_dirs": [str(keep)]}))
    chroot.remove_mount_points(lab / "root.json")
    assert keep.is_dir() and not (tmp_path / chroot.LEDGER).exists()



def test_the_command_in_a_root_keeps_its_argv_at_the_end():
    argv = chroot.InRoot(Path("/r"), Path("/lab")).argv(["ceph-osd", "-i", 0, "--conf", Path("/lab/ceph.conf")])
    assert argv[:5] == ["unshare", "--mount", "--propagation", "private", argv[4]]
    assert argv[-7:] == ["/lab", "--", "ceph-osd", "-i", "0", "--conf", "/lab/ceph.conf"]


def test_a_build_that_fails_is_one_line_and_leaves_no_half_built_root(tmp_path, monkeypatch):
    """An archive that cannot be reached: mmdebstrap wrote part of the root, then failed. (A stand-in for
    mmdebstrap: what is tested is what cephbench does with its failure.)"""
    bin_dir = tmp_path / "bin"
    bin_dir.mkdir()
    fake = bin_dir / "mmdebstrap"
    fake.write_text('#!/bin/sh\nfor a; do target="$a"; done\nmkdir -p "$target/usr/bin" && touch "$target/usr/bin/x"\n'
                    'echo "E: Failed to fetch http://deb.debian.org/debian/dists/trixie/InRelease" >&2\nexit 1\n')
    fake.chmod(0o755)
    monkeypatch.setenv("PATH", f"{bin_dir}:/usr/bin:/bin")
    base = tmp_path / "roots"
    monkeypatch.setenv("CEPHBENCH_ROOTS_DIR", str(base))
    res = cephbench("lab", "roots")
    assert res.returncode == 0 and "no roots" in res.stdout
    with pytest.raises(UserError) as e:
        roots.ensure("reef")
    line = e.value.one_line()
    assert "mmdebstrap exit 1" in line and "Failed to fetch" in line and "nothing was kept" in line
    assert list(base.iterdir()) == []


def test_a_lab_started_before_the_ledger_removes_what_its_record_says_it_made(tmp_path):
    root = _release_dir(tmp_path) / "root"
    lab = _lab(tmp_path, "old", "lab")
    made = chroot.missing_dirs(root, lab)
    for p in made:
        p.mkdir()
    (lab / "root.json").write_text(json.dumps({"root": str(root), "made_dirs": [str(p) for p in made]}))
    chroot.remove_mount_points(lab / "root.json")
    assert [p.name for p in root.iterdir()] == ["tmp"] and not any((root / "tmp").iterdir())


def test_a_record_naming_directories_off_its_lab_s_path_removes_none_of_them(tmp_path):
    """Debian's root has empty directories of its own (mnt, srv, home): a record of a lab from before the ledger
    that names them, or a forged one, does not get them removed."""
    root = _release_dir(tmp_path) / "root"
    (root / "mnt").mkdir()
    lab = _lab(tmp_path, "old2", "lab")
    (lab / "root.json").write_text(json.dumps({"root": str(root), "made_dirs": [str(root / "mnt")]}))
    chroot.remove_mount_points(lab / "root.json")
    assert (root / "mnt").is_dir()


def test_the_ledger_is_not_written_through_a_link(tmp_path):
    root = _release_dir(tmp_path) / "root"
    elsewhere = tmp_path / "elsewhere.json"
    elsewhere.write_text("keep")
    chroot.ledger_file(root.parent).symlink_to(elsewhere)
    lab = _lab(tmp_path, "l", "lab")
    with pytest.raises(UserError):
        chroot.make_mount_point(root, lab, lab / "root.json")
    assert elsewhere.read_text() == "keep" and not (root / lab.relative_to("/")).exists()
