import json

import pytest
import torch

from grader.cli import main as cli_main
from grader.measure_peaks import measure_peaks
from grader.roofline import (
    FRACTION_FLAG_THRESHOLD,
    PEAK_TABLE,
    GpuPeaks,
    achieved,
    compute_dtype_key,
    peaks_for,
    roofline_fraction,
    speedup_is_possible,
)

TABLE_KEYS = {"bfloat16", "float16", "float8_e4m3fn", "int8", "tfloat32", "float32"}
N = 2**24
GEMM_FLOPS = 2 * 4096**3

needs_cuda = pytest.mark.skipif(not torch.cuda.is_available(), reason="needs a CUDA device")


def table_row(name: str) -> GpuPeaks:
    return next(peaks for peaks in PEAK_TABLE if peaks.name == name)


H100_SXM = table_row("NVIDIA H100 SXM")


@pytest.mark.parametrize(
    ("device_name", "row_name"),
    [
        ("NVIDIA H100 80GB HBM3", "NVIDIA H100 SXM"),
        ("NVIDIA H100 PCIe", "NVIDIA H100 PCIe"),
        ("NVIDIA H100 NVL", "NVIDIA H100 NVL"),
        ("NVIDIA H200", "NVIDIA H200"),
        ("NVIDIA H200 NVL", "NVIDIA H200 NVL"),
        ("NVIDIA A100-SXM4-80GB", "NVIDIA A100 SXM 80GB"),
        ("NVIDIA A100-SXM4-40GB", "NVIDIA A100 SXM 40GB"),
        ("NVIDIA A100 80GB PCIe", "NVIDIA A100 PCIe 80GB"),
        ("NVIDIA A100-PCIE-40GB", "NVIDIA A100 PCIe 40GB"),
        ("NVIDIA L4", "NVIDIA L4"),
        ("NVIDIA L40S", "NVIDIA L40S"),
        (
            "NVIDIA RTX PRO 6000 Blackwell Server Edition",
            "NVIDIA RTX PRO 6000 Blackwell Server Edition",
        ),
        (
            "NVIDIA RTX PRO 6000 Blackwell Workstation Edition",
            "NVIDIA RTX PRO 6000 Blackwell Workstation Edition",
        ),
        ("AMD Instinct MI300X", "AMD Instinct MI300X"),
    ],
)
def test_matches_the_names_torch_reports(device_name: str, row_name: str) -> None:
    peaks = peaks_for(device_name)
    assert peaks is not None
    assert peaks.name == row_name


def test_an_h100_pcie_is_not_taken_for_an_sxm() -> None:
    pcie = peaks_for("NVIDIA H100 PCIe")
    assert pcie is not None
    assert pcie.name == "NVIDIA H100 PCIe"
    assert pcie.hbm_gbps == 2000.0
    assert pcie.tflops["bfloat16"] < H100_SXM.tflops["bfloat16"]


@pytest.mark.parametrize(
    "device_name",
    [
        "NVIDIA GeForce RTX 4090",
        "NVIDIA L40",
        "NVIDIA H100",
        "NVIDIA RTX PRO 6000 Blackwell Max-Q Workstation Edition",
        "AMD Instinct MI300A",
        "",
    ],
)
def test_unknown_or_ambiguous_gpus_have_no_peaks(device_name: str) -> None:
    assert peaks_for(device_name) is None


def test_table_holds_dense_datasheet_numbers() -> None:
    assert H100_SXM.hbm_gbps == 3350.0
    assert H100_SXM.tflops["bfloat16"] == 989.4
    assert H100_SXM.tflops["float8_e4m3fn"] == 1978.9
    assert table_row("NVIDIA H200").hbm_gbps == 4800.0
    assert "float8_e4m3fn" not in table_row("NVIDIA A100 SXM 80GB").tflops
    # The MI300X's 2,614.9 bf16 figure is its sparse one.
    assert table_row("AMD Instinct MI300X").tflops["bfloat16"] == 1307.4
    for peaks in PEAK_TABLE:
        assert set(peaks.tflops) <= TABLE_KEYS, peaks.name
        assert peaks.hbm_gbps > 0 and peaks.source, peaks.name
        assert all(tflops > 0 for tflops in peaks.tflops.values()), peaks.name


