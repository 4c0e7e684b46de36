"""The grader's bytecode cache (grader/bytecode.py) where the installed torch ships no bytecode,
and the compile workers its trusted children are given (EvaluateOptions.compile_threads)."""

import importlib.util
import json
import py_compile
import subprocess
import sys
from pathlib import Path

import pytest

from grader import EvaluateOptions, bytecode, evaluate
from grader.launch import CHILD_CODE, Launcher
from grader.modules import load_module
from sandboxes.backends import Limits, bwrap_usable, scrubbed_env
from tests.sandbox.test_isolation import ATTEMPT

SOLUTIONS = Path(__file__).resolve().parent / "solutions"


@pytest.fixture
def no_bytecode(monkeypatch):
    monkeypatch.delenv(bytecode.PREFIX_VARIABLE, raising=False)
    monkeypatch.setattr(bytecode, "installed_without_bytecode", lambda module="torch": True)


def package(tmp_path, name):
    root = tmp_path / "site"
    (root / name).mkdir(parents=True)
    source = root / name / "__init__.py"
    source.write_text("VALUE = 41 + 1\n")
    return root, source


def test_a_package_without_bytecode_beside_its_source_is_found_without_importing_it(
    tmp_path, monkeypatch
):
    root, source = package(tmp_path, "shipped_bare")
    monkeypatch.syspath_prepend(str(root))
    assert bytecode.installed_without_bytecode("shipped_bare") is True
    assert "shipped_bare" not in sys.modules
    # The same package as pip leaves it: its bytecode beside the source.
    root, source = package(tmp_path / "other", "shipped_compiled")
    monkeypatch.syspath_prepend(str(root))
    py_compile.compile(str(source), cfile=None, doraise=True)
    assert bytecode.installed_without_bytecode("shipped_compiled") is False
    assert bytecode.installed_without_bytecode("no_such_package_here") is False
    assert bytecode.installed_without_bytecode("sys") is False  # built in: no source at all


def test_where_bytecode_is_installed_the_children_and_this_process_are_left_alone(monkeypatch):
    monkeypatch.setattr(bytecode, "installed_without_bytecode", lambda module="torch": False)
    assert bytecode.child_env("/cache/judge-kernels") == {}
    assert bytecode.use_here("/cache/judge-kernels") is False
    env = Launcher("cpu", "", EvaluateOptions()).env(Path("/tmp/slot"), "judge")
    assert bytecode.PREFIX_VARIABLE not in env
    assert env["PYTHONDONTWRITEBYTECODE"] == "1"


def test_prepare_fills_the_folder_ahead_and_a_first_process_reads_it(
    tmp_path, monkeypatch, no_bytecode
):
    root, source = package(tmp_path, "shipped_bare")
    cache = tmp_path / "judge-kernels"
    report = bytecode.prepare(str(cache), [root, tmp_path / "no-such-folder"])
    assert report["needed"] is True and report["roots"] == [str(root)]
    folder = cache / "bytecode"
    kept = bytecode._mirrored(folder, source.parent) / bytecode._bytecode_name(source)
    assert kept.is_file()
    assert not (source.parent / "__pycache__").exists()  # the package's folder is never written
    # A first process with the grader's variables imports the module from that bytecode, and
    # writes none.
    mtime = kept.stat().st_mtime_ns
    env = {"PATH": "/usr/bin:/bin", "PYTHONPATH": str(root), bytecode.PREFIX_VARIABLE: str(folder)}
    code = "import shipped_bare; print(shipped_bare.__cached__, shipped_bare.VALUE)"
    out = subprocess.run(
        [sys.executable, "-c", code], env=env, capture_output=True, text=True, check=True
    ).stdout.split()
    assert out == [str(kept), "42"]
    assert kept.stat().st_mtime_ns == mtime
    # Where the installed torch has its bytecode, nothing is prepared.
    monkeypatch.setattr(bytecode, "installed_without_bytecode", lambda module="torch": False)
    assert bytecode.prepare(str(cache), [root]) == {"needed": False, "folder": str(folder)}


