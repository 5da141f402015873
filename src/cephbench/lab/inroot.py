"""Run one command inside a release's root: started by lab/chroot.py as
`unshare --mount --propagation private python3 -I inroot.py ROOT LAB_DIR -- ARGV...`.

In the private mount namespace unshare made, it binds /proc, /sys, /dev and the lab directory (at its own path)
into the root, mounts a tmpfs of its own on the root's /run (with sshd's privilege separation directory, which
Debian's service makes at boot), chroots there and execs ARGV: the daemon keeps this PID, and its mounts exist only in its own
namespace, so they end with it however it ends (kill -9 included) and never show on the host. Run as a script
with -I: it imports nothing of cephbench.
"""

import os
import subprocess
import sys


def main(args: list[str]) -> None:
    if len(args) < 4 or args[2] != "--":
        sys.exit("usage: inroot.py ROOT LAB_DIR -- ARGV...")
    root, lab_dir, argv = args[0], args[1], args[3:]
    # /run private to this command: what a daemon writes there (sshd's /run/sshd, a pid file) is never left in the
    # root that other labs share, nor removed under a lab still running
    subprocess.run(["mount", "-t", "tmpfs", "-o", "mode=0755,size=16m", "tmpfs", root + "/run"], check=True,
                   stdin=subprocess.DEVNULL)
    for d, mode in (("/run/sshd", 0o755), ("/run/lock", 0o1777)):
        os.mkdir(root + d, mode)
        os.chmod(root + d, mode)
    if lab_dir.startswith("/run/"):
        os.makedirs(root + lab_dir, exist_ok=True)      # its mount point, made in the root, is under the tmpfs
    # --rbind: what is mounted below them comes too (a multi-host lab's FileStore file systems under the lab)
    for src, how in (("/proc", "--rbind"), ("/sys", "--rbind"), ("/dev", "--rbind"), (lab_dir, "--rbind")):
        # the lab directory's mount point was made (and recorded) by `lab up`: nothing is made in the root here
        subprocess.run(["mount", how, src, root + src], check=True, stdin=subprocess.DEVNULL)
    os.chroot(root)
    os.chdir("/")
    os.execvp(argv[0], argv)


if __name__ == "__main__":
    main(sys.argv[1:])
