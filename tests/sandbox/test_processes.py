"""sandboxes.processes.own_children: the children of every thread, read from the threads' /proc
lists, agree with a scan of every process's stat: a thread's children, a zombie, and an orphan
re-parented to a subreaper."""

import json

from tests.processes import repo_python

CHILDREN = """
import ctypes, json, os, subprocess, threading, time
from sandboxes.processes import _scanned_children, own_children

libc = ctypes.CDLL(None, use_errno=True)
assert libc.prctl(36, 1, 0, 0, 0) == 0  # PR_SET_CHILD_SUBREAPER
sleeper = subprocess.Popen(["sleep", "60"])
from_thread = []
thread = threading.Thread(
    target=lambda: from_thread.append(subprocess.Popen(["sleep", "60"])))
thread.start()
thread.join()
zombie = subprocess.Popen(["true"])
# An orphan: its parent exits at once, and it is re-parented here.
parent = subprocess.Popen(["sh", "-c", "sleep 60 & echo $!"], stdout=subprocess.PIPE, text=True)
orphan = int(parent.stdout.readline())
parent.wait()
deadline = time.monotonic() + 10
while orphan not in own_children() and time.monotonic() < deadline:
    time.sleep(0.05)
while open(f"/proc/{zombie.pid}/stat").read().rsplit(")", 1)[1].split()[0] != "Z":
    time.sleep(0.05)
print(json.dumps({
    "listed": sorted(own_children()),
    "scanned": sorted(_scanned_children(include_zombies=True)),
    "listed_live": sorted(own_children(include_zombies=False)),
    "scanned_live": sorted(_scanned_children(include_zombies=False)),
    "sleeper": sleeper.pid, "from_thread": from_thread[0].pid, "zombie": zombie.pid,
    "orphan": orphan,
}))
for pid in (sleeper.pid, from_thread[0].pid, orphan):
    os.kill(pid, 9)
"""


def test_every_threads_children_a_zombie_and_a_reparented_orphan_are_found():
    done = repo_python("-c", CHILDREN, timeout_s=60)
    assert done.returncode == 0, done.stderr
    seen = json.loads(done.stdout.splitlines()[-1])
    expected = {seen["sleeper"], seen["from_thread"], seen["zombie"], seen["orphan"]}
    assert set(seen["listed"]) == set(seen["scanned"]) == expected
    assert set(seen["listed_live"]) == set(seen["scanned_live"]) == expected - {seen["zombie"]}