def test_prepare_from_the_command_line_says_why_it_could_not(
    tmp_path, monkeypatch, capsys, no_bytecode
):
    from grader import cli

    blocker = tmp_path / "a-file"
    blocker.write_text("")
    monkeypatch.setenv("ARENA_JUDGE_KERNEL_CACHE", str(blocker / "judge-kernels"))
    assert cli.main(["prepare", "--json"]) == 2
    report = json.loads(capsys.readouterr().out)
    assert report["status"] == "error" and "a-file" in report["error"]


def test_trusted_children_keep_their_bytecode_in_the_graders_folder(tmp_path, no_bytecode):
    options = EvaluateOptions(judge_kernel_cache=str(tmp_path / "judge-kernels"))
    launcher = Launcher("cpu", "", options)
    folder = str(tmp_path / "judge-kernels" / "bytecode")
    for role in ("judge", "probe"):
        env = launcher.env(tmp_path / role, role)
        assert env[bytecode.PREFIX_VARIABLE] == folder
        assert env["PYTHONDONTWRITEBYTECODE"] == ""
    candidate = launcher.env(tmp_path / "candidate", "candidate")
    assert bytecode.PREFIX_VARIABLE not in candidate
    assert candidate["PYTHONDONTWRITEBYTECODE"] == "1"
    assert "TORCHINDUCTOR_COMPILE_THREADS" not in candidate


def test_a_prefix_the_user_names_is_the_graders_folder(tmp_path, monkeypatch, no_bytecode):
    monkeypatch.setenv(bytecode.PREFIX_VARIABLE, str(tmp_path / "mine"))
    assert bytecode.child_env("/cache/judge-kernels")[bytecode.PREFIX_VARIABLE] == str(
        tmp_path / "mine"
    )


def test_a_child_given_the_variables_writes_its_bytecode_there_and_not_beside_the_source(
    tmp_path, monkeypatch, no_bytecode
):
    root, source = package(tmp_path, "bare_module")
    # The image forbids bytecode for every process; the grader's variables lift it for its own.
    monkeypatch.setenv("PYTHONDONTWRITEBYTECODE", "1")
    env = scrubbed_env(
        {**bytecode.child_env(str(tmp_path / "judge-kernels")), "PYTHONPATH": str(root)},
        home=tmp_path,
    )
    for _ in range(2):
        done = subprocess.run(
            [sys.executable, "-c", "import bare_module; print(bare_module.VALUE)"],
            env=env,
            capture_output=True,
            text=True,
            check=True,
        )
        assert done.stdout.strip() == "42"
    assert not (source.parent / "__pycache__").exists()
    # Kept in the folder, in a tree that mirrors the source's own path.
    prefix = tmp_path / "judge-kernels" / "bytecode"
    tag = sys.implementation.cache_tag
    assert (prefix / source.parent.relative_to("/") / f"__init__.{tag}.pyc").is_file()
    # Without the grader's variables the same process writes nothing anywhere.
    plain = scrubbed_env({"PYTHONPATH": str(root)}, home=tmp_path)
    subprocess.run([sys.executable, "-c", "import bare_module"], env=plain, check=True)
    assert not (source.parent / "__pycache__").exists()


def test_the_command_lines_own_imports_use_the_folder(tmp_path, monkeypatch, no_bytecode):
    monkeypatch.setattr(sys, "pycache_prefix", None)
    monkeypatch.setattr(sys, "dont_write_bytecode", True)
    assert bytecode.use_here(str(tmp_path / "judge-kernels")) is True
    assert sys.pycache_prefix == str(tmp_path / "judge-kernels" / "bytecode")
    assert sys.dont_write_bytecode is False
    assert (tmp_path / "judge-kernels" / "bytecode").is_dir()


def test_the_judges_compile_workers_are_the_options(tmp_path, monkeypatch):
    monkeypatch.delenv("ARENA_GRADER_COMPILE_THREADS", raising=False)
    assert EvaluateOptions().compile_threads == 1
    judge = Launcher("cpu", "", EvaluateOptions()).env(tmp_path, "judge")
    assert judge["TORCHINDUCTOR_COMPILE_THREADS"] == "1"
    # 0: torch's own choice, so nothing is set.
    own = Launcher("cpu", "", EvaluateOptions(compile_threads=0)).env(tmp_path, "judge")
    assert "TORCHINDUCTOR_COMPILE_THREADS" not in own
    monkeypatch.setenv("ARENA_GRADER_COMPILE_THREADS", "4")
    assert EvaluateOptions().compile_threads == 4
    for bad in ("-1", "many"):
        monkeypatch.setenv("ARENA_GRADER_COMPILE_THREADS", bad)
        with pytest.raises(ValueError, match="ARENA_GRADER_COMPILE_THREADS"):
            EvaluateOptions()
    with pytest.raises(ValueError, match="compile_threads"):
        EvaluateOptions(compile_threads=-2)


