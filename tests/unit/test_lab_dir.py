"""A lab directory is removed only when cephbench's marker proves it a lab, and then only what the lab made: a user's
directory that merely looks like a lab (it holds `run`, `lab.json`, `netns.json`), `/` itself, or a lab with a
user's file in it is refused in one line, exit 2, and nothing in it is touched (issue 24)."""

import json
import os
import shutil
import subprocess
import sys
from pathlib import Path

import pytest

from cephbench.lab import Lab
from cephbench.lab import labdir

from clirun import cephbench

SRC = Path(__file__).resolve().parents[2] / "src"


def tree(d: Path) -> dict[str, str]:
    return {str(p.relative_to(d)): (p.read_text() if p.is_file() else "/") for p in sorted(d.rglob("*"))}


def victim(d: Path, *looks_like: str) -> dict[str, str]:
    d.mkdir(parents=True)
    (d / "thesis.txt").write_text("four years of work\n")
    (d / "notes").mkdir()
    (d / "notes" / "ideas.md").write_text("- more\n")
    for name in looks_like:
        if name == "run":
            (d / "run").mkdir()
            (d / "run" / "sshd.pid").write_text(f"{os.getpid()}\n")
        else:
            (d / name).write_text("{}\n")
    return tree(d)


def refused(res: subprocess.CompletedProcess, *fragments: str) -> None:
    assert res.returncode == 2, (res.returncode, res.stdout, res.stderr)
    lines = res.stderr.strip().splitlines()
    assert len(lines) == 1 and lines[0].startswith("cephbench: "), res.stderr
    for f in fragments:
        assert f in lines[0], lines[0]


@pytest.mark.parametrize("looks_like", [("run",), ("lab.json",), ("netns.json",), ("run", "lab.json", "netns.json")])
@pytest.mark.parametrize("command", ["down", "up"])
def test_a_users_directory_that_looks_like_a_lab_is_refused_and_kept(tmp_path, looks_like, command):
    d = tmp_path / "victim"
    before = victim(d, *looks_like)
    extra = ["--osds", "1", "--no-rgw", "--osd-size", "2GiB"] if command == "up" else []
    refused(cephbench("lab", command, "--dir", d, *extra), str(d), "not a cephbench lab directory")
    assert tree(d) == before


def test_a_lab_directory_with_a_users_file_in_it_is_refused_and_kept(tmp_path):
    d = tmp_path / "lab"
    marker = labdir.claim(d)
    for sub in ("run", "log", "osd/0"):
        (d / sub).mkdir(parents=True)
    (d / "lab.json").write_text("{}\n")
    (d / "thesis.txt").write_text("four years of work\n")
    before = tree(d)
    for args in (["down"], ["down", "--keep"], ["up", "--osds", "1", "--no-rgw", "--osd-size", "2GiB"]):
        refused(cephbench("lab", *args, "--dir", d), "thesis.txt", "nothing in it was touched")
        assert tree(d) == before
    # a forged marker (another directory's) proves nothing
    (d / "thesis.txt").unlink()
    other = labdir.Marker(tmp_path / "elsewhere", True, marker.entries, True)
    (d / labdir.MARKER).write_text(json.dumps(other.to_json()))
    before = tree(d)
    refused(cephbench("lab", "down", "--dir", d), "not a cephbench lab directory")
    assert tree(d) == before


def test_removal_takes_only_the_labs_own_entries_and_the_marker_last(tmp_path):
    d = tmp_path / "lab"
    marker = labdir.claim(d)
    for sub in ("run", "log", "mon/a", "osd/0"):
        (d / sub).mkdir(parents=True)
    (d / "ceph.conf").write_text("[global]\n")
    assert Lab(d).down() == []
    assert not d.exists()
    # an empty directory the user gave is kept, empty
    d.mkdir()
    labdir.remove(labdir.claim(d))
    assert d.is_dir() and not any(d.iterdir())
    assert marker.made_dir


@pytest.mark.parametrize("args, where", [(["--osds", "0"], "--osds"), (["--osd-size", "1GiB"], "--osd-size"),
                                         (["--osd-size", "4X"], "--osd-size"), (["--monitoring"], "--monitoring")])
def test_bad_lab_up_input_makes_no_directory(tmp_path, args, where):
    refused(cephbench("lab", "up", "--dir", tmp_path / "new" / "lab", *args), where)
    assert not (tmp_path / "new").exists()


