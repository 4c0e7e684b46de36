"""This process's children, read from /proc (Linux)."""

import os
from pathlib import Path


def own_children(*, include_zombies: bool = True) -> set[int]:
    me = str(os.getpid())
    children: set[int] = set()
    for entry in Path("/proc").iterdir():
        if not entry.name.isdigit():
            continue
        try:
            stat = (entry / "stat").read_text()
        except OSError:
            continue
        # Fields after the command name (which may contain spaces) start after the last ')'.
        state, parent = stat.rsplit(")", 1)[1].split()[:2]
        if parent == me and (include_zombies or state != "Z"):
            children.add(int(entry.name))
    return children


def command_name(pid: int) -> str:
    try:
        return Path(f"/proc/{pid}/comm").read_text().strip()
    except OSError:
        return ""
