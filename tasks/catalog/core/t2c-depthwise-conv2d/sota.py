"""The best library path for an fp32 NCHW depthwise 3x3 convolution: the faster, per shape, of
ATen's own depthwise kernel (what F.conv2d runs for NCHW fp32) and cuDNN called directly
(benchmark mode, TF32 off) followed by the bias add.

Neither wins everywhere: on an H200 cuDNN took 0.33 ms against ATen's 0.72 ms on
(64, 96, 112, 112), while on (1024, 960, 7, 7) ATen's kernel was ahead once the bias add is
counted. The choice is timed once per shape and cached in a module global.
"""

import torch

_choice: dict[tuple, str] = {}


def is_available() -> bool:
    return torch.cuda.is_available() and torch.backends.cudnn.is_available()


def _aten(x, weight, bias):
    return torch.nn.functional.conv2d(x, weight, bias, stride=1, padding=1, groups=x.shape[1])


def _cudnn(x, weight, bias):
    y = torch.cudnn_convolution(x, weight, [1, 1], [1, 1], [1, 1], x.shape[1], True, False, False)
    return y.add_(bias.view(1, -1, 1, 1))


def _median_ms(fn, reps: int = 5) -> float:
    fn()
    times = []
    for _ in range(reps):
        start, end = torch.cuda.Event(enable_timing=True), torch.cuda.Event(enable_timing=True)
        start.record()
        fn()
        end.record()
        end.synchronize()
        times.append(start.elapsed_time(end))
    return sorted(times)[len(times) // 2]


def sota_forward(model: torch.nn.Module, x: torch.Tensor) -> torch.Tensor:
    weight, bias = model.conv.weight, model.conv.bias
    key = (tuple(x.shape), x.dtype)
    if key not in _choice:
        paths = {"aten": _aten, "cudnn": _cudnn}
        timed = {name: _median_ms(lambda f=f: f(x, weight, bias)) for name, f in paths.items()}
        _choice[key] = min(timed, key=timed.get)
    return (_cudnn if _choice[key] == "cudnn" else _aten)(x, weight, bias)
