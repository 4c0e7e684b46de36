"""Assemble the sandbox image's root filesystem from this machine's own files, as a tar stream.

No registry is reachable, so the image is this host's Python (at the same absolute paths, so
`sys.executable` works unchanged inside), a shell and a few coreutils, the shared libraries they
link (found with ldd), and for the `full` flavour the site-packages the grader and an agent's
`check` need (torch, triton, numpy and what they require). Nothing else of the host goes in: no
/etc beyond a generated passwd and group, no home folders, no credentials.

    python rootfs.py --flavour minimal --tag      # prints the content tag, writes nothing
    python rootfs.py --flavour full --out -       # the tar on stdout, for `docker import -`
    python rootfs.py --flavour full --extra node /opt/claude --out -   # plus an agent's program
"""

import argparse
import contextlib
import hashlib
import importlib.util
import io
import marshal
import os
import re
import shutil
import subprocess
import sys
import sysconfig
import tarfile
from importlib import metadata
from pathlib import Path

TOOLS = [
    "sh",
    "bash",
    "cat",
    "ls",
    "env",
    "sleep",
    "nohup",
    "setsid",
    "mkdir",
    "rm",
    "cp",
    "mv",
    "echo",
    "true",
    "false",
    "id",
    "head",
    "tail",
    "wc",
    "grep",
    "sed",
    "timeout",
    "kill",
    "ps",
    "uname",
    "dirname",
    "basename",
    "readlink",
    "chmod",
    "touch",
    "sort",
    "tee",
]
STDLIB_SKIP = {"test", "idlelib", "tkinter", "turtledemo", "ensurepip", "lib2to3", "site-packages"}
# The distributions the grader child imports; their requirements are followed.
FULL_ROOTS = ("torch", "triton", "numpy")
ETC_FILES = {
    "etc/passwd": "root:x:0:0:root:/tmp:/bin/sh\nnobody:x:65534:65534:nobody:/tmp:/bin/sh\n",
    "etc/group": "root:x:0:\nnogroup:x:65534:\n",
    "etc/nsswitch.conf": "passwd: files\ngroup: files\nhosts: files\n",
    "etc/hosts": "127.0.0.1 localhost\n",
}
MOUNT_POINTS = ("proc", "sys", "dev", "tmp", "run", "work")
_LDD_PATH = re.compile(r"(/\S+) \(0x")


def tool_paths() -> list[Path]:
    found = (shutil.which(name) for name in TOOLS)
    return [Path(p) for p in found if p]


def stdlib_files() -> list[Path]:
    stdlib = Path(sysconfig.get_paths()["stdlib"])
    files = []
    for path in stdlib.rglob("*"):
        relative = path.relative_to(stdlib).parts
        if relative[0] in STDLIB_SKIP or relative[0].startswith("config-"):
            continue  # tests, Tk, and the static library for embedding: never used inside
        if ".opt-" in path.name or path.name.startswith("_tkinter"):
            continue
        if path.is_file() or path.is_symlink():
            files.append(path)
    return files


def interpreter_files() -> list[Path]:
    """The venv's python links, its pyvenv.cfg, the base interpreter and libpython."""
    venv_bin = Path(sys.executable).parent
    files = [p for p in venv_bin.glob("python*")]
    files.append(Path(sys.prefix) / "pyvenv.cfg")
    files.append(Path(os.path.realpath(sys.executable)))
    libdir = Path(sysconfig.get_config_var("LIBDIR") or "/nonexistent")
    files += libdir.glob("libpython3*.so*")
    return [f for f in files if f.exists()]


def required_distributions(roots: tuple[str, ...]) -> set[str]:
    pending, seen = list(roots), set()
    while pending:
        name = re.split(r"[ ;<>=!~\[(]", pending.pop(), maxsplit=1)[0].lower()
        if name in seen:
            continue
        try:
            requires = metadata.distribution(name).requires or []
        except metadata.PackageNotFoundError:
            continue
        seen.add(name)
        pending += [r for r in requires if "extra ==" not in r]
    return seen


def site_package_files(names: set[str]) -> list[Path]:
    files = []
    for name in sorted(names):
        dist = metadata.distribution(name)
        for entry in dist.files or []:
            path = Path(str(dist.locate_file(entry))).resolve()
            if path.is_file() and "__pycache__" not in path.parts:
                files.append(path)
    return files


def shared_libraries(binaries: list[Path]) -> set[Path]:
    """Every library ldd names for the binaries and extension modules, links included."""
    candidates = [b for b in binaries if b.suffix == ".so" or ".so." in b.name or os.access(b, 1)]
    libraries: set[Path] = set()
    for start in range(0, len(candidates), 200):
        chunk = [str(c) for c in candidates[start : start + 200]]
        out = subprocess.run(["ldd", *chunk], capture_output=True, text=True, check=False).stdout
        libraries.update(Path(m) for m in _LDD_PATH.findall(out))
    return libraries


def canonical_folder(path: Path) -> Path:
    """The path through real folders (merged /usr: /lib/x.so is /usr/lib/x.so), the last
    component kept as it is, link or not."""
    return Path(os.path.realpath(path.parent)) / path.name


