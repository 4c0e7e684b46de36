"""What every agent adapter knows: its command line, environment, log, markers and budget.

An adapter turns (prompt, workspace, budget) into the argv of a real agent CLI. The arena runs
that argv in a sandbox with the workspace as its working folder (arena/runs.py), then asks the
adapter how the run ended: finished (its completion marker is in the log), stopped by its
provider (an API error, a bad key, a quota), stopped by a budget the CLI enforces, or crashed.

No Django here: adapters are plain Python, like the sandboxes they run in.
"""

import json
import math
import os
import re
import shutil
import stat
import subprocess
from dataclasses import asdict, dataclass, field
from pathlib import Path
from typing import Any, ClassVar
from urllib.parse import urlsplit

DEFAULT_WALL_CLOCK_S = 45 * 60
VERSION_TIMEOUT_S = 20
# How much of a log's tail and of stderr is searched for markers: a provider error is reported
# at the end, and a multi-megabyte log need not be scanned whole.
MARKER_TAIL_BYTES = 256 * 1024
# How much of a log the budget watcher reads per look (it reads on where it stopped).
FOLLOW_CHUNK_BYTES = 8 * 1024 * 1024
# Said to every agent before the task's own PROMPT.md: where the answer goes, how to check it.
ARENA_INSTRUCTIONS = (
    "You are working in a Kernel Arena workspace. The task is described below (it is also in "
    "PROMPT.md). Write your final answer to solution.py in this folder; it must define "
    "ModelNew. Run ./check to grade solution.py on the visible shapes and read its verdict. "
    "Do not edit reference.py, PROMPT.md, check or starter/: they are checked after the run. "
    "When you stop, solution.py as it is then is graded, including on shapes you never saw.\n\n"
)
# Errors that any CLI prints when its model provider refuses or fails: HTTP status, quota,
# credentials. Adapters add their own structured markers.
PROVIDER_ERROR_PATTERNS = (
    r"(?i)\bAPI Error: ?\d{3}\b",
    r"(?i)\b(rate[ _-]?limit(ed)?|overloaded_error|insufficient_quota|quota exceeded)\b",
    r"(?i)\b(invalid api key|invalid x-api-key|authentication_error|unauthorized)\b",
    r"(?i)\bcredit balance is too low\b",
)


class AdapterError(Exception):
    """An agent that cannot be run as configured; the message names the option or program."""


@dataclass(frozen=True)
class Budget:
    """Limits of one run. The wall clock is always enforced by the sandbox; turns, tokens and
    cost by the CLI where it has a flag, and by the arena from the imported log otherwise."""

    wall_clock_s: float = DEFAULT_WALL_CLOCK_S
    max_turns: int | None = None
    max_tokens: int | None = None
    max_cost_usd: float | None = None

    @classmethod
    def from_dict(cls, data: dict[str, Any] | None) -> "Budget":
        """A budget from JSON; a ValueError names the bad field."""
        data = dict(data or {})
        unknown = sorted(set(data) - set(cls.__dataclass_fields__))
        if unknown:
            raise ValueError(f"budget.{unknown[0]}: unknown field")
        values = {name: _budget_number(name, value) for name, value in data.items()}
        if values.get("wall_clock_s") is None:
            values["wall_clock_s"] = DEFAULT_WALL_CLOCK_S
        return cls(**values)

    def merged(self, override: dict[str, Any] | None) -> "Budget":
        return Budget.from_dict({**self.to_dict(), **(override or {})})

    def to_dict(self) -> dict[str, Any]:
        return asdict(self)


def _budget_number(name: str, value: Any) -> float | int | None:
    if value is None:
        return None
    if isinstance(value, bool) or not isinstance(value, int | float) or not math.isfinite(value):
        raise ValueError(f"budget.{name}: a number is needed, not {value!r}")
    if value <= 0:
        raise ValueError(f"budget.{name}: must be positive, not {value!r}")
    if name in ("max_turns", "max_tokens"):
        if int(value) != value:
            raise ValueError(f"budget.{name}: a whole number is needed, not {value!r}")
        return int(value)
    return float(value)


@dataclass(frozen=True)
class Verdict:
    """How an agent process ended, as a run failure reason ("" when it finished)."""

    reason: str = ""
    detail: str = ""

    @property
    def finished(self) -> bool:
        return not self.reason


