"""The decoy test: does the output need the solution's own kernels?

KernelBench lets a solution keep a GEMM or a convolution in cuBLAS/cuDNN and fuse the rest into
kernels of its own. A solution that leaves all the work to the library and launches a kernel
beside it that the output never reads (a decoy, or a token "epilogue" that rewrites a few elements
with their own values) must not rank. The test follows the data, not the time: the solution runs
once more, on one visible case, in a sandboxed process of its own ("decoy" role), with each of its
own kernels turned into a no-op, and the judge compares that output with the reference's.

- Still correct: its kernels did nothing the output needs (flag `decoy_kernel`).
- Different, or forward() fails without them: library work beside them is allowed.
- The silenced run still launched a kernel of its own (through a path this module does not
  silence): the test cannot tell, and the library-share rule stands in (verdicts.py).

How a kernel becomes a no-op:
- Triton: `JITFunction.run` and the interpreter's `InterpretedFunction.run` return without
  launching (a warm-up compile still compiles); `CompiledKernel[grid]` gives a runner that does
  nothing.
- Functions of extension modules (`load_inline`, `load`), operators that libraries loaded by the
  solution register under `torch.ops`, and jiterator functions: forward() runs once as usual,
  on other inputs, recording what each call returned (shapes, dtypes, or which argument it
  handed back); in the silenced run the n-th call of each returns fresh tensors of the recorded
  shapes filled with NaN (the largest value for integers), or the argument it handed back,
  untouched, and calls nothing. Arguments it would have written stay as they were.

A solution can still make its output depend on a kernel that does no real work (a kernel that
computes a factor of 1.0 the output is multiplied by): the test catches kernels the output does
not read, and the library's share of forward()'s time stays on the run page for a reader to
weigh (`summary.library_share`).
"""

from __future__ import annotations

import contextlib
import functools
import types
from collections.abc import Callable, Iterator
from dataclasses import dataclass
from pathlib import Path
from typing import Any

FLAG = "decoy_kernel"
# The stem of the silenced run's outputs in the candidate's io folder; removed before the run.
OUTPUT_STEM = "decoy"
# The record run draws its inputs from another seed, so that no memory it leaves behind holds
# the silenced case's right answer.
RECORD_SEED_OFFSET = 7919
# Operator namespaces that are never a solution's own.
_LIBRARY_NAMESPACES = frozenset(
    {"aten", "prim", "prims", "quantized", "_quantized", "profiler", "cuda", "triton", "inductor"}
)


# ---- the grading process: which case, and what the outcome means -----------------------------


def case_to_test(shapes: list[dict[str, Any]], candidate_messages: list[dict[str, Any]]) -> Any:
    """{"shape", "case"} of the visible case to run silenced, or None where there is nothing
    to test: no kernel of its own (no_own_kernel's finding), or, on a GPU, no device time
    outside its own kernels on any visible shape (nothing else could have made the output)."""
    profiled = [
        m
        for m in candidate_messages
        if m["event"] == "case" and m.get("seen", True) and "own_kernels" in m
    ]
    if not profiled or not any(m["own_kernels"] for m in profiled):
        return None
    if all(m.get("library_us", 0.0) <= 0.0 for m in profiled):
        return None
    first = next(i for i, s in enumerate(shapes) if s["seen"])
    cases = shapes[first]["cases"]
    # Signed inputs where the shape has them: an in-place ReLU of non-negative inputs changes
    # nothing, and would read as a kernel the output does not need.
    plain = [i for i, c in enumerate(cases) if not c.get("stress")]
    normal = [i for i in plain if cases[i]["distribution"] == "normal"]
    index = (normal or plain or [0])[0]
    return {"shape": first, "case": index, "case_spec": dict(cases[index])}


@dataclass(frozen=True)
class Finding:
    """What the decoy test found: "decoy" (flag it), "needed" (its kernels make the output),
    "inconclusive" (the library-share rule stands in) or "not_run"."""

    kind: str
    message: str = ""


def finding(
    tested: dict[str, Any] | None,
    outcome_messages: list[dict[str, Any]] | None,
    judge_messages: list[dict[str, Any]],
    shape: dict[str, int] | None,
) -> Finding:
    if tested is None or outcome_messages is None:
        return Finding("not_run")
    report = next((m for m in outcome_messages if m["event"] == "decoy"), None)
    if report is None:
        error = next((m for m in outcome_messages if m["event"] == "error"), None)
        said = f": {error['message'].strip().splitlines()[-1][:200]}" if error else ""
        return Finding("inconclusive", f"the silenced run ended without a report{said}")
    if report.get("failed"):
        return Finding("needed", "forward() fails without its own kernels")
    if report.get("own_kernels"):
        names = ", ".join(report["own_kernels"][:3])
        return Finding("inconclusive", f"kernels of its own still ran silenced: {names}")
    judged = next(
        (
            m
            for m in judge_messages
            if m["event"] == "judged"
            and m["shape"] == tested["shape"]
            and m["case"] == tested["case"]
            and "decoy_correct" in m
        ),
        None,
    )
    if judged is None:
        return Finding("inconclusive", "the silenced run's output was not judged")
    if not judged["decoy_correct"]:
        return Finding("needed", judged.get("decoy_reason", ""))
    silenced = int(report.get("silenced", 0))
    return Finding(
        "decoy",
        f"with its own kernels turned into no-ops ({silenced} launches and calls skipped), "
        f"forward() still returned the correct output on shape {shape}: its own kernels did "
        "nothing the output needs",
    )


