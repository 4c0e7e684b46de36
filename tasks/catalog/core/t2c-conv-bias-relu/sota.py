"""The best library path for conv + bias + ReLU in fp32: cuDNN with its autotuner (benchmark
mode) for the convolution and bias, then an in-place ReLU on the fresh output; TF32 off as the
task asks for full fp32.

The flags are set only around the call, so the eager reference timed beside it keeps its own.
"""

import torch


def is_available() -> bool:
    return torch.cuda.is_available() and torch.backends.cudnn.is_available()


def sota_forward(model: torch.nn.Module, x: torch.Tensor) -> torch.Tensor:
    conv = model.conv
    with torch.backends.cudnn.flags(
        enabled=True, benchmark=True, deterministic=False, allow_tf32=False
    ):
        y = torch.nn.functional.conv2d(x, conv.weight, conv.bias, stride=1, padding=1)
    return y.relu_()
