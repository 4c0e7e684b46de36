"""How soon NVML shows a GPU drained once the process that fed it is stopped (SIGSTOP).

Two evaluations sharing a GPU need, before one times, the other's processes stopped and what
they had queued run out. A stopped process's queued kernels still run; this measures what NVML
reports meanwhile:
- the period of its utilization samples (nvmlDeviceGetSamples, NVML_GPU_UTILIZATION_SAMPLES);
- per queued depth (a process that synchronizes after every launch, or after 32, or 256 big
  matmuls), the seconds from the stop to the first sample that reads 0, and what
  nvmlDeviceGetProcessUtilization says of the stopped process meanwhile.

    python3 bench/nvml_drain_probe.py [--out FILE]   (prints one JSON object)
"""

import argparse
import ctypes
import itertools
import json
import os
import signal
import subprocess
import sys
import time
from pathlib import Path

FEEDER = """
import sys, time, torch
depth = int(sys.argv[1])
a = torch.randn(8192, 8192, device="cuda")
b = torch.randn(8192, 8192, device="cuda")
torch.cuda.synchronize()
print("ready", flush=True)
while True:
    for _ in range(depth):
        c = a @ b
    torch.cuda.synchronize()
"""


class _Value(ctypes.Union):
    _fields_ = [
        ("dVal", ctypes.c_double),
        ("uiVal", ctypes.c_uint),
        ("ulVal", ctypes.c_ulong),
        ("ullVal", ctypes.c_ulonglong),
    ]


class _Sample(ctypes.Structure):
    _fields_ = [("timeStamp", ctypes.c_ulonglong), ("sampleValue", _Value)]


class _ProcessSample(ctypes.Structure):
    _fields_ = [
        ("pid", ctypes.c_uint),
        ("timeStamp", ctypes.c_ulonglong),
        ("smUtil", ctypes.c_uint),
        ("memUtil", ctypes.c_uint),
        ("encUtil", ctypes.c_uint),
        ("decUtil", ctypes.c_uint),
    ]


GPU_UTILIZATION_SAMPLES = 1


class Nvml:
    def __init__(self) -> None:
        self.lib = ctypes.CDLL("libnvidia-ml.so.1")
        index = int((os.environ.get("CUDA_VISIBLE_DEVICES") or "0").split(",")[0])
        self.handle = ctypes.c_void_p()
        if self.lib.nvmlInit_v2() or self.lib.nvmlDeviceGetHandleByIndex_v2(
            index, ctypes.byref(self.handle)
        ):
            raise OSError("NVML refused")

    def samples(self, since_us: int) -> list[tuple[int, int]]:
        kind, count = ctypes.c_int(), ctypes.c_uint(0)
        self.lib.nvmlDeviceGetSamples(
            self.handle, GPU_UTILIZATION_SAMPLES, ctypes.c_ulonglong(since_us),
            ctypes.byref(kind), ctypes.byref(count), None,
        )  # fmt: skip
        if count.value == 0:
            return []
        buffer = (_Sample * count.value)()
        if self.lib.nvmlDeviceGetSamples(
            self.handle, GPU_UTILIZATION_SAMPLES, ctypes.c_ulonglong(since_us),
            ctypes.byref(kind), ctypes.byref(count), buffer,
        ):  # fmt: skip
            return []
        return [(s.timeStamp, s.sampleValue.uiVal) for s in buffer[: count.value]]

    def process_util(self, since_us: int) -> list[tuple[int, int, int]]:
        count = ctypes.c_uint(64)
        buffer = (_ProcessSample * 64)()
        code = self.lib.nvmlDeviceGetProcessUtilization(
            self.handle, buffer, ctypes.byref(count), ctypes.c_ulonglong(since_us)
        )
        if code:
            return []
        return [(s.pid, s.timeStamp, s.smUtil) for s in buffer[: count.value]]


def now_us() -> int:
    return int(time.time() * 1e6)


def one_depth(nvml: Nvml, depth: int) -> dict[str, object]:
    feeder = subprocess.Popen(
        [sys.executable, "-c", FEEDER, str(depth)], stdout=subprocess.PIPE, text=True
    )
    assert feeder.stdout is not None
    feeder.stdout.readline()
    time.sleep(1.5)
    os.kill(feeder.pid, signal.SIGSTOP)
    stopped = now_us()
    drained_at, seen = None, []
    deadline = time.monotonic() + 30
    while time.monotonic() < deadline:
        for stamp, value in nvml.samples(stopped - 2_000_000):
            if (stamp, value) not in seen:
                seen.append((stamp, value))
            if stamp > stopped and value == 0 and drained_at is None:
                drained_at = stamp
        if drained_at is not None:
            break
        time.sleep(0.01)
    process = [p for p in nvml.process_util(stopped - 2_000_000) if p[0] == feeder.pid]
    os.kill(feeder.pid, signal.SIGCONT)
    feeder.kill()
    feeder.wait()
    stamps = sorted(s for s, _ in seen)
    periods = [round((b - a) / 1000, 1) for a, b in itertools.pairwise(stamps)]
    return {
        "depth": depth,
        "drained_after_s": None if drained_at is None else round((drained_at - stopped) / 1e6, 3),
        "sample_periods_ms": periods[-12:],
        "samples_around_stop": [
            (round((s - stopped) / 1e6, 3), v) for s, v in sorted(seen) if s > stopped - 600_000
        ][:20],
        "process_samples_after_stop": [
            (round((t - stopped) / 1e6, 3), util) for _, t, util in process if t > stopped
        ][:10],
    }


def main() -> int:
    parser = argparse.ArgumentParser()
    parser.add_argument("--out", type=Path, default=None)
    parser.add_argument("--depths", default="1,32,256")
    args = parser.parse_args()
    nvml = Nvml()
    report = {"depths": [one_depth(nvml, int(d)) for d in args.depths.split(",")]}
    text = json.dumps(report, indent=1)
    print(text)
    if args.out is not None:
        args.out.write_text(text)
    return 0


if __name__ == "__main__":
    sys.exit(main())
