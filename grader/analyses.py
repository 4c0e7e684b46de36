"""KernelBench files' analyses (kbproblem.analyse_problem: the size constants and their rules),
kept in the probe cache beside the reference's footprints, so that the next evaluation of the
same file reads its shape at once instead of waiting seconds for a child to run the file on the
meta device (the command line's setup waited 2-4.5 s for it on an H200 host, 2026-11-28).

An entry is keyed by the file's bytes, the grader's own source (the analysis is kbproblem.py's,
with the rules of generalization.py and the helpers they use: any change to the package
analyses every file again once) and torch's installed version. Only the grading process
writes the cache, from the probe child's report (that child runs the task's reference, never a
solution); an analysis the grading process makes itself (no child was handed one) is not kept.
It reads without importing torch: the command line decides
its preludes from it (launch.py) while its own import of torch is under way.
"""

import functools
import hashlib
import json
from collections.abc import Callable
from pathlib import Path
from typing import Any

from grader.baselines import cache_load, cache_store
from grader.hostinfo import installed_version

PACKAGE = Path(__file__).resolve().parent
Analysed = Callable[[Path], dict[str, Any] | None]


@functools.cache
def grader_source_sha256() -> str:
    """The grader package's Python source, hashed once per process (about 5 ms)."""
    digest = hashlib.sha256()
    for path in sorted(PACKAGE.rglob("*.py")):
        digest.update(str(path.relative_to(PACKAGE)).encode() + b"\0" + path.read_bytes())
    return digest.hexdigest()


def cache_key(source_sha256: str) -> str:
    material = json.dumps(
        [
            "kernelbench-analysis",
            source_sha256,
            grader_source_sha256(),
            installed_version("torch"),
        ]
    )
    return hashlib.sha256(material.encode()).hexdigest()


def cached(cache: Path, source_sha256: str) -> dict[str, Any] | None:
    """The analysis of the file whose bytes hash to `source_sha256`, as the probe's child
    reports one (a refusal included); None where the cache holds none."""
    entry = cache_load(cache).get(cache_key(source_sha256))
    if not isinstance(entry, dict) or entry.get("sha256") != source_sha256:
        return None
    return entry


def store(cache: Path, report: dict[str, Any]) -> None:
    """A report of the analysis of the bytes it names (`sha256`); a cache that cannot be written
    costs the next evaluation an analysis."""
    digest = report.get("sha256")
    if not isinstance(digest, str):
        return
    fields = ("error",) if report.get("error") else ("shape", "rules", "fixed_reason")
    keep = ("sha256", *fields)
    try:
        cache_store(cache, {cache_key(digest): {k: report[k] for k in keep if k in report}})
    except OSError:
        return


def analysed_from(cache: Path, fallback: Analysed | None) -> Analysed:
    """taskspec's `analysed` for a file: the cached analysis of its bytes, else `fallback`'s
    (the child the command line handed the analysis to), kept for the next evaluation."""

    def analysed(path: Path) -> dict[str, Any] | None:
        try:
            digest = hashlib.sha256(path.read_bytes()).hexdigest()
        except OSError:
            return None
        hit = cached(cache, digest)
        if hit is not None:
            return hit
        report = fallback(path) if fallback is not None else None
        if report is not None and report.get("sha256") == digest:
            store(cache, report)
        return report

    return analysed
