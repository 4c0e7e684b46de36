"""Agent workspaces: only the visible files, a working `check`, protected hashes, collection."""

import json
import os
import subprocess
import tomllib
from pathlib import Path

import pytest

from arena.agents import agent_env
from arena.workspace import (
    MAX_SOLUTION_BYTES,
    WorkspaceError,
    toml_dumps,
    workspace_build,
    workspace_changed_protected,
    workspace_collect,
)
from grader.taskspec import DEFAULT_CATALOG, iter_task_folders

CORE = DEFAULT_CATALOG / "core"
WRONG_VECTOR_ADD = """
import torch.nn as nn


class ModelNew(nn.Module):
    def forward(self, x, y):
        return x - y
"""


def build(tmp_path: Path, slug: str = "tt-vector-add"):
    return workspace_build(task_folder=CORE / slug, root=tmp_path / "ws")


def files_in(root: Path) -> set[str]:
    return {p.relative_to(root).as_posix() for p in root.rglob("*") if p.is_file()}


def run_check(workspace, *args: str) -> subprocess.CompletedProcess:
    # The agent's own environment: no project settings, no database, a private home.
    env = agent_env(home=workspace.root.parent)
    return subprocess.run(
        ["./check", *args],
        cwd=workspace.root,
        env=env,
        capture_output=True,
        text=True,
        timeout=600,
    )


def test_workspace_holds_the_visible_files_and_check_only(tmp_path):
    workspace = build(tmp_path)
    assert files_in(workspace.root) == {"PROMPT.md", "reference.py", "check", "starter/solution.py"}
    assert workspace.task_slug == "tt-vector-add"
    task = CORE / "tt-vector-add"
    assert (workspace.root / "reference.py").read_bytes() == (task / "reference.py").read_bytes()
    assert os.access(workspace.root / "check", os.X_OK)


def test_workspace_never_holds_the_generalization_rules_sota_or_other_tasks(tmp_path):
    # cc-softmax has dimension rules and relations; its rules' bounds must not leak anywhere.
    workspace = build(tmp_path, "cc-softmax")
    manifest = tomllib.loads((CORE / "cc-softmax" / "task.toml").read_text())
    assert manifest["generalization"]["relations"]
    assert not (workspace.root / "task.toml").exists()
    assert not (workspace.root / "sota.py").exists()
    text = "\n".join((workspace.root / name).read_text() for name in files_in(workspace.root))
    for relation in manifest["generalization"]["relations"]:
        assert relation not in text
    assert "[generalization" not in text
    assert "cpu_max" not in text
    other_slugs = [f.name for f in iter_task_folders(DEFAULT_CATALOG) if f.name != "cc-softmax"]
    assert not any(name.split("/")[0] in other_slugs for name in files_in(workspace.root))


def test_the_check_carries_every_visible_field_of_every_catalogue_task(tmp_path):
    for folder in iter_task_folders(DEFAULT_CATALOG):
        manifest = tomllib.loads((folder / "task.toml").read_text())
        visible = {k: v for k, v in manifest.items() if k != "generalization"}
        assert tomllib.loads(toml_dumps(visible)) == visible, folder


def test_a_folder_that_is_not_empty_is_refused(tmp_path):
    (tmp_path / "ws").mkdir()
    (tmp_path / "ws" / "left-over.py").write_text("x = 1\n")
    with pytest.raises(WorkspaceError, match="not empty"):
        build(tmp_path)


def test_a_task_folder_without_a_manifest_names_the_file(tmp_path):
    (tmp_path / "task").mkdir()
    with pytest.raises(WorkspaceError, match=r"task\.toml: file not found"):
        workspace_build(task_folder=tmp_path / "task", root=tmp_path / "ws")


def test_a_task_folder_without_its_prompt_names_the_file(tmp_path):
    task = tmp_path / "task"
    task.mkdir()
    (task / "task.toml").write_text('slug = "x"\n')
    (task / "reference.py").write_text("")
    with pytest.raises(WorkspaceError, match=r"task/PROMPT\.md: file not found"):
        workspace_build(task_folder=task, root=tmp_path / "ws")


def test_an_untouched_workspace_with_a_solution_changes_no_protected_file(tmp_path):
    workspace = build(tmp_path)
    (workspace.root / "solution.py").write_text("# mine\n")
    (workspace.root / "notes.txt").write_text("scratch\n")
    assert workspace_changed_protected(workspace=workspace) == []


