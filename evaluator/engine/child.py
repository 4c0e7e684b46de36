"""Entry point of a grader child process: `python -m evaluator.engine.child JOB.json`.

role "reference" builds the reference model, draws inputs per (shape, seed), and writes inputs
and expected outputs; role "candidate" imports the solution, builds ModelNew with the reference
weights and writes its outputs. Progress goes over the private channel only; comparison happens
in the grading process, which never imports the candidate's code.
"""

import functools
import json
import sys
import traceback
from pathlib import Path
from typing import Any

INIT_SEED = 42


def main(job_path: str) -> int:
    job = json.loads(Path(job_path).read_text())
    # Imported here so that an import failure of torch itself is reported over the channel.
    from evaluator.engine import channel

    try:
        if job["role"] == "reference":
            _run_reference(job)
        else:
            _run_candidate(job)
    except _StageError as exc:
        channel.send("error", stage=exc.stage, message=exc.message, shape=exc.shape_index)
        return 3
    channel.send("done")
    return 0


class _StageError(Exception):
    def __init__(self, stage: str, message: str, shape_index: int | None = None) -> None:
        super().__init__(message)
        self.stage, self.message, self.shape_index = stage, message, shape_index


def _describe(exc: BaseException) -> str:
    lines = traceback.format_exception(exc)
    text = "".join(lines[-12:])
    return text[-4000:]


def _device_tensors(values: Any, device: str) -> Any:
    import torch

    if isinstance(values, torch.Tensor):
        return values.to(device)
    if isinstance(values, (list, tuple)):
        return type(values)(_device_tensors(v, device) for v in values)
    return values


def _as_output_list(output: Any) -> list[Any]:
    return list(output) if isinstance(output, (list, tuple)) else [output]


def _run_reference(job: dict[str, Any]) -> None:
    import torch

    from evaluator.engine import channel
    from evaluator.engine.modules import apply_shape, load_module
    from evaluator.engine.timing import time_callable_ms

    device, io_dir, private_dir = job["device"], Path(job["io_dir"]), Path(job["private_dir"])
    module = load_module(Path(job["reference_path"]), "reference")
    for index, shape in enumerate(job["shapes"]):
        apply_shape(module, shape)
        torch.manual_seed(INIT_SEED)
        model = module.Model(*module.get_init_inputs()).to(device).eval()
        torch.save(model.state_dict(), io_dir / f"state_{index}.pt")
        eager: list[float] = []
        for seed in job["seeds"]:
            torch.manual_seed(seed)
            inputs = _device_tensors(list(module.get_inputs()), device)
            with torch.no_grad():
                outputs = _as_output_list(model(*[_clone(x) for x in inputs]))
            torch.save([_cpu(x) for x in inputs], io_dir / f"inputs_{index}_{seed}.pt")
            torch.save([_cpu(x) for x in outputs], private_dir / f"expected_{index}_{seed}.pt")
            if job["timed"]:
                with torch.no_grad():
                    eager.extend(time_callable_ms(functools.partial(model, *inputs), device=device))
        channel.send("reference_shape", shape=index, eager_ms=eager)


def _clone(value: Any) -> Any:
    import torch

    return value.clone() if isinstance(value, torch.Tensor) else value


def _cpu(value: Any) -> Any:
    import torch

    return value.detach().cpu() if isinstance(value, torch.Tensor) else value


def _run_candidate(job: dict[str, Any]) -> None:
    import torch

    from evaluator.engine import channel
    from evaluator.engine.modules import apply_shape, load_module
    from evaluator.engine.timing import time_callable_ms

    device, io_dir = job["device"], Path(job["io_dir"])
    channel.send("started")
    try:
        solution = load_module(Path(job["solution_path"]), "solution")
    except BaseException as exc:
        raise _StageError("compile", _describe(exc)) from None
    if not callable(getattr(solution, "ModelNew", None)):
        raise _StageError("compile", "the solution does not define a ModelNew class")
    channel.send("compiled")
    reference = load_module(Path(job["reference_path"]), "reference")
    for index, shape in enumerate(job["shapes"]):
        apply_shape(reference, shape)
        apply_shape(solution, {k: v for k, v in shape.items() if hasattr(solution, k)})
        try:
            torch.manual_seed(INIT_SEED)
            model = solution.ModelNew(*reference.get_init_inputs()).to(device).eval()
        except BaseException as exc:
            raise _StageError("construct", _describe(exc), index) from None
        weights = _load_reference_weights(model, io_dir, index)
        channel.send("constructed", shape=index, weights=weights)
        timings: list[float] = []
        for seed in job["seeds"]:
            inputs = _device_tensors(torch.load(io_dir / f"inputs_{index}_{seed}.pt"), device)
            try:
                with torch.no_grad():
                    outputs = _as_output_list(model(*inputs))
                if device == "cuda":
                    torch.cuda.synchronize()
            except BaseException as exc:
                raise _StageError("runtime", _describe(exc), index) from None
            if not all(isinstance(x, torch.Tensor) for x in outputs):
                raise _StageError("runtime", "forward() must return a tensor or tensors", index)
            torch.save([_cpu(x) for x in outputs], io_dir / f"output_{index}_{seed}.pt")
            if job["timed"]:
                with torch.no_grad():
                    timings.extend(
                        time_callable_ms(functools.partial(model, *inputs), device=device)
                    )
        channel.send("candidate_shape", shape=index, candidate_ms=timings)


def _load_reference_weights(model: Any, io_dir: Path, index: int) -> str:
    """Reference weights where names and shapes match; else the seeded construction stands."""
    import torch

    state = torch.load(io_dir / f"state_{index}.pt")
    if not state:
        return "none"
    own = model.state_dict()
    matches = set(own) == set(state) and all(own[k].shape == v.shape for k, v in state.items())
    if not matches:
        return "seeded"
    model.load_state_dict(state, strict=True)
    return "reference"


if __name__ == "__main__":
    sys.exit(main(sys.argv[1]))