def test_a_task_file_loaded_by_path_leaves_no_bytecode_anywhere(tmp_path, monkeypatch):
    # A trusted child keeping bytecode in the grader's folder loads each evaluation's copy of
    # the reference: one file per evaluation there, never read again, if it kept them.
    prefix = tmp_path / "bytecode"
    monkeypatch.setattr(sys, "pycache_prefix", str(prefix))
    monkeypatch.setattr(sys, "dont_write_bytecode", False)
    folder = tmp_path / "arena-eval-1" / "judge"
    folder.mkdir(parents=True)
    reference = folder / "reference.py"
    reference.write_text("VALUE = 6 * 7\n")
    monkeypatch.delitem(sys.modules, "reference_by_path", raising=False)
    assert load_module(reference, "reference_by_path").VALUE == 42
    assert not prefix.exists() or not list(prefix.rglob("*.pyc"))
    assert not (folder / "__pycache__").exists()
    assert sys.dont_write_bytecode is False  # the process's own imports keep theirs


def keep_torchs_bytecode(judge_kernel_cache: Path) -> Path:
    """What a trusted process leaves in the grader's folder once it has imported torch."""
    spec = importlib.util.find_spec("torch")
    source = Path(spec.origin)
    tag = sys.implementation.cache_tag
    folder = judge_kernel_cache / "bytecode"
    kept = folder / source.parent.relative_to("/") / f"{source.stem}.{tag}.pyc"
    kept.parent.mkdir(parents=True)
    kept.write_bytes(b"kept by a trusted process")
    return kept


def keep_private_bytecode(judge_kernel_cache: Path, tmp_path: Path) -> Path:
    """Bytecode of a source no candidate may read (a task's folder, say)."""
    source_folder = tmp_path / "private"
    private = judge_kernel_cache / "bytecode" / source_folder.relative_to("/") / "secret.pyc"
    private.parent.mkdir(parents=True)
    private.write_bytes(b"not the candidate's")
    return private


def process_launcher(judge_kernel_cache: Path) -> Launcher:
    options = EvaluateOptions(
        judge_kernel_cache=str(judge_kernel_cache), sandbox="process", allow_unisolated=True
    )
    return Launcher("cpu", "", options)


def test_a_candidate_reads_the_folder_only_once_torchs_bytecode_is_kept_there(
    tmp_path, no_bytecode
):
    cache = tmp_path / "judge-kernels"
    launcher = process_launcher(cache)
    # The host's first evaluation: nothing kept yet, so nothing given.
    assert bytecode.PREFIX_VARIABLE not in launcher.env(tmp_path, "candidate")
    assert launcher.readable("candidate") == CHILD_CODE
    kept = keep_torchs_bytecode(cache)
    private = keep_private_bytecode(cache, tmp_path)
    for role in ("candidate", "decoy"):
        env = launcher.env(tmp_path / role, role)
        assert env[bytecode.PREFIX_VARIABLE] == str(cache / "bytecode")
        assert env["PYTHONDONTWRITEBYTECODE"] == "1"  # read, never written
        readable = launcher.readable(role)
        assert readable[: len(CHILD_CODE)] == CHILD_CODE
        subtrees = readable[len(CHILD_CODE) :]
        # Only subtrees that mirror the sources it may read: torch's among them, never the
        # whole folder, never the private source's.
        assert subtrees and all(t.is_relative_to(cache / "bytecode") for t in subtrees)
        assert cache / "bytecode" not in subtrees
        assert any(kept.is_relative_to(t) for t in subtrees)
        assert not any(private.is_relative_to(t) for t in subtrees)
    # The trusted children keep writing it; they are never given it as a read-only extra.
    assert launcher.readable("judge") == CHILD_CODE


