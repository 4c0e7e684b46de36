"""The raw output files between the candidate and the judge: round trips and hostile headers."""

import json

import pytest
import torch

from grader.outputs import OutputFileError, read_outputs, write_outputs


def test_outputs_of_every_kind_come_back_bit_for_bit(tmp_path):
    wide = torch.randn(7, 9)
    outputs = [
        wide.t(),  # not contiguous
        torch.randn(5, dtype=torch.complex64),
        torch.randn(3, 3).to(torch.bfloat16),
        torch.tensor([True, False, True]),
        torch.arange(11, dtype=torch.int64),
        torch.empty(0, 4),
        torch.tensor(2.5),
        # Bitmasks and packed indices (unsigned words) and the ROCm-style fp8 formats.
        torch.tensor([0, 1, 2**31, 2**32 - 1], dtype=torch.int64).to(torch.uint32),
        torch.tensor([0, 2**15, 2**16 - 1], dtype=torch.int64).to(torch.uint16),
        torch.tensor([0, 2**40], dtype=torch.int64).to(torch.uint64),
        torch.randn(6).to(torch.float8_e4m3fnuz),
    ]
    write_outputs(tmp_path / "out", outputs)
    back = read_outputs(tmp_path / "out")
    assert len(back) == len(outputs)
    for sent, got in zip(outputs, back, strict=True):
        assert (got.dtype, got.shape) == (sent.dtype, sent.shape)
        assert torch.equal(got.reshape(-1).view(torch.uint8), sent.reshape(-1).view(torch.uint8))


def test_no_files_means_no_output(tmp_path):
    with pytest.raises(OutputFileError, match="no output was written"):
        read_outputs(tmp_path / "out")


def test_a_header_without_its_bytes_is_refused(tmp_path):
    write_outputs(tmp_path / "out", [torch.ones(1000)])
    data = tmp_path / "out.bin"
    data.write_bytes(data.read_bytes()[:100])
    with pytest.raises(OutputFileError, match="do not match their header"):
        read_outputs(tmp_path / "out")


@pytest.mark.parametrize(
    "change",
    [
        {"shape": [10**12]},  # claims far more than the file holds
        {"dtype": "object"},
        {"offset": 3},  # misaligned
        {"shape": [-4]},
    ],
)
def test_a_lying_header_is_refused(tmp_path, change):
    write_outputs(tmp_path / "out", [torch.ones(16), torch.ones(16)])
    header_path = tmp_path / "out.json"
    header = json.loads(header_path.read_text())
    header["outputs"][1].update(change)
    header_path.write_text(json.dumps(header))
    with pytest.raises(OutputFileError):
        read_outputs(tmp_path / "out")


def test_overlapping_outputs_are_refused(tmp_path):
    write_outputs(tmp_path / "out", [torch.ones(16), torch.ones(16)])
    header_path = tmp_path / "out.json"
    header = json.loads(header_path.read_text())
    header["outputs"][1]["offset"] = 0
    header_path.write_text(json.dumps(header))
    with pytest.raises(OutputFileError, match="do not match"):
        read_outputs(tmp_path / "out")
