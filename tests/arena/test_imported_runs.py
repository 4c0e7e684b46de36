"""import_runs --from kernelbench-hard and compare_imported_runs, on a small kernelbench.com-shaped
checkout written here: public/data/catalog.json, public/runs/, public/data/rundetail/."""

import json
from io import StringIO
from pathlib import Path

import pytest
from django.core.management import CommandError, call_command

from arena.imported_runs import harness_and_model, task_slug, trace_path
from arena.models import Agent, ImportedRun, Run, Submission
from evaluator.models import Evaluation
from tests.leaderboard.factories import make_task

SOLUTION = "import torch\n\nclass ModelNew(torch.nn.Module):\n    pass\n"
UPSTREAM_SOLUTION = "import torch\n\nclass Model(torch.nn.Module):\n    pass\n"
TRACE = "https://huggingface.co/datasets/Infatoshi/kernelbench-hard-traces/blob/main/{}.jsonl"


def cell(run_id: str, *, gpu: str, model: str, problem: str, **fields) -> dict:
    return {
        "id": f"hard/{gpu}/{model}/{problem}",
        "bench": "hard",
        "gpu": gpu,
        "model": model,
        "problem": problem,
        "run_id": run_id,
        "correct": True,
        "score": 0.3033,
        "outcome": "pass",
        "failure_reason": "pass",
        "has_solution": True,
        "verdict": "clean",
        "solution_url": f"/runs/{run_id}_solution.py.txt",
        "trace_url": TRACE.format(run_id),
        "elapsed_seconds": 7052,
        **fields,
    }


PASSING = "20260702_055037_claude_claude-fable-5_01_fp8_gemm"
WRONG = "20260618_041754_codex_gpt-5.5_07_w4a16_gemm"
TWO_WORD_HARNESS = "20260719_121747_or-fable_anthropic_claude-fable-5_01_fp8_gemm"
IN_GPU_FOLDER = "20260618_050815_gemini_gemini-3.5-flash_01_fp8_gemm"
NO_SOLUTION = "20260618_044820_cursor_composer-2.5-fast_01_fp8_gemm"
OTHER_GPU = "20260716_090642_claude_claude-fable-5_01_fp8_gemm"
NO_TASK = "20260709_164856_codex_gpt-5.6-sol_04_missing"
MEGA = "20260709_164856_codex_gpt-5.6-sol_01_rl_grid_ppo"


@pytest.fixture
def checkout(tmp_path: Path) -> Path:
    public = tmp_path / "public"
    (public / "runs" / "h100").mkdir(parents=True)
    (public / "data" / "rundetail").mkdir(parents=True)
    cells = [
        cell(PASSING, gpu="h100", model="claude-fable-5", problem="01_fp8_gemm"),
        cell(
            WRONG,
            gpu="h100",
            model="gpt-5.5",
            problem="07_w4a16_gemm",
            correct=False,
            score=None,
            outcome="wrong",
            failure_reason="wrong",
            verdict="unaudited",
        ),
        cell(
            TWO_WORD_HARNESS,
            gpu="h100",
            model="claude-fable-5",
            problem="01_fp8_gemm",
            verdict="bug",
        ),
        # Its solution lies under public/runs/h100/, where the cell's URL does not point.
        cell(IN_GPU_FOLDER, gpu="h100", model="gemini-3.5-flash", problem="01_fp8_gemm"),
        cell(
            NO_SOLUTION,
            gpu="h100",
            model="composer-2.5-fast",
            problem="01_fp8_gemm",
            has_solution=False,
            solution_url=None,
        ),
        cell(OTHER_GPU, gpu="rtxpro6000", model="claude-fable-5", problem="01_fp8_gemm"),
        cell(NO_TASK, gpu="h100", model="gpt-5.6-sol", problem="04_missing"),
        cell(MEGA, gpu="h100", model="gpt-5.6-sol", problem="01_rl_grid_ppo", bench="mega"),
    ]
    catalog = {"generated": "2026-07-18T19:44:45Z", "legend": [], "n_cells": 8, "cells": cells}
    (public / "data" / "catalog.json").write_text(json.dumps(catalog))
    for run_id in (PASSING, WRONG, TWO_WORD_HARNESS, OTHER_GPU, NO_TASK, MEGA):
        (public / "runs" / f"{run_id}_solution.py.txt").write_text(SOLUTION)
    (public / "runs" / "h100" / f"{IN_GPU_FOLDER}_solution.py.txt").write_text(SOLUTION)
    detail = {"run_id": TWO_WORD_HARNESS, "harness": "or-fable", "model": "claude-fable-5"}
    # Current checkouts keep details per GPU: rundetail/<gpu>/<run_id>.json.
    (public / "data" / "rundetail" / "h100").mkdir()
    (public / "data" / "rundetail" / "h100" / f"{TWO_WORD_HARNESS}.json").write_text(
        json.dumps(detail)
    )
    # Upstream's own interface: the solution's class is Model.
    (public / "runs" / f"{WRONG}_solution.py.txt").write_text(UPSTREAM_SOLUTION)
    return tmp_path


