"""What the grader knows of a task: its reference, shapes, formulas and tolerance.

A task is a catalogue folder (task.toml + reference.py, see docs/tasks.md), a slug found in the
catalogue, or a raw KernelBench problem file whose single shape is its module constants.
"""

import copy
import hashlib
import math
import os
import re
import tomllib
from collections.abc import Callable, Sequence
from dataclasses import dataclass, field
from pathlib import Path
from typing import Any

from grader import environment
from grader.formulas import FormulaError, formula_names
from grader.generalization import RuleError, rules_from_manifest

CATEGORIES = ("torch2cuda", "torch2triton", "triton2triton", "cuda2cuda", "hard")
REGIMES = ("compute", "memory")
DTYPES = ("float32", "float16", "bfloat16", "float8_e4m3fn", "int8", "int32", "int64")
DEFAULT_CATALOG = environment.DEFAULT_CATALOG

Shape = dict[str, int]
STRESS_KEYS = ("name", "input_scales", "state_scales", "tolerance")


class TaskError(ValueError):
    """A task that cannot be loaded; the message names the file and field."""


@dataclass(frozen=True)
class StressCase:
    """One correctness case rerun on every visible shape with inputs and/or model state scaled
    (KernelBench-Hard's numeric stress): x becomes (x.float() * factor).to(x.dtype)."""

    name: str
    # Position in get_inputs() -> factor.
    input_scales: dict[int, float] = field(default_factory=dict)
    # Parameter or buffer name -> factor, in the reference's model and the candidate's alike.
    state_scales: dict[str, float] = field(default_factory=dict)
    # atol and/or rtol for this case (absolute, over the dtype's defaults); empty: the task's.
    tolerance: dict[str, float] = field(default_factory=dict)

    def to_dict(self) -> dict[str, Any]:
        return {
            "name": self.name,
            "input_scales": {str(k): v for k, v in self.input_scales.items()},
            "state_scales": dict(self.state_scales),
            "tolerance": dict(self.tolerance),
        }


@dataclass(frozen=True)
class TaskSpec:
    slug: str
    title: str
    category: str
    suite: str
    folder: Path
    reference_path: Path
    dtype: str
    regime: str
    flops: str
    bytes_moved: str
    backends: tuple[str, ...]
    visible_shapes: tuple[Shape, ...]
    cpu_shapes: tuple[Shape, ...]
    forbidden_ops: tuple[str, ...] = ()
    tolerance: dict[str, float] = field(default_factory=dict)
    version_hash: str = ""
    # Rules for drawing unseen shapes (see generalization.py); empty: the task has none.
    generalization: dict[str, Any] = field(default_factory=dict)
    # Why a task has no generalization rules, when it has none ("nothing to vary").
    fixed_reason: str = ""
    stress_cases: tuple[StressCase, ...] = ()

    def shapes_for(self, device: str) -> tuple[Shape, ...]:
        # The Triton interpreter runs kernels in numpy on the CPU; a task may name smaller
        # shapes for that path so correctness stays testable without a GPU.
        if device == "cpu" and self.cpu_shapes:
            return self.cpu_shapes
        return self.visible_shapes

    def to_dict(self) -> dict[str, Any]:
        return {
            "slug": self.slug,
            "title": self.title,
            "category": self.category,
            "suite": self.suite,
            "dtype": self.dtype,
            "regime": self.regime,
            "flops": self.flops,
            "bytes": self.bytes_moved,
            "backends": list(self.backends),
            "visible_shapes": [dict(s) for s in self.visible_shapes],
            "cpu_shapes": [dict(s) for s in self.cpu_shapes],
            "forbidden_ops": list(self.forbidden_ops),
            "tolerance": dict(self.tolerance),
            "version_hash": self.version_hash,
            "generalization": copy.deepcopy(self.generalization),
            **({"fixed_reason": self.fixed_reason} if self.fixed_reason else {}),
            **(
                {"stress_cases": [c.to_dict() for c in self.stress_cases]}
                if self.stress_cases
                else {}
            ),
        }