# ---- the judge: the silenced output against the reference's -----------------------------------


def judge_silenced(
    job: dict[str, Any], index: int, case_index: int, expected: list[Any], device: str
) -> dict[str, Any]:
    """{"decoy_correct", "decoy_reason"} where this is the tested case and the silenced run
    wrote its outputs; {} otherwise. Called by the judge with the reference's outputs."""
    from grader.compare import compare_outputs
    from grader.outputs import OutputFileError, read_outputs

    tested = job.get("decoy")
    if not tested or (tested["shape"], tested["case"]) != (index, case_index):
        return {}
    stem = Path(job["io_dir"]) / OUTPUT_STEM
    try:
        actual = read_outputs(stem, device)
    except OutputFileError:
        return {}
    verdict = compare_outputs(expected, actual, atol=job["atol"], rtol=job["rtol"])
    del actual
    stem.with_suffix(".bin").unlink(missing_ok=True)
    return {"decoy_correct": verdict.correct, "decoy_reason": verdict.reason[:300]}


def clear_output(io_dir: Path) -> None:
    """Nothing the first candidate run left may pass for the silenced run's output."""
    for suffix in (".json", ".bin"):
        (io_dir / OUTPUT_STEM).with_suffix(suffix).unlink(missing_ok=True)


# ---- the sandboxed child: forward() with its own kernels silenced -------------------------------


class Silencer:
    """Record, then silence, the solution's own kernel launches and extension calls."""

    def __init__(self) -> None:
        self.silent = False
        self.skipped = 0
        self.unrecorded = 0
        self._records: dict[int, list[Any]] = {}
        self._positions: dict[int, int] = {}
        self._wrapped: dict[tuple[int, str], Any] = {}

    # -- Triton --
    def install_triton(self) -> None:
        with contextlib.suppress(ImportError):
            from triton.runtime.jit import JITFunction

            self._patch_run(JITFunction)
        with contextlib.suppress(ImportError):
            from triton.runtime.interpreter import InterpretedFunction

            self._patch_run(InterpretedFunction)
        with contextlib.suppress(ImportError):
            from triton.compiler.compiler import CompiledKernel

            original_getitem = CompiledKernel.__getitem__
            silencer = self

            def getitem(kernel: Any, grid: Any) -> Any:
                runner = original_getitem(kernel, grid)

                def run(*args: Any, **kwargs: Any) -> Any:
                    if silencer.silent:
                        silencer.skipped += 1
                        return None
                    return runner(*args, **kwargs)

                return run

            CompiledKernel.__getitem__ = getitem

    def _patch_run(self, cls: Any) -> None:
        original = cls.run
        silencer = self

        def run(fn: Any, *args: Any, **kwargs: Any) -> Any:
            if silencer.silent and not kwargs.get("warmup"):
                silencer.skipped += 1
                return None
            return original(fn, *args, **kwargs)

        cls.run = run

    # -- extension modules, torch.ops, jiterator --
    def install_extensions(self) -> None:
        from torch.utils import cpp_extension

        for attribute in ("load_inline", "load"):
            loader = getattr(cpp_extension, attribute)
            setattr(cpp_extension, attribute, self._wrap_loader(loader))
        with contextlib.suppress(ImportError, AttributeError):
            import torch.cuda.jiterator as jiterator

            for name in ("_create_jit_fn", "_create_multi_output_jit_fn"):
                factory = getattr(jiterator, name)
                setattr(jiterator, name, self._wrap_factory(factory))

    def _wrap_loader(self, loader: Callable[..., Any]) -> Callable[..., Any]:
        @functools.wraps(loader)
        def load(*args: Any, **kwargs: Any) -> Any:
            module = loader(*args, **kwargs)
            return _SilencedModule(module, self) if isinstance(module, types.ModuleType) else module

        return load

    def _wrap_factory(self, factory: Callable[..., Any]) -> Callable[..., Any]:
        @functools.wraps(factory)
        def make(*args: Any, **kwargs: Any) -> Any:
            return self.wrap(factory(*args, **kwargs))

        return make

    def adopt_ops(self, names: set[str]) -> None:
        """Operators the solution's libraries registered: calls through torch.ops.<ns>.<op>."""
        import torch

        for qualified in sorted(names):
            namespace, _, op = qualified.partition("::")
            op = op.split(".", 1)[0]
            if namespace in _LIBRARY_NAMESPACES or not op:
                continue
            with contextlib.suppress(Exception):
                holder = getattr(torch.ops, namespace)
                setattr(holder, op, self.wrap(getattr(holder, op)))

    def wrap(self, fn: Any) -> Any:
        if not callable(fn) or getattr(fn, "__arena_silenced__", False):
            return fn
        key = id(fn)
        silencer = self

        def call(*args: Any, **kwargs: Any) -> Any:
            return silencer._call(key, fn, args, kwargs)

        call.__arena_silenced__ = True  # type: ignore[attr-defined]
        with contextlib.suppress(AttributeError, TypeError):
            call.__name__ = getattr(fn, "__name__", "silenced")
            call.__doc__ = getattr(fn, "__doc__", None)
        return call

    def wrap_cached(self, name: str, value: Any, module: Any) -> Any:
        """One wrapper per function of a module, so that its calls share one record."""
        key = (id(module), name)
        if key not in self._wrapped:
            self._wrapped[key] = self.wrap(value)
        return self._wrapped[key]

    def _call(self, key: int, fn: Any, args: tuple[Any, ...], kwargs: dict[str, Any]) -> Any:
        if not self.silent:
            result = fn(*args, **kwargs)
            self._records.setdefault(key, []).append(_describe(result, [*args, *kwargs.values()]))
            return result
        position = self._positions.get(key, 0)
        recorded = self._records.get(key, [])
        if position >= len(recorded):
            # Called more often than in the record run: nothing to stand in with.
            self.unrecorded += 1
            return fn(*args, **kwargs)
        self._positions[key] = position + 1
        self.skipped += 1
        return _stand_in(recorded[position], [*args, *kwargs.values()])


