"""The best library path for W4A16: PyTorch's tinygemm kernel, torch._weight_int4pack_mm.

tinygemm wants its own tiled layout (torch._convert_weight_to_int4pack, high nibble first) and
dequantizes w = (q - 8) * scale + zero', so zero' = (8 - zero) * scale here. That one-time
repacking of the fixed weight is cached per model, as a deployment would do it offline. Where the
kernel is missing or refuses the shape, the cache holds the dequantized bf16 weight for cuBLAS.
The cache lives on the model object itself, so it can never outlive or mix up models.
"""

from typing import Any

import torch
import torch.nn.functional as F

INNER_K_TILES = 8  # K is a multiple of the group size 128 = 8 * 16
CACHE_ATTRIBUTE = "_sota_int4_prepared"


def is_available() -> bool:
    return torch.cuda.is_available()


def _prepare(model: torch.nn.Module) -> tuple[Any, ...]:
    qweight, scales, zeros = model.qweight, model.scales, model.zeros
    n = qweight.shape[0]
    n_pad = -(-n // 8) * 8  # tinygemm tiles N by 8
    try:
        swapped = (qweight >> 4) | ((qweight & 0xF) << 4)
        swapped = F.pad(swapped, (0, 0, 0, n_pad - n)).contiguous()
        tiled = torch._convert_weight_to_int4pack(swapped, INNER_K_TILES)
        shift = ((8.0 - zeros.float()) * scales.float()).to(torch.bfloat16)
        pairs = torch.stack((scales, shift), dim=-1)  # [N, groups, 2]
        pairs = F.pad(pairs, (0, 0, 0, 0, 0, n_pad - n)).transpose(0, 1).contiguous()
        return ("int4", tiled, pairs, n)
    except (RuntimeError, AttributeError):
        return ("dense", model.dequantized_weight())


def sota_forward(model: torch.nn.Module, x: torch.Tensor) -> torch.Tensor:
    prepared = model.__dict__.get(CACHE_ATTRIBUTE)
    if prepared is None:
        prepared = _prepare(model)
        model.__dict__[CACHE_ATTRIBUTE] = prepared
    if prepared[0] == "dense":
        return F.linear(x, prepared[1])
    _, tiled, pairs, n = prepared
    out = torch._weight_int4pack_mm(x, tiled, x.shape[1] // pairs.shape[0], pairs)
    return out if out.shape[1] == n else out[:, :n].contiguous()