@pytest.fixture
def tasks(db):
    return {
        slug: make_task(slug, suite="kernelbench-hard")
        for slug in ("kbh-h100-01-fp8-gemm", "kbh-h100-07-w4a16-gemm", "kbh-rtxpro6000-01-fp8-gemm")
    }


def run_import(checkout: Path, *extra: str) -> tuple[str, str]:
    out, err = StringIO(), StringIO()
    call_command(
        "import_runs", "--from", "kernelbench-hard", str(checkout), *extra, stdout=out, stderr=err
    )
    return out.getvalue(), err.getvalue()


def test_slug_and_run_id_parsing():
    assert task_slug("h100", "01_fp8_gemm") == "kbh-h100-01-fp8-gemm"
    assert task_slug("RTXPro6000", "02_kda_cutlass") == "kbh-rtxpro6000-02-kda-cutlass"
    assert harness_and_model(WRONG, model="gpt-5.5", problem="07_w4a16_gemm") == (
        "codex",
        "gpt-5.5",
    )
    assert harness_and_model(TWO_WORD_HARNESS, model="claude-fable-5", problem="01_fp8_gemm") == (
        "or-fable_anthropic",
        "claude-fable-5",
    )


def test_h100_runs_are_imported_as_runs_of_their_agents_and_queued(
    checkout, tasks, django_capture_on_commit_callbacks
):
    with django_capture_on_commit_callbacks() as queued:
        out, err = run_import(checkout, "--gpu", "h100")
    assert (
        "4 runs imported and queued for grading, 0 already imported, 2 skipped, "
        "1 of other benches left out"
    ) in out
    assert f"skipped {NO_SOLUTION}: no solution published" in err
    assert f"skipped {NO_TASK}: no task kbh-h100-04-missing" in err
    assert f"[6/6] {NO_TASK}" in err
    assert len(queued) == 4  # each submission is enqueued like an upload's
    imported = ImportedRun.objects.get(external_id=PASSING)
    run = imported.run
    assert run.source == Run.Source.IMPORTED and run.status == Run.Status.EVALUATING
    assert run.task.slug == "kbh-h100-01-fp8-gemm"
    assert (run.agent.harness, run.agent.model, run.model) == (
        "claude",
        "claude-fable-5",
        "claude-fable-5",
    )
    assert imported.published["outcome"] == "pass"
    assert imported.published["score"] == 0.3033
    assert imported.published["verdict"] == "clean"
    assert imported.published["trace_url"] == TRACE.format(PASSING)
    evaluation = run.submissions.get().evaluation
    assert evaluation.solution_code == SOLUTION
    assert evaluation.status == Evaluation.Status.QUEUED
    # The rundetail names the harness where the run id alone is ambiguous.
    assert ImportedRun.objects.get(external_id=TWO_WORD_HARNESS).run.agent.harness == "or-fable"
    assert not ImportedRun.objects.filter(external_id=OTHER_GPU).exists()


def test_a_second_import_creates_nothing(checkout, tasks):
    run_import(checkout)
    counts = (Agent.objects.count(), Run.objects.count(), Submission.objects.count())
    assert counts[1] == 5  # every GPU: the rtxpro6000 run too
    out, _ = run_import(checkout)
    assert "0 runs imported and queued for grading, 5 already imported, 2 skipped" in out
    assert not ImportedRun.objects.filter(external_id=MEGA).exists()
    assert (Agent.objects.count(), Run.objects.count(), Submission.objects.count()) == counts
    assert Agent.objects.filter(slug="claude-claude-fable-5").count() == 1


def test_nothing_is_written_into_the_checkout(checkout, tasks):
    before = sorted(p.relative_to(checkout) for p in checkout.rglob("*"))
    run_import(checkout)
    assert sorted(p.relative_to(checkout) for p in checkout.rglob("*")) == before


def test_a_folder_without_a_catalogue_is_refused(tmp_path, db):
    with pytest.raises(CommandError, match=r"no public/data/catalog\.json"):
        run_import(tmp_path)
    assert not Run.objects.exists()


