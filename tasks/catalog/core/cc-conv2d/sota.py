"""The best library path for a 3x3 fp32 convolution: cuDNN, without TF32 (the task is fp32)."""

import torch


def is_available() -> bool:
    return torch.cuda.is_available() and torch.backends.cudnn.is_available()


def sota_forward(model: torch.nn.Module, x: torch.Tensor) -> torch.Tensor:
    with torch.backends.cudnn.flags(enabled=True, benchmark=True, allow_tf32=False):
        return torch.nn.functional.conv2d(x, model.weight, padding=1)