def with_link_targets(paths: set[Path]) -> set[Path]:
    """Each path plus every link and target on the way to the real file."""
    closed: set[Path] = set()
    for start in paths:
        path = canonical_folder(start)
        while path not in closed:
            closed.add(path)
            if not path.is_symlink():
                break
            path = canonical_folder(path.parent / os.readlink(path))
    return {p for p in closed if p.exists() or p.is_symlink()}


def extra_files(names: list[str]) -> list[Path]:
    """Programs (by name on PATH or by path) and whole folders, e.g. an agent CLI and its
    runtime; their libraries follow through ldd like everyone else's."""
    files: list[Path] = []
    for name in names:
        path = Path(shutil.which(name) or name)
        if path.is_dir():
            files += [p for p in path.rglob("*") if p.is_file() or p.is_symlink()]
        elif path.exists():
            files.append(path)
        else:
            raise SystemExit(f"rootfs: {name}: no such program or folder")
    return files


def collect(flavour: str, extra: list[str]) -> list[Path]:
    files = [*tool_paths(), *interpreter_files(), *stdlib_files(), *extra_files(extra)]
    if flavour == "full":
        files += site_package_files(required_distributions(FULL_ROOTS))
    files += shared_libraries(files)
    files += Path("/").glob("lib64/ld-linux*")
    return sorted(with_link_targets({Path(os.path.abspath(f)) for f in files}))


def manifest_tag(files: list[Path], flavour: str) -> str:
    # "bytecode": images built before it went in are rebuilt. It is made from the sources, whose
    # sizes and times the tag covers below.
    digest = hashlib.sha256(f"{flavour}\0{sys.prefix}\0labelled\0bytecode".encode())
    for path in files:
        info = path.lstat()
        digest.update(f"{path}\0{info.st_size}\0{info.st_mtime_ns}\0{info.st_mode}\n".encode())
    for name, text in ETC_FILES.items():
        digest.update(f"{name}\0{text}".encode())
    return digest.hexdigest()[:16]


def _add_generated(tar: tarfile.TarFile) -> None:
    for name in MOUNT_POINTS:
        info = tarfile.TarInfo(name)
        info.type, info.mode = tarfile.DIRTYPE, 0o1777 if name == "tmp" else 0o755
        tar.addfile(info)
    for name, text in ETC_FILES.items():
        data = text.encode()
        info = tarfile.TarInfo(name)
        info.size, info.mode = len(data), 0o644
        tar.addfile(info, io.BytesIO(data))
    # Merged /usr: the loader and #! lines name /bin and /lib64.
    for name in ("bin", "sbin", "lib", "lib64"):
        if Path("/", name).is_symlink():
            info = tarfile.TarInfo(name)
            info.type, info.linkname = tarfile.SYMTYPE, os.readlink(Path("/", name))
            tar.addfile(info)


def bytecode(source: Path) -> bytes | None:
    """The timestamp-checked bytecode Python would cache for `source`: the host's own cache when
    it is current, else compiled here. The image is read-only, so Python can cache nothing in it,
    and without this every process compiles what it imports again (import torch: 4 s, not 1.5)."""
    info = source.stat()
    header = b"".join(
        [
            importlib.util.MAGIC_NUMBER,
            (0).to_bytes(4, "little"),  # flags: checked by the source's mtime and size
            (int(info.st_mtime) & 0xFFFFFFFF).to_bytes(4, "little"),
            (info.st_size & 0xFFFFFFFF).to_bytes(4, "little"),
        ]
    )
    with contextlib.suppress(OSError):
        cached = Path(importlib.util.cache_from_source(str(source))).read_bytes()
        if cached[: len(header)] == header:
            return cached
    try:
        code = compile(source.read_bytes(), str(source), "exec", dont_inherit=True)
    except (SyntaxError, ValueError):
        return None  # Python would fail on it too, inside as here
    return header + marshal.dumps(code)


def _add_bytecode(tar: tarfile.TarFile, source: Path) -> None:
    data = bytecode(source)
    if data is None:
        return
    info = tarfile.TarInfo(importlib.util.cache_from_source(str(source)).lstrip("/"))
    info.size, info.mode, info.mtime = len(data), 0o644, int(source.stat().st_mtime)
    tar.addfile(info, io.BytesIO(data))


def write_tar(files: list[Path], out: io.BufferedIOBase) -> None:
    with tarfile.open(fileobj=out, mode="w|") as tar:
        _add_generated(tar)
        for path in files:
            tar.add(str(path), arcname=str(path).lstrip("/"), recursive=False)
            if path.suffix == ".py" and "site-packages" in path.parts and not path.is_symlink():
                _add_bytecode(tar, path)


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--flavour", choices=["minimal", "full"], default="full")
    parser.add_argument("--tag", action="store_true", help="print the content tag only")
    parser.add_argument("--out", help="tar file to write, or - for stdout")
    parser.add_argument("--extra", nargs="*", default=[], help="programs or folders to add")
    args = parser.parse_args()
    files = collect(args.flavour, args.extra)
    if args.tag:
        print(manifest_tag(files, args.flavour))
    elif args.out:
        out = sys.stdout.buffer if args.out == "-" else open(args.out, "wb")  # noqa: SIM115
        with out:
            write_tar(files, out)  # type: ignore[arg-type]
    else:
        parser.error("give --tag or --out")


if __name__ == "__main__":
    main()