def catalog_roots(dirs: Sequence[str | os.PathLike[str]] | None = None) -> list[Path]:
    """The catalogues a slug is looked up in, in order, each once: `dirs` (a deployment's
    settings), else the environment's (environment.catalog_dirs)."""
    roots: list[Path] = []
    for folder in dirs if dirs is not None else environment.catalog_dirs():
        root = Path(folder).resolve()
        if root not in roots:
            roots.append(root)
    return roots


def load_task(
    task: str | os.PathLike[str],
    *,
    catalog: Path | None = None,
    catalogs: Sequence[str | os.PathLike[str]] | None = None,
    analysed: Callable[[Path], dict[str, Any] | None] | None = None,
) -> TaskSpec:
    """Load a task from a folder, a KernelBench problem file, or a catalogue slug (looked up in
    `catalog`, else in `catalogs`, else in the environment's catalogues). `analysed`: where a
    child already analysed a KernelBench file (preludes.py), its report for a path, or None."""
    path = Path(task)
    if path.is_dir():
        return load_task_folder(path)
    if path.suffix == ".py" and path.is_file():
        return load_kernelbench_file(path, analysed)
    roots = [catalog] if catalog is not None else catalog_roots(catalogs)
    return load_task_folder(find_task_folder(str(task), *roots))


def iter_task_folders(catalog: Path) -> list[Path]:
    # Hidden folders (an import's staging area) are never part of a catalogue.
    folders = (p.parent for p in catalog.glob("*/*/task.toml"))
    return sorted(
        f for f in folders if not f.name.startswith(".") and not f.parent.name.startswith(".")
    )


def find_task_folder(slug: str, *catalogs: Path) -> Path:
    for folder in (f for catalog in catalogs for f in iter_task_folders(catalog)):
        try:
            with (folder / "task.toml").open("rb") as fh:
                if tomllib.load(fh).get("slug") == slug:
                    return folder
        except (OSError, tomllib.TOMLDecodeError):
            continue
    where = " or ".join(str(c) for c in catalogs)
    raise TaskError(f"no task with slug {slug!r} in {where}")


def folder_version_hash(folder: Path) -> str:
    digest = hashlib.sha256()
    for path in sorted(p for p in folder.rglob("*") if p.is_file() and _is_task_file(p)):
        digest.update(path.relative_to(folder).as_posix().encode())
        digest.update(b"\0")
        digest.update(path.read_bytes())
        digest.update(b"\0")
    return digest.hexdigest()


def _is_task_file(path: Path) -> bool:
    return "__pycache__" not in path.parts and path.suffix not in {".pyc", ".pyo"}


def load_task_folder(folder: Path) -> TaskSpec:
    folder = folder.resolve()
    manifest_path = folder / "task.toml"
    try:
        with manifest_path.open("rb") as fh:
            manifest = tomllib.load(fh)
    except FileNotFoundError:
        raise TaskError(f"{manifest_path}: file not found") from None
    except tomllib.TOMLDecodeError as exc:
        raise TaskError(f"{manifest_path}: not valid TOML: {exc}") from None
    reference = folder / "reference.py"
    if not reference.is_file():
        raise TaskError(f"{reference}: file not found")
    return _spec_from_manifest(manifest, manifest_path, folder, reference)


def _spec_from_manifest(
    manifest: dict[str, Any], where: Path, folder: Path, reference: Path
) -> TaskSpec:
    reader = _ManifestReader(manifest, where)
    # Read in the order a contributor writes the manifest, so the first error is the first field.
    slug, title = reader.string("slug"), reader.string("title")
    category = reader.choice("category", CATEGORIES)
    backends = tuple(reader.string_list("backends", required=True))
    dtype, regime = reader.choice("dtype", DTYPES), reader.choice("regime", REGIMES)
    fixed_reason = reader.optional_string("fixed_reason")
    visible = reader.shapes("visible_shapes", required=True, empty_ok=bool(fixed_reason))
    cpu = reader.shapes("cpu_shapes", required=False)
    if cpu and set(cpu[0]) != set(visible[0]):
        raise reader.fail("cpu_shapes[0]", "names different dimensions than visible_shapes")
    for name in ("flops", "bytes"):
        reader.formula(name, set(visible[0]))
    generalization = reader.generalization(visible, cpu)
    if fixed_reason and generalization:
        raise reader.fail("fixed_reason", "a task with generalization rules has things to vary")
    return TaskSpec(
        slug=slug,
        title=title,
        category=category,
        suite=folder.parent.name,
        folder=folder,
        reference_path=reference,
        dtype=dtype,
        regime=regime,
        flops=reader.string("flops"),
        bytes_moved=reader.string("bytes"),
        backends=backends,
        visible_shapes=visible,
        cpu_shapes=cpu,
        forbidden_ops=tuple(reader.string_list("forbidden_ops", required=False)),
        tolerance=reader.tolerance(),
        version_hash=folder_version_hash(folder),
        generalization=generalization,
        fixed_reason=fixed_reason,
        stress_cases=reader.stress_cases(),
    )


