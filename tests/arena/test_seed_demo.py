"""The demo leaderboard: bench/demo_gpu.py records real graded runs; seed_demo imports or grades.

The recording here is made on CPU by the real script and the real grader, so the import is
tested on a file this test produced, never on made-up numbers.
"""

import copy
import gzip
import hashlib
import json
import subprocess
import sys
from pathlib import Path

import pytest
from django.core.management import CommandError, call_command

from arena.demo.scripted_runs import DEMO_AGENTS, DEMO_TASKS, demo_plan
from arena.demo.seeding import Recorded, recorded_matches
from arena.models import Agent, Run, RunScore
from grader.taskspec import DEFAULT_CATALOG, find_task_folder, load_task
from tasks.models import Task
from transcript_formats import parse_bytes

REPO = Path(__file__).resolve().parents[2]
TASK = "tt-vector-add"
# The recording host has no Django or Celery: the script runs with both made unimportable.
NO_DJANGO = """
import runpy, sys
class Refuse:
    def find_spec(self, name, path=None, target=None):
        if name.split(".")[0] in ("django", "celery", "rest_framework", "kombu"):
            raise ImportError(f"{name} is not installed on the GPU host")
sys.meta_path.insert(0, Refuse())
sys.argv = ["bench/demo_gpu.py", *sys.argv[1:]]
runpy.run_path("bench/demo_gpu.py", run_name="__main__")
"""


def record(out: Path, *strategies: str) -> subprocess.CompletedProcess:
    command = [sys.executable, "-c", NO_DJANGO, "--device", "cpu", "--tasks", TASK]
    command += ["--strategies", *strategies, "--out", str(out), "--timeout", "120"]
    return subprocess.run(command, cwd=REPO, capture_output=True, text=True, timeout=900)


# Session scope: pytest-django runs the transactional tests after the others, which splits this
# module's tests, and a module-scoped recording (half a minute of grading) was made again for
# each part.
@pytest.fixture(scope="session")
def recording(tmp_path_factory) -> Path:
    out = tmp_path_factory.mktemp("recorded") / "graded-cpu.json"
    done = record(out, "weak", "broken")
    assert done.returncode == 0, done.stderr
    return out


def test_demo_gpu_records_the_agent_log_solution_and_full_verdict(recording):
    data = json.loads(recording.read_text())
    assert (data["script"], data["device"], data["gpu"]) == ("bench/demo_gpu.py", "cpu", "cpu")
    assert data["torch"] and data["triton"] and data["date"]
    version = load_task(find_task_folder(TASK, DEFAULT_CATALOG)).version_hash
    runs = {r["strategy"]: r for r in data["runs"]}
    assert set(runs) == {"weak", "broken"}
    for entry in runs.values():
        assert entry["task"] == TASK
        assert entry["task_version"] == entry["result"]["task_version"] == version
        digest = hashlib.sha256(entry["solution"].encode()).hexdigest()
        assert digest == entry["solution_sha256"] == entry["result"]["solution_hash"]
        assert parse_bytes(entry["log"].encode(), "log.jsonl").format == "claude-code-stream-json"
    weak, broken = runs["weak"], runs["broken"]
    assert weak["agent"] == "scripted-weak (demo)"
    assert weak["result"]["status"] == "passed"
    # Graded as the arena grades: unseen shapes too, drawn by the grader, all correct.
    seen = [row["seen"] for row in weak["result"]["per_shape"]]
    assert seen.count(True) == 2 and seen.count(False) >= 1
    assert weak["result"]["gates"]["generalization"]["passed"] is True
    assert broken["result"]["status"] == "failed"
    assert broken["result"]["gates"]["compile"]["passed"] is False


def test_demo_gpu_keeps_recorded_runs_and_records_only_what_is_missing(recording, tmp_path):
    copy_path = tmp_path / "graded-cpu.json"
    copy_path.write_text(recording.read_text())
    done = record(copy_path, "weak", "broken")
    assert done.returncode == 0, done.stderr
    assert done.stderr == ""  # no run was made again
    assert json.loads(copy_path.read_text()) == json.loads(recording.read_text())