@dataclass(frozen=True)
class Progress:
    """What a running agent has spent so far, as its logs tell: model calls and tokens."""

    turns: int = 0
    tokens: int = 0

    def over(self, budget: Budget, *, enforced: frozenset[str]) -> str:
        """The budget this spends past, in words; "" when none (fields the CLI enforces itself
        are left to it)."""
        for name, used in (("max_turns", self.turns), ("max_tokens", self.tokens)):
            limit = getattr(budget, name)
            if limit is not None and name not in enforced and used > limit:
                return f"the agent was stopped at {used} against a budget of {name} = {limit}"
        return ""


@dataclass
class Adapter:
    """The base of every adapter; subclasses set the class attributes and `command()`."""

    name: ClassVar[str] = ""
    binary: ClassVar[str] = ""
    # A regex that matches a line of the log once the agent has finished its work.
    completion_marker: ClassVar[str | None] = None
    # Regexes of the CLI's own report that its budget ran out (turns, cost).
    budget_markers: ClassVar[tuple[str, ...]] = ()
    provider_markers: ClassVar[tuple[str, ...]] = ()
    # Variables the CLI needs from the worker's environment: its provider key, nothing else.
    credential_env: ClassVar[tuple[str, ...]] = ()
    # Budget fields this CLI enforces itself through flags.
    enforced_by_cli: ClassVar[frozenset[str]] = frozenset()
    # "host:port" of the model API: under bwrap or docker the only place the agent may reach.
    provider_hosts: ClassVar[tuple[str, ...]] = ()

    model: str = ""
    effort: str = ""
    options: dict[str, Any] = field(default_factory=dict)

    def __post_init__(self) -> None:
        """Subclasses check their options here; AdapterError names the bad one."""

    def program(self) -> str:
        return self.binary

    def command(self, *, prompt: str, budget: Budget, home: Path) -> list[str]:
        raise NotImplementedError

    def env(self, *, home: Path, environ: dict[str, str]) -> dict[str, str]:
        """Extra variables for the agent process; the sandbox scrubs everything else."""
        return {k: environ[k] for k in self.credential_env if environ.get(k)}

    def base_url(self) -> str:
        """The model API's address from config "base_url" (a gateway, or the scripted model
        server, python -m model_server), "" for the vendor's own; AdapterError if malformed."""
        url = self.options.get("base_url") or ""
        if not url:
            return ""
        parts = urlsplit(url) if isinstance(url, str) else None
        if parts is None or parts.scheme not in ("http", "https") or not parts.hostname:
            raise AdapterError('option "base_url" must be an http:// or https:// URL')
        return str(url).rstrip("/")

    def allowed_hosts(self) -> list[str]:
        """The provider's API hosts (the base_url's when one is set), or the agent's own list
        (config "allow_hosts")."""
        url = self.base_url()
        default = [_host_port(url)] if url else list(self.provider_hosts)
        hosts = self.options.get("allow_hosts", default)
        if not isinstance(hosts, list) or not all(isinstance(h, str) and ":" in h for h in hosts):
            raise AdapterError('option "allow_hosts" must be a list of "host:port"')
        return hosts

    def prepare_home(self, *, home: Path, budget: Budget) -> None:
        """Write what the CLI reads from its home before it starts (settings, no login)."""

    def readable(self) -> list[Path]:
        """Host paths the agent must read inside a namespace sandbox: its program's folder, or
        the whole node_modules an npm-installed CLI lies in, and node for a Node script."""
        found = shutil.which(self.program())
        if not found:
            return []
        program = Path(found).resolve()
        paths = [next((p for p in program.parents if p.name == "node_modules"), program.parent)]
        node = shutil.which("node")
        if node and _is_node_script(program):
            paths.append(Path(node).resolve())
        return paths

    def progress(self, *, log_path: Path, home: Path) -> Progress:
        """Model calls and tokens spent so far, read from the logs while the CLI runs, so the
        arena can stop it at a budget the CLI has no flag for."""
        return Progress()

    def follow(self, path: Path) -> list[dict[str, Any]]:
        """The JSON records appended to `path` since the last call (whole lines only)."""
        offsets: dict[Path, int] = self.__dict__.setdefault("_offsets", {})
        try:
            # The agent may have made the file a link, or a FIFO that would block the open.
            fd = os.open(path, os.O_RDONLY | os.O_NOFOLLOW | os.O_NONBLOCK)
            with os.fdopen(fd, "rb") as fh:
                if not stat.S_ISREG(os.fstat(fd).st_mode):
                    return []
                fh.seek(offsets.get(path, 0))
                data = fh.read(FOLLOW_CHUNK_BYTES)
        except OSError:
            return []
        complete = data[: data.rfind(b"\n") + 1]
        offsets[path] = offsets.get(path, 0) + len(complete)
        return json_records(complete.decode("utf-8", errors="replace"))

    def locate(self) -> str:
        """The program's path; AdapterError naming it when it is not installed."""
        found = shutil.which(self.program())
        if found is None:
            raise AdapterError(f"{self.program()}: not installed (not found on PATH)")
        return found

    def version(self) -> str:
        """`<cli> --version`, first line; "" when the CLI does not say."""
        try:
            done = subprocess.run(
                [self.locate(), "--version"],
                capture_output=True,
                text=True,
                errors="replace",
                timeout=VERSION_TIMEOUT_S,
                check=False,
                stdin=subprocess.DEVNULL,
            )
        except (OSError, subprocess.SubprocessError, AdapterError):
            return ""
        lines = (done.stdout or done.stderr).strip().splitlines()
        return lines[0].strip()[:50] if done.returncode == 0 and lines else ""

    def transcript(self, *, log_path: Path, home: Path, workspace: Path) -> Path:
        """The file to import as the run's trajectory (stdout's log unless the CLI keeps a
        richer one). It lies where the agent could write: the caller reads it with care."""
        return log_path

    def marker_log(self, *, log_path: Path, workspace: Path) -> Path:
        """The log searched for the completion, budget and provider markers."""
        return log_path

    def error_report(self, *, tail: str) -> str:
        """The text of the error the CLI reported in its log, if it reported one."""
        return ""

    def judge(self, *, log_path: Path, stderr: str, returncode: int | None) -> Verdict:
        """Read the end of the log and stderr: provider error, budget, crash, or finished.

        Generic provider patterns are searched only in stderr and in the CLI's own error
        report, never in the whole log, where a tool's output may mention a rate limit.
        """
        tail = read_tail(log_path)
        reported = self.error_report(tail=tail)
        for pattern in self.provider_markers:
            found = re.search(pattern, tail, re.M)
            if found:
                return Verdict("provider_error", _line_of(tail, found.start()))
        for pattern in PROVIDER_ERROR_PATTERNS:
            found = re.search(pattern, f"{reported}\n{stderr}")
            if found:
                return Verdict("provider_error", _line_of(f"{reported}\n{stderr}", found.start()))
        for pattern in self.budget_markers:
            found = re.search(pattern, tail, re.M)
            if found:
                return Verdict("budget_exhausted", _line_of(tail, found.start()))
        if returncode != 0:
            detail = stderr.strip()[-2000:] or reported[-2000:] or "(nothing on stderr)"
            return Verdict("agent_error", f"{self.program()} exited with {returncode}: {detail}")
        if self.completion_marker and not re.search(self.completion_marker, tail, re.M):
            return Verdict("agent_error", f"{self.program()} stopped without its completion marker")
        return Verdict()