class _SilencedModule:
    """An extension module whose functions go through the Silencer."""

    def __init__(self, module: types.ModuleType, silencer: Silencer) -> None:
        object.__setattr__(self, "_module", module)
        object.__setattr__(self, "_silencer", silencer)

    def __getattr__(self, name: str) -> Any:
        value = getattr(self._module, name)
        if callable(value) and not isinstance(value, type):
            return self._silencer.wrap_cached(name, value, self._module)
        return value

    def __dir__(self) -> list[str]:
        return dir(self._module)


def _describe(result: Any, arguments: list[Any]) -> Any:
    """What a call returned, as the silenced run will stand in for it."""
    import torch

    if isinstance(result, torch.Tensor):
        for position, argument in enumerate(arguments):
            if argument is result:
                return ("argument", position)
            if isinstance(argument, torch.Tensor) and _same_storage(argument, result):
                # A view of an argument: the silenced call hands back the same view of it.
                layout = (tuple(result.shape), result.stride(), result.storage_offset())
                return ("view", position, *layout)
        return ("tensor", tuple(result.shape), result.dtype, result.device, result.stride())
    if isinstance(result, (list, tuple)):
        return ("sequence", type(result), [_describe(r, arguments) for r in result])
    return ("value", result)


def _stand_in(description: Any, arguments: list[Any]) -> Any:
    import torch

    kind = description[0]
    if kind == "argument":
        return arguments[description[1]]
    if kind == "view":
        _, position, shape, stride, offset = description
        return arguments[position].as_strided(shape, stride, offset)
    if kind == "tensor":
        _, shape, dtype, device, stride = description
        tensor = torch.empty_strided(shape, stride, dtype=dtype, device=device)
        return tensor.fill_(_garbage(dtype))
    if kind == "sequence":
        _, sequence_type, items = description
        values = [_stand_in(item, arguments) for item in items]
        return values if sequence_type is list else sequence_type(values)
    return description[1]


def _same_storage(a: Any, b: Any) -> bool:
    return bool(a.untyped_storage().data_ptr() == b.untyped_storage().data_ptr())


def _garbage(dtype: Any) -> Any:
    import torch

    if dtype.is_floating_point or dtype.is_complex:
        return float("nan")
    if dtype == torch.bool:
        return True
    return torch.iinfo(dtype).max


def registered_ops() -> set[str]:
    import torch

    try:
        return set(torch._C._dispatch_get_all_op_names())
    except Exception:  # an older torch: no operator is silenced through torch.ops
        return set()


@contextlib.contextmanager
def silenced(silencer: Silencer) -> Iterator[None]:
    silencer.silent = True
    try:
        yield
    finally:
        silencer.silent = False


# The candidate's construction, repeated: the same seed before the reference's Model and before
# ModelNew, then the reference's weights where names and shapes match.
INIT_SEED = 42