def test_a_run_that_fails_midway_leaves_nothing_of_itself(checkout, tasks, monkeypatch):
    import arena.imported_runs as module

    def broken(**kwargs):
        raise RuntimeError("grader store down")

    monkeypatch.setattr(module, "evaluation_create", broken)
    with pytest.raises(RuntimeError):
        run_import(checkout, "--gpu", "h100")
    assert not Run.objects.exists() and not ImportedRun.objects.exists()


def finish(external_id: str, status: str, **result) -> None:
    evaluation = ImportedRun.objects.get(external_id=external_id).run.submissions.get().evaluation
    evaluation.status = status
    evaluation.result = result
    evaluation.save()


def test_compare_prints_where_our_verdict_and_theirs_differ(checkout, tasks):
    run_import(checkout, "--gpu", "h100")
    finish(PASSING, "passed")  # agree: both pass
    failed_gate = {"passed": False, "reason": "shape M=4096 seed 0: values differ"}
    finish(IN_GPU_FOLDER, "failed", gates={"compile": {"passed": True}, "correctness": failed_gate})
    finish(WRONG, "passed")  # they said wrong
    # TWO_WORD_HARNESS stays queued: not compared yet.
    out = StringIO()
    call_command("compare_imported_runs", "--gpu", "h100", stdout=out)
    lines = out.getvalue().splitlines()
    assert lines[-1] == "3 graded runs compared: 1 agree, 2 differ"
    differ = {line.split()[3]: line for line in lines if line.startswith("DIFFER")}
    assert set(differ) == {IN_GPU_FOLDER, WRONG}
    assert (
        "ours fail (failed: correctness: shape M=4096 seed 0: values differ)"
        in differ[IN_GPU_FOLDER]
    )
    assert "theirs pass (outcome pass, audit clean, peak fraction 0.3033)" in differ[IN_GPU_FOLDER]
    assert "ours pass (passed); theirs fail (outcome wrong, audit unaudited)" in differ[WRONG]


def test_an_audit_rejection_counts_as_their_failure(checkout, tasks):
    run_import(checkout, "--gpu", "h100")
    finish(TWO_WORD_HARNESS, "passed")
    out = StringIO()
    call_command("compare_imported_runs", stdout=out)
    assert "theirs fail (outcome pass, audit bug, peak fraction 0.3033)" in out.getvalue()


def test_run_page_and_api_show_the_published_result(checkout, tasks, client):
    run_import(checkout, "--gpu", "h100")
    run = ImportedRun.objects.get(external_id=PASSING).run
    page = client.get(f"/runs/{run.pk}/").content.decode()
    assert "Imported from KernelBench-Hard" in page
    assert f"KernelBench-Hard run <code>{PASSING}</code> on h100: pass" in page
    assert "peak fraction 0.3033, audit verdict clean" in page
    assert TRACE.format(PASSING) in page
    body = client.get(f"/api/v1/runs/{run.pk}").json()
    assert body["imported"]["origin"] == "kernelbench-hard"
    assert body["imported"]["external_id"] == PASSING
    assert body["imported"]["published"]["verdict"] == "clean"


def test_an_upstream_model_class_is_graded_as_model_new(checkout, tasks):
    from arena.imported_runs import as_model_new
    from evaluator.models import Evaluation

    run_import(checkout, "--gpu", "h100")
    stored = Evaluation.objects.get(submission__run__imported__external_id=WRONG).solution_code
    assert stored.startswith(UPSTREAM_SOLUTION.rstrip("\n"))
    assert stored.rstrip().endswith("ModelNew = Model")
    # Left alone: a solution with its own ModelNew, one with no Model, one that does not parse.
    assert as_model_new(SOLUTION) == SOLUTION
    assert as_model_new("x = 1\n") == "x = 1\n"
    assert as_model_new("class Model(:\n") == "class Model(:\n"
    assert as_model_new("from k import Model as ModelNew\nclass Model: pass\n").count("=") == 0