@pytest.mark.parametrize(
    ("dtype", "allow_tf32", "key"),
    [
        ("float32", False, "float32"),
        ("float32", True, "tfloat32"),
        ("torch.float32", False, "float32"),
        ("bfloat16", False, "bfloat16"),
        ("bfloat16", True, "bfloat16"),
        ("float16", False, "float16"),
        ("float8_e4m3fn", False, "float8_e4m3fn"),
        ("int8", False, "int8"),
        ("int32", False, "float32"),
        ("int64", False, "float32"),
    ],
)
def test_maps_task_dtypes_to_table_keys(dtype: str, allow_tf32: bool, key: str) -> None:
    assert compute_dtype_key(dtype, allow_tf32=allow_tf32) == key


def test_rejects_a_dtype_with_no_roof() -> None:
    with pytest.raises(ValueError, match="complex64"):
        compute_dtype_key("complex64")


def test_achieved_rates_in_tflops_and_gbps() -> None:
    tflops, gbps = achieved(flops=2e12, bytes_moved=3e9, ms=1000.0)
    assert tflops == pytest.approx(2.0)
    assert gbps == pytest.approx(3.0)


def test_memory_bound_fraction_is_bandwidth_over_hbm() -> None:
    # 8 bytes per element (read 4, write 4) of 2**24 floats in 50 us: 2684.4 GB/s.
    fraction = roofline_fraction(
        regime="memory", dtype="float32", flops=N, bytes_moved=8 * N, ms=0.05, peaks=H100_SXM
    )
    assert achieved(N, 8 * N, 0.05)[1] == pytest.approx(2684.35, abs=0.01)
    assert fraction == pytest.approx(0.80130, abs=1e-4)


def test_compute_bound_fraction_is_tflops_over_the_dtype_peak() -> None:
    # A 4096-cube bf16 product in 0.2 ms: 687.2 TFLOP/s of 989.4.
    fraction = roofline_fraction(
        regime="compute",
        dtype="bfloat16",
        flops=GEMM_FLOPS,
        bytes_moved=3 * 2 * 4096**2,
        ms=0.2,
        peaks=H100_SXM,
    )
    assert fraction == pytest.approx(0.69456, abs=1e-4)


def test_float32_roof_is_tf32_only_when_allowed() -> None:
    common = {"regime": "compute", "dtype": "float32", "flops": GEMM_FLOPS, "bytes_moved": 0.0}
    strict = roofline_fraction(**common, ms=5.0, peaks=H100_SXM)
    relaxed = roofline_fraction(**common, ms=5.0, peaks=H100_SXM, allow_tf32=True)
    assert strict == pytest.approx(27.488 / 66.9, abs=1e-4)
    assert relaxed == pytest.approx(27.488 / 494.7, abs=1e-4)


def test_fraction_is_none_without_a_peak_or_a_time() -> None:
    a100 = table_row("NVIDIA A100 SXM 80GB")
    fp8 = {"regime": "compute", "dtype": "float8_e4m3fn", "flops": GEMM_FLOPS, "bytes_moved": 0.0}
    assert roofline_fraction(**fp8, ms=1.0, peaks=a100) is None
    assert roofline_fraction(**fp8, ms=0.0, peaks=H100_SXM) is None
    assert roofline_fraction(**fp8, ms=-1.0, peaks=H100_SXM) is None


def test_rejects_an_unknown_regime() -> None:
    with pytest.raises(ValueError, match="regime"):
        roofline_fraction(
            regime="latency", dtype="float32", flops=1.0, bytes_moved=1.0, ms=1.0, peaks=H100_SXM
        )


def test_flag_threshold_allows_five_percent_of_noise() -> None:
    assert FRACTION_FLAG_THRESHOLD == 1.05