def run_child(job: dict[str, Any]) -> None:
    """The "decoy" role; anything that fails before the silenced run is reported as an error
    (the test is then inconclusive)."""
    from grader import channel

    try:
        _run_child(job)
    except Exception as exc:
        channel.send("error", stage="decoy", message=f"{type(exc).__name__}: {str(exc)[:2000]}")


def _run_child(job: dict[str, Any]) -> None:
    """The "decoy" role: the solution loaded with its kernels wrapped, ModelNew built as the
    candidate builds it, one record run on other inputs, then the tested case silenced; its
    outputs go to the io folder for the judge, and one "decoy" message says what ran."""
    import torch

    from grader import channel, guards
    from grader.builds import ExtensionLoaders
    from grader.cases import Case, case_inputs
    from grader.modules import load_module
    from grader.outputs import write_outputs

    device, tested = job["device"], job["decoy"]
    ExtensionLoaders(job.get("prebuilt"), build_only=False).install()
    silencer = Silencer()
    silencer.install_extensions()
    silencer.install_triton()
    before = registered_ops()
    reference = load_module(Path(job["reference_path"]), "reference")
    solution = load_module(Path(job["solution_path"]), "solution")
    silencer.adopt_ops(registered_ops() - before)
    shape = job["shapes"][tested["shape"]]["shape"]
    case = Case.from_dict(tested["case_spec"])
    model = _build(reference, solution, shape, device)
    with torch.no_grad():
        record = Case(case.seed + RECORD_SEED_OFFSET, case.distribution)
        recorded = _as_list(model(*case_inputs(reference, shape, record, device)))
        largest = max((_bytes(o) for o in recorded), default=1 << 20)
        del recorded
        _poison(device, largest)
        inputs = case_inputs(reference, shape, case, device)
        try:
            with silenced(silencer):
                output, profile = guards.profile_call(lambda: model(*inputs), device)
        except Exception as exc:
            channel.send("decoy", failed=f"{type(exc).__name__}: {str(exc)[:300]}")
            return
    outputs = _as_list(output)
    if not all(isinstance(o, torch.Tensor) for o in outputs):
        channel.send("decoy", failed="forward() returned something other than tensors")
        return
    write_outputs(Path(job["io_dir"]) / OUTPUT_STEM, outputs)
    del output, outputs
    still_own = profile.own_kernels([]) - _reference_kernels(reference, shape, case, device)
    channel.send(
        "decoy",
        silenced=silencer.skipped,
        unrecorded=silencer.unrecorded,
        own_kernels=sorted(still_own)[:20],
    )


def _reference_kernels(reference: Any, shape: dict[str, int], case: Any, device: str) -> set[str]:
    """The kernels torch itself launches for the reference on this case: a kernel of torch's
    whose name carries no library mark (PyTorch's softmax_warp_forward, say) that the silenced
    run launched too is torch's, not one of the solution's that escaped silencing. Run after
    the silenced output is written and freed, on fresh inputs, so that no memory the silenced
    run could reuse ever held the reference's answer."""
    import torch

    from grader import guards
    from grader.cases import case_inputs

    if device != "cuda":
        return set()
    torch.manual_seed(INIT_SEED)
    model = reference.Model(*reference.get_init_inputs()).to(device).eval()
    inputs = case_inputs(reference, shape, case, device)
    with torch.no_grad():
        _, profile = guards.profile_call(lambda: model(*inputs), device)
    return {kernel.name for kernel in profile.kernels}


def _build(reference: Any, solution: Any, shape: dict[str, int], device: str) -> Any:
    import torch

    from grader.modules import apply_shape, set_constants

    apply_shape(reference, shape)
    set_constants(solution, {k: v for k, v in shape.items() if hasattr(solution, k)})
    init_inputs = reference.get_init_inputs()
    torch.manual_seed(INIT_SEED)
    reference_model = reference.Model(*init_inputs).to(device).eval()
    torch.manual_seed(INIT_SEED)
    model = solution.ModelNew(*init_inputs).to(device).eval()
    state, own = reference_model.state_dict(), model.state_dict()
    if state and set(own) == set(state) and all(own[k].shape == v.shape for k, v in state.items()):
        model.load_state_dict(state, strict=True)
    return model


def _as_list(output: Any) -> list[Any]:
    return list(output) if isinstance(output, (list, tuple)) else [output]


def _bytes(value: Any) -> int:
    import torch

    return value.numel() * value.element_size() if isinstance(value, torch.Tensor) else 0


def _poison(device: str, largest: int) -> None:
    """Freed cached device memory filled with NaN, as before every candidate call: a buffer
    a silenced kernel would have written holds no earlier answer."""
    import torch

    if device != "cuda":
        return
    blocks = [torch.full((largest // 4 + 1,), float("nan"), device="cuda") for _ in range(2)]
    del blocks