class _ManifestReader:
    def __init__(self, manifest: dict[str, Any], where: Path) -> None:
        self.manifest = manifest
        self.where = where

    def fail(self, field_name: str, message: str) -> TaskError:
        return TaskError(f"{self.where}: field {field_name!r}: {message}")

    def string(self, name: str) -> str:
        value = self.manifest.get(name)
        if not isinstance(value, str) or not value.strip():
            raise self.fail(name, "must be a non-empty string")
        return value

    def optional_string(self, name: str) -> str:
        if name not in self.manifest:
            return ""
        return self.string(name)

    def choice(self, name: str, allowed: tuple[str, ...]) -> str:
        value = self.string(name)
        if value not in allowed:
            raise self.fail(name, f"{value!r} is not one of {', '.join(allowed)}")
        return value

    def string_list(self, name: str, *, required: bool) -> list[str]:
        value = self.manifest.get(name, None if required else [])
        if not isinstance(value, list) or not all(isinstance(v, str) for v in value):
            raise self.fail(name, "must be a list of strings")
        if required and not value:
            raise self.fail(name, "must not be empty")
        return value

    def formula(self, name: str, dim_names: set[str]) -> None:
        expression = self.string(name)
        try:
            unknown = formula_names(expression) - dim_names
        except FormulaError as exc:
            raise self.fail(name, str(exc)) from None
        if unknown:
            raise self.fail(name, f"unknown dimension(s) {', '.join(sorted(unknown))}")

    def shapes(self, name: str, *, required: bool, empty_ok: bool = False) -> tuple[Shape, ...]:
        raw = self.manifest.get(name)
        if raw is None and not required:
            return ()
        if not isinstance(raw, list) or not raw:
            raise self.fail(name, "must be a non-empty list of tables such as {N = 4096}")
        shapes: list[Shape] = []
        for index, shape in enumerate(raw):
            # A task with nothing to vary (and a fixed_reason saying so) has one empty shape.
            if not isinstance(shape, dict) or not (shape or empty_ok):
                raise self.fail(f"{name}[{index}]", "must be a table of dimension = integer")
            for dim, value in shape.items():
                if not dim.isidentifier() or isinstance(value, bool) or not isinstance(value, int):
                    raise self.fail(f"{name}[{index}].{dim}", "must be an integer dimension")
                if value <= 0:
                    raise self.fail(f"{name}[{index}].{dim}", "must be positive")
            if set(shape) != set(raw[0]):
                raise self.fail(f"{name}[{index}]", "names different dimensions than the first")
            shapes.append(dict(shape))
        return tuple(shapes)

    def generalization(self, visible: tuple[Shape, ...], cpu: tuple[Shape, ...]) -> dict[str, Any]:
        if "generalization" not in self.manifest:
            return {}
        try:
            return rules_from_manifest(self.manifest["generalization"], visible=visible, cpu=cpu)
        except RuleError as exc:
            raise self.fail(exc.field, exc.message) from None

    def tolerance(self, raw: Any = None, where: str = "tolerance") -> dict[str, float]:
        raw = self.manifest.get("tolerance", {}) if raw is None else raw
        if not isinstance(raw, dict):
            raise self.fail(where, "must be a table with atol and/or rtol")
        result: dict[str, float] = {}
        for key, value in raw.items():
            if key not in ("atol", "rtol"):
                raise self.fail(f"{where}.{key}", "only atol and rtol may be set")
            if isinstance(value, bool) or not isinstance(value, (int, float)) or value < 0:
                raise self.fail(f"{where}.{key}", "must be a non-negative number")
            result[key] = float(value)
        return result

    def stress_cases(self) -> tuple[StressCase, ...]:
        raw = self.manifest.get("stress_cases", [])
        if not isinstance(raw, list):
            raise self.fail("stress_cases", "must be a list of tables ([[stress_cases]])")
        cases = tuple(self.stress_case(index, table) for index, table in enumerate(raw))
        names = [c.name for c in cases]
        twice = sorted({n for n in names if names.count(n) > 1})
        if twice:
            raise self.fail("stress_cases", f"name {twice[0]!r} is used more than once")
        return cases

    def stress_case(self, index: int, table: Any) -> StressCase:
        where = f"stress_cases[{index}]"
        if not isinstance(table, dict):
            raise self.fail(where, "must be a table with name, input_scales, state_scales")
        unknown = sorted(set(table) - set(STRESS_KEYS))
        if unknown:
            raise self.fail(
                f"{where}.{unknown[0]}", f"unknown key; one of {', '.join(STRESS_KEYS)}"
            )
        name = table.get("name")
        if not isinstance(name, str) or not re.fullmatch(r"[A-Za-z0-9_.-]+", name):
            raise self.fail(f"{where}.name", "must be a name of letters, digits, '_', '.', '-'")
        inputs = self.scales(table.get("input_scales", {}), f"{where}.input_scales")
        states = self.scales(table.get("state_scales", {}), f"{where}.state_scales")
        for key in inputs:
            if not key.isdigit():
                raise self.fail(
                    f"{where}.input_scales.{key}", "must be an input position (0, 1, ..)"
                )
        if not inputs and not states:
            raise self.fail(where, "scales nothing: give input_scales and/or state_scales")
        tolerance = self.tolerance(table.get("tolerance", {}), f"{where}.tolerance")
        return StressCase(name, {int(k): v for k, v in inputs.items()}, states, tolerance)

    def scales(self, raw: Any, where: str) -> dict[str, float]:
        if not isinstance(raw, dict):
            raise self.fail(where, "must be a table of name = factor")
        for key, value in raw.items():
            if isinstance(value, dict):  # a bare dotted key (proj.weight = 0.1) nests in TOML
                raise self.fail(f"{where}.{key}", 'a dotted name must be quoted ("a.b" = 0.1)')
            number = isinstance(value, (int, float)) and not isinstance(value, bool)
            if not number or not math.isfinite(value) or value <= 0:
                raise self.fail(f"{where}.{key}", "must be a positive finite number")
        return {str(k): float(v) for k, v in raw.items()}