def test_a_folder_the_user_names_is_never_a_candidates(tmp_path, monkeypatch, no_bytecode):
    cache = tmp_path / "judge-kernels"
    keep_torchs_bytecode(cache)
    monkeypatch.setenv(bytecode.PREFIX_VARIABLE, str(cache / "bytecode"))
    launcher = process_launcher(cache)
    assert bytecode.PREFIX_VARIABLE not in launcher.env(tmp_path, "candidate")
    assert launcher.readable("candidate") == CHILD_CODE


def test_where_bytecode_is_installed_a_candidate_is_given_nothing(tmp_path, monkeypatch):
    monkeypatch.setattr(bytecode, "installed_without_bytecode", lambda module="torch": False)
    cache = tmp_path / "judge-kernels"
    keep_torchs_bytecode(cache)
    launcher = process_launcher(cache)
    assert bytecode.PREFIX_VARIABLE not in launcher.env(tmp_path, "candidate")
    assert launcher.readable("candidate") == CHILD_CODE


SANDBOXED_CHECK = (
    ATTEMPT
    + """
kept, secret, private = sys.argv[1], sys.argv[2], sys.argv[3]
report = {
    "prefix": sys.pycache_prefix,
    "dont_write": sys.dont_write_bytecode,
    "read_kept": attempt(lambda: open(kept, "rb").read()),
    "write_beside": attempt(lambda: open(kept + ".new", "wb").write(b"x")),
    "overwrite": attempt(lambda: open(kept, "wb").write(b"x")),
    "read_kernels": attempt(lambda: open(secret).read()),
    "read_private": attempt(lambda: open(private, "rb").read()),
}
json.dump(report, open("report.json", "w"))
"""
)


@pytest.mark.skipif(not bwrap_usable(), reason="bubblewrap cannot create namespaces here")
def test_in_bwrap_a_candidate_reads_its_part_of_the_folder_and_changes_and_sees_nothing_else(
    tmp_path, no_bytecode
):
    cache = tmp_path / "judge-kernels"
    kept = keep_torchs_bytecode(cache)
    secret = cache / "triton" / "kernel.cubin"  # the judge's kernels, beside the folder
    secret.parent.mkdir(parents=True)
    secret.write_text("the judge's")
    private = keep_private_bytecode(cache, tmp_path)
    launcher = Launcher("cpu", "", EvaluateOptions(judge_kernel_cache=str(cache), sandbox="bwrap"))
    workdir = tmp_path / "candidate"
    workdir.mkdir()
    outcome = launcher.sandbox(sandboxed=True).run(
        [sys.executable, "-c", SANDBOXED_CHECK, str(kept), str(secret), str(private)],
        workdir=workdir,
        env=launcher.env(workdir, "candidate"),
        limits=Limits(timeout_s=60),
        readable=launcher.readable("candidate"),
    )
    assert outcome.returncode == 0, outcome.log_path.read_text()
    report = json.loads((workdir / "report.json").read_text())
    assert report["prefix"] == str(cache / "bytecode") and report["dont_write"] is True
    assert report["read_kept"] == "ok"
    assert report["write_beside"] != "ok" and report["overwrite"] != "ok"
    assert report["read_kernels"] == "FileNotFoundError"
    assert report["read_private"] == "FileNotFoundError"
    assert kept.read_bytes() == b"kept by a trusted process"


@pytest.mark.skipif(not bwrap_usable(), reason="bubblewrap cannot create namespaces here")
def test_a_candidate_reading_the_folder_is_not_flagged_for_its_own_imports(tmp_path, no_bytecode):
    # The interpreter looks for each module's bytecode in the folder (the solution's, the
    # libraries' it imports while it runs): its own lookups, not the solution's file access.
    cache = tmp_path / "judge-kernels"
    keep_torchs_bytecode(cache)
    options = EvaluateOptions(
        judge_kernel_cache=str(cache), sandbox="bwrap", timeout_s=180, unseen_count=1
    )
    result = evaluate("silu", SOLUTIONS / "silu_triton.py", "cpu", options)
    assert result.status == "passed", result.gates
    assert result.flags == []
