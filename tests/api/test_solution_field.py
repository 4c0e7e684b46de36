"""A solution sent as a file is read no further than one byte past its cap."""

import io

import pytest
from rest_framework.exceptions import ValidationError

from evaluator.api import SolutionField


class UploadOfUnderstatedSize(io.BytesIO):
    """An uploaded file whose `size` understates it, recording the reads asked of it."""

    name = "solution.py"
    size = 10

    def __init__(self, data: bytes) -> None:
        super().__init__(data)
        self.reads: list[int | None] = []

    def read(self, size: int | None = -1) -> bytes:
        self.reads.append(size)
        return super().read(size)


def test_a_solution_file_is_read_no_further_than_one_byte_past_the_limit(settings):
    settings.ARENA_MAX_SOLUTION_BYTES = 1024
    upload = UploadOfUnderstatedSize(b"#" * 50_000)
    with pytest.raises(ValidationError, match="larger than the 1024-byte limit"):
        SolutionField().to_internal_value(upload)
    assert upload.reads == [1025]