def test_edited_deleted_and_relinked_protected_files_are_all_detected(tmp_path):
    workspace = build(tmp_path)
    root = workspace.root
    with (root / "reference.py").open("a") as fh:
        fh.write("\n# the agent was here\n")
    (root / "PROMPT.md").unlink()
    starter = root / "starter" / "solution.py"
    starter.unlink()
    starter.symlink_to(root / "reference.py")
    (root / "check").write_text("#!/bin/sh\necho 'status: passed'\n")
    assert workspace_changed_protected(workspace=workspace) == [
        "PROMPT.md",
        "check",
        "reference.py",
        "starter/solution.py",
    ]


def test_collect_copies_out_the_solution_and_nothing_else(tmp_path):
    workspace = build(tmp_path)
    (workspace.root / "solution.py").write_text("class ModelNew: ...\n")
    (workspace.root / "scratch.py").write_text("print('try')\n")
    (workspace.root / "results").mkdir()
    (workspace.root / "results" / "timings.json").write_text("{}")
    out = tmp_path / "out"
    collected = workspace_collect(workspace=workspace, dest=out)
    assert collected == {"solution.py": "class ModelNew: ...\n"}
    assert files_in(out) == {"solution.py"}


def test_collect_refuses_a_link_to_a_host_secret(tmp_path):
    secret = tmp_path / "secret.env"
    secret.write_text("ARENA_SECRET_KEY=do-not-leak\n")
    workspace = build(tmp_path)
    (workspace.root / "solution.py").symlink_to(secret)
    with pytest.raises(WorkspaceError, match=r"solution\.py: a symbolic link"):
        workspace_collect(workspace=workspace, dest=tmp_path / "out")
    assert not (tmp_path / "out").exists()


@pytest.mark.parametrize(
    ("content", "message"),
    [
        (None, r"solution\.py: not found in the workspace"),
        (b"x" * (MAX_SOLUTION_BYTES + 1), r"solution\.py: larger than"),
        (b"\xff\xfe binary", r"solution\.py: not UTF-8 text"),
        ("folder", r"solution\.py: not a regular file"),
    ],
)
def test_collect_refuses_missing_huge_binary_or_odd_solutions(tmp_path, content, message):
    workspace = build(tmp_path)
    solution = workspace.root / "solution.py"
    if content == "folder":
        solution.mkdir()
    elif content is not None:
        solution.write_bytes(content)
    with pytest.raises(WorkspaceError, match=message):
        workspace_collect(workspace=workspace, dest=tmp_path / "out")


def test_check_passes_the_starter_and_prints_a_readable_verdict(tmp_path):
    workspace = build(tmp_path)
    (workspace.root / "solution.py").write_text(
        (workspace.root / "starter/solution.py").read_text()
    )
    done = run_check(workspace)
    assert done.returncode == 0, done.stdout + done.stderr
    lines = done.stdout.splitlines()
    assert lines[0] == "status: passed   reward: none (untimed)   device: cpu"
    assert "[PASS] compile         imported and defines ModelNew" in done.stdout
    assert "[PASS] correctness     all visible shapes match" in done.stdout
    assert "not checked here: unseen shapes are graded after the run ends" in done.stdout
    # The CPU shapes of the manifest, and no other.
    assert [line for line in lines if line.startswith("  shape")] == [
        "  shape {'N': 100}: correct untimed",
        "  shape {'N': 777}: correct untimed",
    ]


def test_check_fails_a_wrong_solution_with_a_non_zero_exit_and_the_reason(tmp_path):
    workspace = build(tmp_path)
    (workspace.root / "solution.py").write_text(WRONG_VECTOR_ADD)
    done = run_check(workspace, "--json")
    assert done.returncode == 1
    result = json.loads(done.stdout)
    assert result["status"] == "failed"
    assert result["gates"]["correctness"]["reason"].startswith("incorrect on shape {'N': 100}")
    # Visible shapes only: no unseen shape was drawn inside the workspace.
    assert [row["seen"] for row in result["per_shape"]] == [True, True]
    assert result["task"]["generalization"] == {}


def test_check_without_a_solution_says_what_to_write(tmp_path):
    workspace = build(tmp_path)
    done = run_check(workspace)
    assert done.returncode == 2
    assert "solution.py: file not found; write ModelNew there first" in done.stderr
