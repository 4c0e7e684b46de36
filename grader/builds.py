"""The build stage: a solution's C++/CUDA extensions compiled once, without a GPU, into a
content-addressed cache that the GPU stage loads from.

A build runs the solution's import in the sandbox on the CPU (no GPU visible) with the target
architecture fixed (TORCH_CUDA_ARCH_LIST), so every `load_inline` / `load` call compiles
there. Three outcomes:
- built: the extensions' libraries are stored under the entry's key; the GPU stage imports
  each one whose call (sources, flags, architecture) has the same digest, and builds any other.
- failed: the compiler refused the sources (or the file is not Python). That is the solution's
  compile failure, the same on every host with this toolchain; it is graded from here and
  never occupies a GPU.
- deferred: the import needs what this host lacks (a GPU, a CUDA build of torch, a package);
  nothing is decided and the GPU stage builds as it always could. Not cached.

Key: the solution's bytes, torch, its CUDA, the compiler's version and the target architecture.
An entry is a folder `<root>/<key>/` written whole elsewhere and renamed into place, so a reader
never sees half of one. A solution can only write the entry of its own source.
"""

import functools
import hashlib
import inspect
import json
import os
import re
import shutil
import subprocess
import tempfile
from dataclasses import dataclass, field
from pathlib import Path
from typing import Any

MANIFEST = "manifest.json"
BUILT, FAILED, DEFERRED = "built", "failed", "deferred"
# Arguments that change where or how loudly a build happens, not what it builds.
_NOT_BUILD_INPUTS = {"verbose", "build_directory", "keep_intermediates"}
BUILD_ERROR_PREFIX = "Error building extension"
# A source naming none of these cannot reach torch's extension loaders without obfuscation, and
# one that does anyway is only built later, by the GPU stage, as before.
_LOADER_WORDS = (b"cpp_extension", b"load_inline")
# An extension's name is a Python module name; anything else reported by a child is refused.
_EXTENSION_NAME = re.compile(r"[A-Za-z_][A-Za-z0-9_]{0,127}")


def default_cache_root() -> Path:
    return Path.home() / ".cache" / "kernel-arena" / "builds"


def arch_for_capability(capability: str) -> str:
    """TORCH_CUDA_ARCH_LIST for a compute capability ("9.0" -> "9.0a": Hopper's
    architecture-specific instructions, wgmma and TMA, are available to solutions)."""
    capability = capability.strip()
    if not capability:
        return ""
    return f"{capability}a" if capability == "9.0" else capability


@functools.cache
def compiler_version() -> str:
    """nvcc's version line where the toolkit is installed, else ""."""
    home = os.environ.get("CUDA_HOME") or os.environ.get("CUDA_PATH") or ""
    nvcc = Path(home) / "bin" / "nvcc" if home else None
    command = str(nvcc) if nvcc and nvcc.exists() else shutil.which("nvcc")
    if command is None:
        return ""
    try:
        out = subprocess.run(
            [command, "--version"], capture_output=True, text=True, timeout=30, check=False
        ).stdout
    except (OSError, subprocess.SubprocessError):
        return ""
    lines = [line for line in out.splitlines() if "release" in line]
    return lines[-1].strip() if lines else ""


def build_key(*, source: bytes, torch_version: str, cuda: str | None, arch: str) -> str:
    material = json.dumps(
        [hashlib.sha256(source).hexdigest(), torch_version, cuda or "", compiler_version(), arch]
    )
    return hashlib.sha256(material.encode()).hexdigest()


@dataclass
class BuildReport:
    key: str
    status: str  # BUILT, FAILED or DEFERRED
    reason: str = ""
    error: str = ""
    extensions: dict[str, dict[str, str]] = field(default_factory=dict)
    build_s: float = 0.0
    cached: bool = False  # found in the cache rather than built now

    def to_dict(self) -> dict[str, Any]:
        return {
            "key": self.key,
            "status": self.status,
            "reason": self.reason,
            "error": self.error,
            "extensions": self.extensions,
            "build_s": self.build_s,
        }