def memory_op(candidate_ms: float, eager_ms: float = 0.1) -> bool:
    # The floor of 8 * 2**24 bytes at 3350 GB/s is 0.04006 ms; with 5% slack, 0.03816 ms.
    return speedup_is_possible(
        eager_ms=eager_ms,
        candidate_ms=candidate_ms,
        regime="memory",
        dtype="float32",
        flops=N,
        bytes_moved=8 * N,
        peaks=H100_SXM,
    )


def test_a_time_under_the_memory_floor_is_impossible() -> None:
    assert memory_op(0.030) is False
    assert memory_op(0.0) is False


def test_a_time_within_the_slack_of_the_floor_is_possible() -> None:
    assert memory_op(0.039) is True
    assert memory_op(0.045) is True


def test_a_floor_that_eager_itself_beats_proves_nothing() -> None:
    assert memory_op(0.010, eager_ms=0.020) is True


def test_a_time_under_the_compute_floor_is_impossible() -> None:
    # 4096-cube bf16 at 989.4 TFLOP/s takes at least 0.1389 ms, whatever the regime label says.
    common = {"eager_ms": 1.0, "dtype": "bfloat16", "flops": GEMM_FLOPS, "bytes_moved": 0.0}
    assert not speedup_is_possible(**common, candidate_ms=0.1, regime="memory", peaks=H100_SXM)
    assert speedup_is_possible(**common, candidate_ms=0.14, regime="compute", peaks=H100_SXM)


def test_a_float32_floor_allows_for_tf32() -> None:
    # 4096-cube: 2.054 ms at the fp32 roof, 0.2778 ms at the TF32 roof.
    common = {"eager_ms": 3.0, "regime": "compute", "dtype": "float32", "bytes_moved": 0.0}
    assert speedup_is_possible(**common, candidate_ms=1.0, flops=GEMM_FLOPS, peaks=H100_SXM)
    assert not speedup_is_possible(**common, candidate_ms=0.2, flops=GEMM_FLOPS, peaks=H100_SXM)


def test_measure_peaks_runs_on_cpu() -> None:
    report = measure_peaks("cpu", size_scale=0.005)
    assert report["copy_gbps"] > 0
    for dtype in ("bfloat16", "float16", "tfloat32", "float32"):
        assert report["tflops"][dtype] > 0, dtype
    assert report["tflops"]["float8_e4m3fn"] is None
    assert "float8_e4m3fn" in report["unavailable"]
    assert report["table"] is None
    assert report["ratio_to_table"] == {}


def test_measure_peaks_rejects_a_missing_device() -> None:
    with pytest.raises(ValueError, match="device"):
        measure_peaks("tpu", size_scale=0.005)


def test_cli_measure_peaks_prints_one_json_object(capsys: pytest.CaptureFixture[str]) -> None:
    code = cli_main(["measure-peaks", "--device", "cpu", "--json", "--size-scale", "0.005"])
    lines = capsys.readouterr().out.strip().splitlines()
    assert code == 0
    assert len(lines) == 1
    report = json.loads(lines[0])
    assert report["device"] == "cpu"
    assert report["copy_gbps"] > 0


def test_cli_measure_peaks_prints_a_table(capsys: pytest.CaptureFixture[str]) -> None:
    code = cli_main(["measure-peaks", "--device", "cpu", "--size-scale", "0.005"])
    out = capsys.readouterr().out
    assert code == 0
    assert "copy" in out
    assert "float8_e4m3fn  unavailable" in out


@pytest.mark.gpu
@needs_cuda
def test_measured_rates_never_beat_the_datasheet() -> None:
    allow_tf32_before = torch.backends.cuda.matmul.allow_tf32
    report = measure_peaks("cuda", size_scale=0.5)
    assert torch.backends.cuda.matmul.allow_tf32 == allow_tf32_before
    assert report["copy_gbps"] > 0
    assert report["tflops"]["bfloat16"] > 0
    if report["table"] is None:
        pytest.skip(f"{report['gpu']} has no row in the peak table")
    for name, ratio in report["ratio_to_table"].items():
        assert 0.2 < ratio <= FRACTION_FLAG_THRESHOLD, (name, ratio)