def hf_trace(run_id: str) -> str:
    """A log as KernelBench-Hard's traces dataset publishes one: every harness converted into
    the Claude Code session schema (title and mode records, then a uuid/parentUuid chain)."""
    common = {
        "isSidechain": False,
        "userType": "external",
        "cwd": "/workspace",
        "sessionId": run_id,
        "version": "2.1.181",
        "gitBranch": "",
        "entrypoint": "cli",
    }
    title = f"claude-fable-5 · {run_id}"
    lines = [
        {"type": "custom-title", "customTitle": title, "sessionId": run_id},
        {"type": "ai-title", "aiTitle": title, "sessionId": run_id},
        {"type": "mode", "mode": "normal", "sessionId": run_id},
        {
            **common,
            "parentUuid": None,
            "type": "user",
            "uuid": "u1",
            "promptId": "p1",
            "timestamp": "2026-07-02T05:50:40.000Z",
            "message": {"role": "user", "content": "I need you to write a fast fp8 GEMM."},
        },
        {
            **common,
            "parentUuid": "u1",
            "type": "assistant",
            "uuid": "a1",
            "requestId": "req_a1",
            "timestamp": "2026-07-02T05:50:41.000Z",
            "message": {
                "role": "assistant",
                "id": "m1",
                "type": "message",
                "model": "claude-fable-5",
                "stop_reason": None,
                "content": [
                    {"type": "text", "text": "Reading the reference first."},
                    {
                        "type": "tool_use",
                        "id": "t1",
                        "name": "Bash",
                        "input": {"command": "cat reference.py"},
                    },
                ],
                "usage": {"input_tokens": 1200, "output_tokens": 80},
            },
        },
        {
            **common,
            "parentUuid": "a1",
            "type": "user",
            "uuid": "u2",
            "promptId": "p2",
            "timestamp": "2026-07-02T05:50:42.000Z",
            "message": {
                "role": "user",
                "content": [
                    {
                        "type": "tool_result",
                        "tool_use_id": "t1",
                        "content": "class Model(nn.Module): ...",
                        "is_error": False,
                    }
                ],
            },
        },
        {
            **common,
            "parentUuid": "u2",
            "type": "assistant",
            "uuid": "a2",
            "requestId": "req_a2",
            "timestamp": "2026-07-02T05:50:50.000Z",
            "message": {
                "role": "assistant",
                "id": "m2",
                "type": "message",
                "model": "claude-fable-5",
                "stop_reason": None,
                "content": [{"type": "text", "text": "solution.py written; check.py passes."}],
                "usage": {"input_tokens": 1500, "output_tokens": 40},
            },
        },
    ]
    return "".join(json.dumps(line) + "\n" for line in lines)


@pytest.fixture
def traces(tmp_path: Path) -> Path:
    folder = tmp_path / "traces"
    folder.mkdir()
    # The traces dataset's file, and a run folder as upstream's runner leaves it.
    (folder / f"{PASSING}.jsonl").write_text(hf_trace(PASSING))
    (folder / IN_GPU_FOLDER).mkdir()
    (folder / IN_GPU_FOLDER / "transcript.jsonl").write_text(hf_trace(IN_GPU_FOLDER))
    (folder / IN_GPU_FOLDER / "codex_session.jsonl").write_text("")  # empty: passed over
    (folder / f"{WRONG}.jsonl").write_text("this is not a log\n" * 3)
    return folder


def test_downloaded_traces_are_attached_to_their_imported_runs(checkout, tasks, traces, client):
    out, err = run_import(checkout, "--traces", str(traces))
    assert "transcripts: 2 attached, 2 without a log in the folder, 1 refused" in out
    assert f"transcript refused {WRONG}: " in err
    passing = ImportedRun.objects.get(external_id=PASSING).run
    assert passing.trajectory is not None
    assert passing.trajectory.format.startswith("claude")
    page = client.get(f"/runs/{passing.pk}/transcript").content.decode()
    assert "Reading the reference first." in page and "cat reference.py" in page
    assert ImportedRun.objects.get(external_id=IN_GPU_FOLDER).run.trajectory is not None
    # The unreadable log left its run imported, queued and without a transcript.
    wrong = ImportedRun.objects.get(external_id=WRONG).run
    assert wrong.trajectory is None and wrong.submissions.count() == 1
    # Again: nothing is imported or attached twice; the runs without a log are looked for again.
    out, _ = run_import(checkout, "--traces", str(traces))
    assert "0 runs imported" in out
    assert "transcripts: 0 attached, 2 without a log in the folder, 1 refused" in out


def test_a_trace_is_never_read_from_outside_the_folder(tmp_path):
    traces = tmp_path / "traces"
    traces.mkdir()
    (tmp_path / "secret.jsonl").write_text("{}\n")
    (traces / "escape").symlink_to(tmp_path)
    assert trace_path(traces, "../secret") is None
    (traces / "link.jsonl").symlink_to(tmp_path / "secret.jsonl")
    assert trace_path(traces, "link") is None
    assert trace_path(traces, "escape/secret") is None


def test_the_traces_folder_must_exist(checkout, tasks, tmp_path):
    with pytest.raises(CommandError, match="no such folder"):
        run_import(checkout, "--traces", str(tmp_path / "absent"))