def cache_lookup(root: Path, key: str) -> BuildReport | None:
    try:
        data = json.loads((root / key / MANIFEST).read_text())
    except (OSError, ValueError):
        return None
    if not isinstance(data, dict) or data.get("status") not in (BUILT, FAILED):
        return None
    extensions = data.get("extensions") or {}
    if any(not (root / key / e["file"]).is_file() for e in extensions.values()):
        return None
    return BuildReport(
        key=key,
        status=data["status"],
        reason=str(data.get("reason", "")),
        error=str(data.get("error", "")),
        extensions=extensions,
        build_s=float(data.get("build_s", 0.0)),
        cached=True,
    )


def cache_store(root: Path, report: BuildReport, libraries: dict[str, Path]) -> bool:
    """Store a built or failed outcome with its libraries (name -> file); False if another
    builder stored the key first or the cache cannot be written (the next one builds again)."""
    if report.status not in (BUILT, FAILED) or (root / report.key).exists():
        return False
    if not all(_EXTENSION_NAME.fullmatch(name) for name in libraries):
        return False
    try:
        root.mkdir(parents=True, exist_ok=True)
        staging = Path(tempfile.mkdtemp(prefix=f".{report.key[:16]}-", dir=root))
    except OSError:
        return False
    try:
        extensions = {}
        for name, library in libraries.items():
            file = f"{name}{library.suffix}"
            shutil.copyfile(library, staging / file)
            extensions[name] = {"digest": report.extensions[name]["digest"], "file": file}
        report.extensions = extensions
        (staging / MANIFEST).write_text(json.dumps(report.to_dict()))
        os.rename(staging, root / report.key)
        return True
    except OSError:
        return False
    finally:
        shutil.rmtree(staging, ignore_errors=True)


def prebuilt_copy(root: Path, report: BuildReport, into: Path) -> dict[str, dict[str, str]]:
    """The entry's libraries copied into an evaluation's folder (the candidate may do as it
    likes with its copy); the job's `prebuilt` mapping: name -> digest and path."""
    into.mkdir(parents=True, exist_ok=True)
    prebuilt = {}
    for name, entry in report.extensions.items():
        target = into / entry["file"]
        shutil.copyfile(root / report.key / entry["file"], target)
        prebuilt[name] = {"digest": entry["digest"], "path": str(target)}
    return prebuilt


def collected_libraries(
    extensions: dict[str, dict[str, str]], workdir: Path
) -> dict[str, Path] | None:
    """The libraries a child reported building, each inside its working folder; None if any
    lies elsewhere or is missing (nothing is taken from outside the folder)."""
    root = workdir.resolve()
    libraries = {}
    for name, entry in extensions.items():
        if not _EXTENSION_NAME.fullmatch(str(name)) or not isinstance(entry, dict):
            return None
        path = Path(entry.get("path", "")).resolve()
        if not path.is_file() or not path.is_relative_to(root):
            return None
        libraries[name] = path
    return libraries


def static_check(key: str, source: bytes) -> BuildReport | None:
    """What is known without running the solution: not Python (the same error on any host of
    this interpreter), or no extension loader named anywhere in it (nothing to build: a Triton
    or torch solution). None: the import must run."""
    try:
        compile(source, "solution.py", "exec", dont_inherit=True)
    except (SyntaxError, ValueError) as exc:
        return BuildReport(key, FAILED, "not valid Python", f"{type(exc).__name__}: {exc}")
    except (RecursionError, MemoryError):
        return None
    if not any(word in source for word in _LOADER_WORDS):
        return BuildReport(key, BUILT, "no extension to build")
    return None


# ---- the child's side: torch.utils.cpp_extension's loaders, watched ----------------------------


class BuildDeferred(Exception):
    """The build needs what this host lacks; the GPU stage will build."""


class ExtensionBuildError(RuntimeError):
    """The compiler refused an extension's sources: the solution's compile failure. A
    RuntimeError, as torch's own, so that a solution's fallback around the call still works."""


