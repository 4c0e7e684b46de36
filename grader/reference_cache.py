"""What a warm judge (docs/grading-pipeline.md, "Warm judges") keeps between evaluations: each
case's expected outputs, by what determines them, in host memory within a byte budget, least
recently used out first. The next solution of the same task then runs no reference on a case
it holds: the judge copies the outputs back to the device and compares.

A case is determined by the reference's source, the shape, the case (seed, distribution, stress
case and its scales), the dtype and the device; the torch and GPU it ran on are the judge
process's own, which lives for one GPU worker. Host memory, not the device's: the GPU's memory
is the candidate's while it runs, and copying a case's outputs back costs milliseconds.
"""

import hashlib
import json
from collections import OrderedDict
from dataclasses import dataclass
from typing import Any

import torch

from grader.compare import PrecisionTruth


@dataclass
class Expected:
    """One case as the judge computed it: the reference's outputs, whether they view its inputs,
    the largest tensor's elements, the float64 truth where precision is checked, and why the case
    is skipped (a distribution the reference is not finite on), if it is."""

    outputs: list[Any]
    reference_aliases: list[str]
    largest_elements: int
    precision: PrecisionTruth | None = None
    # Whether precision was checked on this case (the float64 truth may still be None: its
    # copies would not fit, or the model does not run in float64).
    precise: bool = False
    skipped: str = ""

    @property
    def nbytes(self) -> int:
        """Each output's bytes, and the float64 truth's: a tensor listed twice counts twice,
        as its copy on the host does."""
        truth = self.precision.truth if self.precision is not None else []
        return sum(
            v.numel() * v.element_size()
            for v in [*self.outputs, *truth]
            if isinstance(v, torch.Tensor)
        )

    def to_host(self) -> "Expected":
        return _moved(self, "cpu")

    def to_device(self, device: str) -> "Expected":
        return _moved(self, device)


def _moved(entry: Expected, device: str) -> Expected:
    def move(values: list[Any]) -> list[Any]:
        return [v.to(device) if isinstance(v, torch.Tensor) else v for v in values]

    precision = entry.precision
    if precision is not None:
        precision = PrecisionTruth(move(precision.truth), precision.reference_err)
    return Expected(
        move(entry.outputs),
        list(entry.reference_aliases),
        entry.largest_elements,
        precision,
        entry.precise,
        entry.skipped,
    )


def case_key(job: dict[str, Any], shape: dict[str, int], case: dict[str, Any]) -> str:
    """What determines a case's expected outputs (see the module's docstring)."""
    stress = job.get("stress_cases", {}).get(case.get("stress") or "", None)
    material = json.dumps(
        {
            "reference": job["reference_sha256"],
            "shape": shape,
            "case": case,
            "stress": stress,
            "dtype": job["dtype"],
            "device": job["device"],
        },
        sort_keys=True,
    )
    return hashlib.sha256(material.encode()).hexdigest()


# Host copies move at about this rate each way (pageable memory, PCIe): a case whose reference
# ran in less time than its copy out and back would take is cheaper to compute again.
COPY_BYTES_PER_S = 10e9


def worth_caching(nbytes: int, compute_s: float | None, *, on_device: bool) -> bool:
    """Whether holding a case saves more than it costs: what a hit saves is the reference's
    time (drawing the inputs and running it), what it costs is the copies to and from the
    host, which cost nothing where the outputs are already in host memory."""
    if compute_s is None or not on_device:
        return True
    return compute_s >= 2 * nbytes / COPY_BYTES_PER_S


class ReferenceCache:
    def __init__(self, budget_bytes: int) -> None:
        self.budget_bytes = max(0, int(budget_bytes))
        self.held_bytes = 0
        self.hits = self.misses = 0
        self._entries: OrderedDict[str, Expected] = OrderedDict()

    def resize(self, budget_bytes: int) -> None:
        self.budget_bytes = max(0, int(budget_bytes))
        self._evict_to(self.budget_bytes)

    def get(self, key: str, device: str) -> Expected | None:
        entry = self._entries.get(key)
        if entry is None:
            self.misses += 1
            return None
        self.hits += 1
        self._entries.move_to_end(key)
        return entry.to_device(device)

    def put(self, key: str, entry: Expected, compute_s: float | None = None) -> bool:
        """Keeps a host copy where it fits the budget (older entries go first) and is worth
        its copies (worth_caching, from `compute_s`, the seconds the case took to compute);
        False where it is not kept."""
        on_device = any(
            isinstance(v, torch.Tensor) and v.device.type != "cpu" for v in entry.outputs
        )
        nbytes = entry.nbytes
        if nbytes > self.budget_bytes or not worth_caching(nbytes, compute_s, on_device=on_device):
            return False
        if key in self._entries:
            self.held_bytes -= self._entries.pop(key).nbytes
        self._evict_to(self.budget_bytes - nbytes)
        self._entries[key] = entry.to_host()
        self.held_bytes += nbytes
        return True

    def _evict_to(self, limit: int) -> None:
        while self._entries and self.held_bytes > limit:
            _, dropped = self._entries.popitem(last=False)
            self.held_bytes -= dropped.nbytes

    def __len__(self) -> int:
        return len(self._entries)