def test_demo_gpu_refuses_tasks_outside_the_demo_set(tmp_path):
    done = subprocess.run(
        [sys.executable, "bench/demo_gpu.py", "--device", "cpu", "--tasks", "hard-fp8-gemm"],
        cwd=REPO,
        capture_output=True,
        text=True,
        timeout=120,
    )
    assert done.returncode == 2
    assert "not demo tasks: hard-fp8-gemm" in done.stderr


def test_the_demo_plan_gives_the_starter_agent_only_tasks_with_a_starter():
    folders = {slug: find_task_folder(slug, DEFAULT_CATALOG) for slug in DEMO_TASKS}
    plan = demo_plan(task_folders=folders)
    starters = {slug for agent, slug in plan if agent.strategy == "starter"}
    assert starters == {slug for slug in DEMO_TASKS if slug.startswith("tt-")}
    assert len(plan) == 6 * 4 + 2 * 3
    assert all("(demo)" in agent.name and "scripted" in agent.name for agent in DEMO_AGENTS)


def entry_for(recording: Path, strategy: str) -> Recorded:
    data = json.loads(recording.read_text())
    entry = next(r for r in data["runs"] if r["strategy"] == strategy)
    return Recorded(entry=entry, gpu=data["gpu"], date=data["date"], path=recording)


def test_a_recorded_run_matches_only_its_task_version_and_its_own_solution(recording):
    recorded = entry_for(recording, "weak")
    task = Task(slug=TASK, version_hash=recorded.entry["task_version"])
    assert recorded_matches(recorded=recorded, task=task)
    assert not recorded_matches(recorded=recorded, task=Task(slug=TASK, version_hash="0" * 64))
    tampered = copy.deepcopy(recorded.entry)
    tampered["solution"] += "\n# swapped after grading\n"
    assert not recorded_matches(recorded=Recorded(tampered, "cpu", "d", recording), task=task)


@pytest.mark.django_db
def test_seed_demo_imports_recorded_runs_as_finished_evaluations(recording, catalog_tasks):
    call_command("seed_demo", tasks=[TASK], strategies=["weak", "broken"], recorded=[recording])
    data = json.loads(recording.read_text())
    runs = Run.objects.filter(task__slug=TASK).select_related("agent", "trajectory")
    assert runs.count() == 2
    for run in runs:
        entry = next(r for r in data["runs"] if r["agent"] == run.agent.name)
        evaluation = run.submissions.get().evaluation
        assert (run.status, run.source) == ("done", "arena")
        assert evaluation.solution_code == entry["solution"]
        assert evaluation.status == entry["result"]["status"]
        assert evaluation.reward == entry["result"]["reward"]
        assert evaluation.ranked == entry["result"]["ranked"]
        assert evaluation.shapes.count() == len(entry["result"]["per_shape"])
        assert evaluation.result["recorded"]["note"] == (
            f"graded on cpu by bench/demo_gpu.py ({data['date']})"
        )
        assert run.trajectory.format == "claude-code-stream-json"
        assert run.trajectory.tool_call_count > 0
        # On the leaderboard at once, not only after a catch-up that looks past the newest score.
        assert RunScore.objects.get(run=run).ranked == evaluation.ranked
        assert run.cost_usd == 0
        assert run.duration_s > 0
        assert (run.cli_version, run.model, run.effort) == (
            "scripted 1",
            "scripted",
            run.agent.effort,
        )
    agent = Agent.objects.get(slug="scripted-weak-demo")
    assert (agent.name, agent.harness, agent.model, agent.effort) == (
        "scripted-weak (demo)",
        "scripted",
        "scripted",
        "weak",
    )
    assert agent.config == {"strategy": "weak"}  # launchable as a scripted agent
    call_command("seed_demo", tasks=[TASK], strategies=["weak", "broken"], recorded=[recording])
    call_command("seed_demo", if_empty=True)
    assert Run.objects.count() == 2