def _host_port(url: str) -> str:
    parts = urlsplit(url)
    port = parts.port or (443 if parts.scheme == "https" else 80)
    return f"{parts.hostname}:{port}"


def _is_node_script(program: Path) -> bool:
    try:
        with program.open("rb") as fh:
            return b"node" in fh.readline(200)
    except OSError:
        return False


def json_records(text: str) -> list[dict[str, Any]]:
    """The JSON objects among the lines of a log's tail; other lines are skipped."""
    records = []
    for line in text.splitlines():
        line = line.strip()
        if not line.startswith("{"):
            continue
        try:
            record = json.loads(line)
        except ValueError:
            continue
        if isinstance(record, dict):
            records.append(record)
    return records


def read_head(path: Path, limit: int = 64 * 1024) -> str:
    try:
        with path.open("rb") as fh:
            return fh.read(limit).decode("utf-8", errors="replace")
    except OSError:
        return ""


def read_tail(path: Path, limit: int = MARKER_TAIL_BYTES) -> str:
    try:
        with path.open("rb") as fh:
            fh.seek(0, 2)
            fh.seek(max(0, fh.tell() - limit))
            return fh.read().decode("utf-8", errors="replace")
    except OSError:
        return ""


def _line_of(text: str, index: int) -> str:
    start = text.rfind("\n", 0, index) + 1
    end = text.find("\n", index)
    return text[start : end if end != -1 else len(text)].strip()[:500]