class ExtensionLoaders:
    """Wraps `load_inline` and `load` before the solution is imported.

    A call whose digest matches a prebuilt library imports that library and compiles nothing;
    any other call compiles as usual and is recorded (name -> digest and library path). In
    `build_only` mode (the build stage), a call that cannot be built on this host is deferred.
    A compiler error is raised as ExtensionBuildError, told apart from every other failure.
    """

    def __init__(self, prebuilt: dict[str, dict[str, str]] | None, *, build_only: bool) -> None:
        self.prebuilt = prebuilt or {}
        self.build_only = build_only
        self.built: dict[str, dict[str, str]] = {}
        self.loaded: list[str] = []

    def install(self) -> None:
        from torch.utils import cpp_extension

        for attribute in ("load_inline", "load"):
            original = getattr(cpp_extension, attribute)
            setattr(cpp_extension, attribute, self._wrap(attribute, original))

    def _wrap(self, loader: str, original: Any) -> Any:
        signature = inspect.signature(original)

        def wrapped(*args: Any, **kwargs: Any) -> Any:
            try:
                bound = signature.bind(*args, **kwargs)
            except TypeError:
                return original(*args, **kwargs)
            bound.apply_defaults()
            arguments = dict(bound.arguments)
            if not arguments.get("is_python_module", True) or arguments.get("is_standalone"):
                return original(*args, **kwargs)
            name = str(arguments["name"])
            digest = extension_digest(loader, arguments)
            entry = self.prebuilt.get(name)
            if entry is not None and entry.get("digest") == digest:
                module = _import_library(name, Path(entry["path"]))
                self.loaded.append(name)
                return module
            if self.build_only:
                _defer_unless_buildable(loader, arguments)
            try:
                module = original(*args, **kwargs)
            except Exception as exc:
                if str(exc).startswith(BUILD_ERROR_PREFIX):
                    raise ExtensionBuildError(str(exc)[-8000:]) from None
                raise
            path = getattr(module, "__file__", None)
            if path:
                self.built[name] = {"digest": digest, "path": str(path)}
            return module

        wrapped.__wrapped__ = original  # type: ignore[attr-defined]
        return wrapped


def extension_digest(loader: str, arguments: dict[str, Any]) -> str:
    """What a build compiles: the loader's inputs (a `load`'s source files by content), the
    target architecture and torch's version."""
    import torch

    material = {k: v for k, v in arguments.items() if k not in _NOT_BUILD_INPUTS}
    if loader == "load":
        sources = material.get("sources")
        paths = [sources] if isinstance(sources, str) else list(sources or [])
        material["sources"] = [_file_digest(Path(p)) for p in paths]
    material["_arch"] = os.environ.get("TORCH_CUDA_ARCH_LIST", "")
    material["_torch"] = torch.__version__
    payload = json.dumps([loader, material], sort_keys=True, default=repr)
    return hashlib.sha256(payload.encode()).hexdigest()


def _file_digest(path: Path) -> str:
    try:
        return hashlib.sha256(path.read_bytes()).hexdigest()
    except OSError:
        return f"missing:{path}"


def _needs_cuda(loader: str, arguments: dict[str, Any]) -> bool:
    if arguments.get("with_cuda"):
        return True
    if loader == "load_inline":
        return bool(arguments.get("cuda_sources"))
    sources = arguments.get("sources")
    paths = [sources] if isinstance(sources, str) else list(sources or [])
    return any(str(p).endswith((".cu", ".cuh")) for p in paths)


def _defer_unless_buildable(loader: str, arguments: dict[str, Any]) -> None:
    import torch

    if not _needs_cuda(loader, arguments):
        return
    if torch.version.cuda is None:
        raise BuildDeferred("this build host's torch has no CUDA; the GPU stage builds it")
    flags = " ".join(str(f) for f in arguments.get("extra_cuda_cflags") or [])
    if "native" in flags:
        raise BuildDeferred("the build asks for the GPU of the machine it runs on (native)")


def _import_library(name: str, path: Path) -> Any:
    import importlib.util

    spec = importlib.util.spec_from_file_location(name, path)
    if spec is None or spec.loader is None:
        raise ImportError(f"cannot load the prebuilt extension {name} from {path}")
    module = importlib.util.module_from_spec(spec)
    spec.loader.exec_module(module)
    return module