@pytest.mark.skipif(os.geteuid() != 0 or shutil.which("unshare") is None, reason="needs root and unshare")
def test_dir_slash_is_refused_in_a_private_mount_namespace(tmp_path):
    """`/` holds `run`: up and down of `--dir /` run chrooted into a tmpfs root of this test's own (a private mount
    namespace; the system's directories are bound read-only), whose user files must all survive."""
    root = tmp_path / "root"
    root.mkdir()
    script = f"""
set -e
R={root}
mount -t tmpfs cephbench-test $R
mkdir -p $R/usr $R/etc $R/work $R/proc $R/dev $R/tmp $R/run
for d in usr etc work dev; do mount --bind /$d $R/$d; mount -o remount,bind,ro $R/$d; done
# Python, the venv and this checkout, wherever they are (CI clones anywhere): bound read-only at their own paths
for P in {sys.base_prefix} {sys.prefix} {SRC}; do
  [ -e $R$P ] && [ "$(ls -A $R$P 2>/dev/null)" ] && continue
  mkdir -p $R$P && mount --bind $P $R$P && mount -o remount,bind,ro $R$P
done
for l in bin lib lib64 sbin; do [ -e /$l ] && ln -s usr/$l $R/$l; done
mount -t proc proc $R/proc
echo 'four years of work' > $R/thesis.txt
echo '{{}}' > $R/lab.json
echo 1 > $R/run/sshd.pid
# the tree the test made (the bound system directories change under other work: /dev gains loop devices)
tree() {{ cd $R && find . \( -path ./proc -o -path ./dev -o -path ./usr -o -path ./etc -o -path ./work -o -path .{SRC} -o -path .{sys.prefix} \) -prune -o -print | sort | md5sum; }}
before=$(tree)
for cmd in "down" "down --keep" "up --osds 1 --no-rgw --osd-size 2GiB"; do
  set +e
  chroot $R env PYTHONPATH={SRC} HOME=/tmp {sys.executable} -m cephbench.entry lab $cmd --dir / 2>&1
  echo "rc=$?"
  set -e
done
after=$(tree)
[ "$before" = "$after" ] && echo same-tree
cat $R/thesis.txt
"""
    res = subprocess.run(["unshare", "-m", "--propagation", "private", "sh", "-c", script], capture_output=True,
                         text=True, timeout=120)
    out = res.stdout
    assert res.returncode == 0, out + res.stderr
    assert out.count("rc=2") == 3, out
    assert out.count("not a cephbench lab directory") == 3 and "Traceback" not in out, out
    assert "same-tree" in out and "four years of work" in out, out


def test_a_marker_naming_entries_outside_the_lab_removes_only_lab_names(tmp_path):
    d = tmp_path / "lab"
    labdir.claim(d)
    outside = tmp_path / "precious"
    outside.mkdir()
    (outside / "thesis.txt").write_text("four years of work\n")
    data = json.loads((d / labdir.MARKER).read_text())
    data["entries"] = ["../precious", "run"]
    (d / labdir.MARKER).write_text(json.dumps(data))
    labdir.remove(labdir.check_removable(d))
    assert (outside / "thesis.txt").read_text() == "four years of work\n"


def test_down_leaves_a_users_file_inside_the_labs_log_and_says_so(tmp_path):
    """Issue 34 item 6: `lab down` deleted a user's file left in the lab's log/. The daemons' own logs go (named as
    conf.py and daemons.py name them); a user's file, a directory of theirs and a link are left, each said in a line,
    and the directory stays; `lab up` there touches nothing."""
    d = tmp_path / "lab"
    labdir.claim(d)
    for sub in ("run", "log", "mon/a", "osd/0", "keyring", "crash"):
        (d / sub).mkdir(parents=True)
    (d / "ceph.conf").write_text("[global]\n")
    lab_logs = ["ceph-mon.a.log", "ceph-osd.0.log", "ceph-client.rgw.lab.log", "ceph.log", "mon.a.out",
                "sshd.h1.out", "node-exporter.h2.out", "prometheus.out"]
    for name in lab_logs:
        (d / "log" / name).write_text("daemon\n")
    (d / "log" / "notes.txt").write_text("mine\n")
    (d / "log" / "mine").mkdir()
    (d / "log" / "mine" / "ceph-osd.1.log").write_text("a copy I kept\n")
    (d / "log" / "etc").symlink_to("/etc")
    (d / "log" / "ceph-osd.9.log").mkdir()               # named as a log, but a directory: not the lab's
    (d / "keyring" / "ceph.client.admin.keyring").write_text("[client.admin]\n")
    (d / "keyring" / "my.keyring").write_text("[client.me]\n")
    (d / "crash" / "2026-12-06T11:45:01.123456Z_9b1c2d3e-0000-4000-8000-000000000000").mkdir(parents=True)
    (d / "crash" / "posted").mkdir()
    (d / "crash" / "report-for-the-list.txt").write_text("mine\n")
    users = {"log/notes.txt", "log/mine", "log/mine/ceph-osd.1.log", "log/etc", "log/ceph-osd.9.log",
             "keyring/my.keyring", "crash/report-for-the-list.txt"}
    up = cephbench("lab", "up", "--dir", d, "--osds", "1", "--no-rgw", "--osd-size", "2GiB")
    refused(up, "crash/report-for-the-list.txt", "nothing in it was touched")
    res = cephbench("lab", "down", "--dir", d)
    assert res.returncode == 0, res.stderr
    for name in ("log/notes.txt", "log/mine", "log/etc", "log/ceph-osd.9.log", "keyring/my.keyring",
                 "crash/report-for-the-list.txt"):
        assert f"left {d / name}: the lab did not make it" in res.stdout, res.stdout
    assert "kept the directory" in res.stdout
    assert set(tree(d)) == users | {"log", "keyring", "crash"}
    assert (d / "log" / "notes.txt").read_text() == "mine\n" and Path("/etc/hostname").exists()
    # the lab's own logs alone: all gone, the directory too
    labdir.claim(e := tmp_path / "lab2")
    (e / "log").mkdir()
    for name in lab_logs:
        (e / "log" / name).write_text("daemon\n")
    res = cephbench("lab", "down", "--dir", e)
    assert res.returncode == 0 and "left" not in res.stdout and not e.exists(), res.stdout
