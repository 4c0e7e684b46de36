"""apply_patch envelopes turned into unified diffs: applying the diff gives what Codex wrote."""

from __future__ import annotations

import random

from transcript_formats.apply_patch import envelope_to_diffs, find_envelope, parse_envelope
from transcript_formats.diffs import TrackedFiles, apply_unified_diff

SOURCE = "".join(f"line {i}\n" for i in range(1, 31))


def _tracked(path: str, content: str) -> TrackedFiles:
    files = TrackedFiles()
    files.set(path, content)
    return files


def test_update_with_two_chunks_gets_true_line_numbers_and_applies():
    envelope = (
        "*** Begin Patch\n*** Update File: a.txt\n@@\n line 4\n-line 5\n+line five\n line 6\n"
        "@@ line 20\n-line 21\n+line 21a\n+line 21b\n*** End Patch"
    )
    files = _tracked("a.txt", SOURCE)
    [diff] = envelope_to_diffs(envelope, files)
    assert diff.exact
    assert "@@ -4,3 +4,3 @@" in diff.diff and "@@ -21,1 +21,2 @@" in diff.diff
    expected = SOURCE.replace("line 5\n", "line five\n").replace(
        "line 21\n", "line 21a\nline 21b\n"
    )
    assert apply_unified_diff(SOURCE, diff.diff) == expected
    assert files.get("a.txt") == expected  # tracked for the next patch


def test_add_delete_and_move():
    envelope = (
        "*** Begin Patch\n*** Add File: new.py\n+print(1)\n+print(2)\n"
        "*** Delete File: old.py\n"
        "*** Update File: a.txt\n*** Move to: b.txt\n@@\n-line 1\n+first\n*** End Patch\n"
    )
    files = _tracked("a.txt", SOURCE)
    files.set("old.py", "gone\n")
    add, delete, move = envelope_to_diffs(envelope, files)
    assert add.diff == "--- /dev/null\n+++ b/new.py\n@@ -0,0 +1,2 @@\n+print(1)\n+print(2)\n"
    assert delete.diff == "--- a/old.py\n+++ /dev/null\n@@ -1,1 +0,0 @@\n-gone\n"
    assert move.move_to == "b.txt" and move.diff.startswith("--- a/a.txt\n+++ b/b.txt\n")
    assert apply_unified_diff(SOURCE, move.diff) == SOURCE.replace("line 1\n", "first\n", 1)
    assert files.get("b.txt") is not None and files.get("a.txt") is None


def test_whitespace_differences_are_forgiven_and_the_file_text_is_kept():
    content = "def f():\n    return 1   \n"
    envelope = (
        "*** Begin Patch\n*** Update File: f.py\n@@\n def f():\n-    return 1\n+    return 2\n"
        "*** End Patch"
    )
    [diff] = envelope_to_diffs(envelope, _tracked("f.py", content))
    assert apply_unified_diff(content, diff.diff) == "def f():\n    return 2\n"


def test_end_of_file_chunk_matches_at_the_end():
    content = "x\ny\nx\ny\n"
    envelope = "*** Begin Patch\n*** Update File: f\n@@\n x\n-y\n+z\n*** End of File\n*** End Patch"
    [diff] = envelope_to_diffs(envelope, _tracked("f", content))
    assert apply_unified_diff(content, diff.diff) == "x\ny\nx\nz\n"


def test_unknown_file_still_gets_hunk_headers_whose_counts_match():
    envelope = "*** Begin Patch\n*** Update File: u.py\n@@\n a\n-b\n+c\n+d\n*** End Patch"
    [diff] = envelope_to_diffs(envelope, TrackedFiles())
    assert not diff.exact
    assert "@@ -1,2 +1,3 @@\n a\n-b\n+c\n+d\n" in diff.diff
    assert apply_unified_diff("a\nb\n", diff.diff) == "a\nc\nd\n"


def test_absolute_and_relative_names_of_one_file_are_tracked_together():
    files = TrackedFiles(cwd="/repo")
    files.set("/repo/src/k.py", "a\n")
    assert files.get("src/k.py") == "a\n" and files.get("./src/k.py") == "a\n"


def test_envelope_is_found_inside_a_shell_heredoc():
    command = "apply_patch <<'EOF'\n*** Begin Patch\n*** Add File: x\n+1\n*** End Patch\nEOF\n"
    envelope = find_envelope(command)
    assert envelope is not None and envelope.endswith("*** End Patch")
    assert [op.path for op in parse_envelope(envelope)] == ["x"]


def test_random_edits_round_trip_through_envelope_and_diff():
    rng = random.Random(5)
    for _ in range(200):
        lines = [f"v{rng.randrange(10**6)}" for _ in range(rng.randint(8, 40))]
        content = "".join(f"{x}\n" for x in lines)
        expected = list(lines)
        chunks = []
        position = 0
        while position < len(lines) - 3 and len(chunks) < 3:
            start = rng.randint(position, len(lines) - 3)
            removed = rng.randint(0, 2)
            added = [
                f"new{rng.randrange(10**6)}" for _ in range(rng.randint(0 if removed else 1, 2))
            ]
            before = lines[max(position, start - 1) : start]
            gone = lines[start : start + removed]
            after = lines[start + removed : start + removed + 1]
            body = "".join(f" {x}\n" for x in before) + "".join(f"-{x}\n" for x in gone)
            body += "".join(f"+{x}\n" for x in added) + "".join(f" {x}\n" for x in after)
            chunks.append(("@@\n" + body, start, removed, added))
            position = start + removed + 1
        for _, start, removed, added in reversed(chunks):
            expected[start : start + removed] = added
        envelope = (
            "*** Begin Patch\n*** Update File: r.txt\n"
            + "".join(c[0] for c in chunks)
            + "*** End Patch"
        )
        [diff] = envelope_to_diffs(envelope, _tracked("r.txt", content))
        assert diff.exact, envelope
        assert apply_unified_diff(content, diff.diff) == "".join(f"{x}\n" for x in expected), (
            envelope
        )