def load_kernelbench_file(
    path: Path, analysed: Callable[[Path], dict[str, Any] | None] | None = None
) -> TaskSpec:
    """A raw KernelBench problem: Model, get_inputs, get_init_inputs and size constants.

    Its shape is the constants that set input sizes (see kbproblem), at their written values.
    The analysis is a child's (`analysed`, roles/prelude.py) where it read the same bytes.
    """
    path = path.resolve()
    source = path.read_bytes()
    report = analysed(path) if analysed is not None else None
    if report is not None and report.get("sha256") == hashlib.sha256(source).hexdigest():
        if report.get("error"):
            raise TaskError(str(report["error"]))
        shape, rules = dict(report["shape"]), dict(report["rules"])
        fixed_reason = str(report["fixed_reason"])
    else:
        shape, rules, fixed_reason = _analyse_here(path)
    return TaskSpec(
        slug=f"kernelbench/{path.stem}",
        title=path.stem,
        category="torch2cuda",
        suite="kernelbench",
        folder=path.parent,
        reference_path=path,
        dtype="float32",
        regime="compute",
        flops="0",
        bytes_moved="0",
        backends=("cuda", "triton"),
        visible_shapes=(shape,),
        cpu_shapes=(),
        version_hash=hashlib.sha256(source).hexdigest(),
        generalization=rules,
        fixed_reason=fixed_reason,
    )


def _analyse_here(path: Path) -> tuple[dict[str, int], dict[str, Any], str]:
    # Imported here: it needs torch, which loading catalogue manifests does not.
    from grader.kbproblem import ProblemError, analyse_problem, parse_problem

    try:
        analysis = analyse_problem(path, parse_problem(path))
    except ProblemError as exc:
        raise TaskError(str(exc)) from None
    return analysis.shape, analysis.rules, analysis.fixed_reason
