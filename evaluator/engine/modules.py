"""Loading reference and solution files as modules, and setting a shape's constants on them."""

import importlib.util
import sys
from pathlib import Path
from types import ModuleType


def load_module(path: Path, name: str) -> ModuleType:
    spec = importlib.util.spec_from_file_location(name, path)
    if spec is None or spec.loader is None:
        raise ImportError(f"cannot load {path}")
    module = importlib.util.module_from_spec(spec)
    # Registered before exec so dataclasses, pickling and triton.jit can find the module.
    sys.modules[name] = module
    spec.loader.exec_module(module)
    return module


def apply_shape(module: ModuleType, shape: dict[str, int]) -> None:
    """KernelBench problems read their sizes from module constants when building inputs."""
    for name, value in shape.items():
        setattr(module, name, value)
