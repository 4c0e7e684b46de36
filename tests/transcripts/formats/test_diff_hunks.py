"""Hunk headers whose counts match their bodies around `\\ No newline at end of file`."""

from __future__ import annotations

import re

from transcript_formats.diffs import apply_unified_diff, hunk_counts, structured_patch_diff

HEADER = re.compile(r"^@@ -(\d+),(\d+) \+(\d+),(\d+) @@$", re.M)


def test_the_marker_line_counts_on_neither_side():
    lines = [" a", "-b", "\\ No newline at end of file", "+b2", "\\ No newline at end of file"]
    assert hunk_counts(lines) == (2, 2)
    assert hunk_counts(["+x", "\\ No newline at end of file"]) == (0, 1)
    assert hunk_counts([]) == (0, 0)


def test_a_structured_patch_ending_without_a_newline_gets_right_counts():
    # Claude Code's structuredPatch for changing the last line of a file with no final newline:
    # 2 old lines (a, b), 2 new lines (a, c); each side's last line carries the marker.
    hunk = {
        "oldStart": 1,
        "oldLines": 2,
        "newStart": 1,
        "newLines": 2,
        "lines": [" a", "-b", "\\ No newline at end of file", "+c", "\\ No newline at end of file"],
    }
    diff = structured_patch_diff("k.py", [hunk])
    assert HEADER.findall(diff) == [("1", "2", "1", "2")]
    assert diff.endswith("+c\n\\ No newline at end of file\n")
    assert apply_unified_diff("a\nb\n", diff) == "a\nc\n"


def test_adding_a_final_newline_counts_one_line_each_side():
    hunk = {"oldStart": 3, "newStart": 3, "lines": ["-x", "\\ No newline at end of file", "+x"]}
    assert HEADER.findall(structured_patch_diff("k.py", [hunk])) == [("3", "1", "3", "1")]