@pytest.mark.django_db
def test_seed_demo_names_the_file_and_field_of_a_bad_recording(tmp_path, catalog_tasks):
    bad = tmp_path / "graded-bad.json"
    bad.write_text(json.dumps({"gpu": "x", "date": "d", "runs": [{"strategy": "weak"}]}))
    with pytest.raises(CommandError, match=r"graded-bad\.json: runs\[0\]: field 'task'"):
        call_command("seed_demo", tasks=[TASK], recorded=[bad])
    bad.write_text("{not json")
    with pytest.raises(CommandError, match=r"graded-bad\.json: not readable JSON"):
        call_command("seed_demo", tasks=[TASK], recorded=[bad])
    assert Run.objects.count() == 0


@pytest.mark.django_db
def test_seed_demo_names_a_task_missing_from_the_database():
    with pytest.raises(CommandError, match="task 'tt-vector-add' is not in the database"):
        call_command("seed_demo", tasks=[TASK], recorded=[])


@pytest.mark.worker
@pytest.mark.django_db(transaction=True)
def test_seed_demo_runs_the_agent_and_the_worker_grades_a_run_recorded_for_an_old_version(
    recording, tmp_path, celery_worker, catalog_tasks
):
    from tests.waiting import wait_for

    stale = json.loads(recording.read_text())
    for entry in stale["runs"]:
        entry["task_version"] = "0" * 64  # recorded before the task changed
    stale_path = tmp_path / "graded-stale.json"
    stale_path.write_text(json.dumps(stale))
    call_command("seed_demo", tasks=[TASK], strategies=["weak"], recorded=[stale_path])
    run = Run.objects.get(agent__slug="scripted-weak-demo", task__slug=TASK)
    assert run.source == "arena"
    assert run.trajectory.format == "claude-code-stream-json"

    def graded():
        run.refresh_from_db()
        return run.status == Run.Status.DONE

    wait_for(graded, timeout_s=300, what="the worker to grade the demo run")
    evaluation = run.submissions.get().evaluation
    assert evaluation.status == "passed"
    assert evaluation.device == "cpu"
    assert evaluation.attempts == 1
    assert "recorded" not in evaluation.result
    expected = (REPO / "tasks/catalog/core" / TASK / "starter/solution.py").read_text()
    assert evaluation.solution_code == expected


@pytest.mark.django_db
def test_verify_recorded_runs_the_agent_and_keeps_the_gpu_verdict_for_the_same_solution(
    recording, tmp_path, catalog_tasks
):
    data = json.loads(recording.read_text())
    for entry in data["runs"]:
        entry["log"] = entry["log"].replace('"cwd": "', '"cwd": "/recording-host')
    marked = tmp_path / "graded-marked.json"
    marked.write_text(json.dumps(data))
    call_command(
        "seed_demo", tasks=[TASK], strategies=["broken"], recorded=[marked], verify_recorded=True
    )
    run = Run.objects.get(agent__slug="scripted-broken-demo")
    evaluation = run.submissions.get().evaluation
    assert evaluation.result["recorded"]["gpu"] == "cpu"
    assert run.status == "done"
    # The transcript is this run's, not the recording's.
    with run.trajectory.raw_log.open("rb") as fh:
        log = gzip.decompress(fh.read())
    assert b'"cwd": "/recording-host' not in log
    assert b'"model": "scripted"' in log


@pytest.mark.django_db
def test_a_recorded_log_the_transcripts_app_rejects_leaves_nothing_behind(
    recording, tmp_path, catalog_tasks
):
    data = json.loads(recording.read_text())
    for entry in data["runs"]:
        entry["log"] = ""
    empty = tmp_path / "graded-empty-log.json"
    empty.write_text(json.dumps(data))
    with pytest.raises(CommandError, match=r"graded-empty-log\.json: the run of .*field 'log'"):
        call_command("seed_demo", tasks=[TASK], strategies=["weak"], recorded=[empty])
    assert Run.objects.count() == 0
