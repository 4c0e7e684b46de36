"""The best library path for an fp32 3x3 convolution: cuDNN with its autotuner (benchmark mode)
picking the fastest algorithm per shape, TF32 off as the task asks for full fp32.

The flags are set only around the call, so the eager reference timed beside it keeps its own.
"""

import torch


def is_available() -> bool:
    return torch.cuda.is_available() and torch.backends.cudnn.is_available()


def sota_forward(model: torch.nn.Module, x: torch.Tensor) -> torch.Tensor:
    with torch.backends.cudnn.flags(
        enabled=True, benchmark=True, deterministic=False, allow_tf32=False
    ):
        return torch.nn.functional.conv2d(x, model.conv.weight, None, stride=1, padding=1)
