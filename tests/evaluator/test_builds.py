"""The build stage (grader/builds.py) on the CPU: extensions compiled once into the
content-addressed cache, compile failures decided without a grading child, the GPU stage
loading what was built, and nothing decided where the build host lacks what a build needs."""

import json
from pathlib import Path

import pytest

from grader import builds
from grader.evaluate import (
    EvaluateOptions,
    build_failure_result,
    build_solution,
    evaluate,
)
from grader.result import REWARD_NOT_COMPILED

REPO = Path(__file__).resolve().parents[2]
SILU = REPO / "tasks" / "catalog" / "core" / "silu"
SOLUTIONS = REPO / "tests" / "evaluator" / "solutions"


def options(cache: Path) -> EvaluateOptions:
    return EvaluateOptions(build_cache=str(cache), timeout_s=120, unseen_count=1)


def variant(tmp_path: Path, name: str, old: str, new: str, *, source: str) -> Path:
    path = tmp_path / name
    path.write_text((SOLUTIONS / source).read_text().replace(old, new))
    return path


def test_an_extension_is_built_once_and_the_grading_child_loads_it(tmp_path):
    cache = tmp_path / "builds"
    solution = SOLUTIONS / "silu_c_extension.py"
    report = build_solution(SILU, solution, arch="", options=options(cache))
    assert (report.status, report.cached) == (builds.BUILT, False)
    assert list(report.extensions) == ["arena_fast_ext"]
    entry = cache / report.key
    manifest = json.loads((entry / builds.MANIFEST).read_text())
    assert manifest["status"] == "built"
    assert (entry / manifest["extensions"]["arena_fast_ext"]["file"]).is_file()
    # Asked again, the cache answers.
    again = build_solution(SILU, solution, arch="", options=options(cache))
    assert (again.status, again.cached, again.key) == (builds.BUILT, True, report.key)

    result = evaluate(SILU, solution, "cpu", options(cache))
    assert result.status == "passed", result.gates
    build = result.environment["build"]
    assert (build["key"], build["source"]) == (report.key, "cache")
    assert build["prebuilt_loaded"] == ["arena_fast_ext"]


def test_a_compiler_error_is_graded_by_the_build_stage_and_then_from_the_cache(tmp_path):
    cache = tmp_path / "builds"
    solution = SOLUTIONS / "c_extension_compile_error.py"
    report = build_solution(SILU, solution, arch="", options=options(cache))
    assert (report.status, report.reason) == (builds.FAILED, "the compiler refused it")
    assert report.error.startswith("Error building extension 'arena_broken_ext'")
    assert "expected" in report.error  # the compiler's own words reach the author

    verdict = build_failure_result(SILU, solution, "cuda", report)
    assert (verdict.status, verdict.reward, verdict.device) == (
        "failed",
        REWARD_NOT_COMPILED,
        "cuda",
    )
    assert verdict.gates["compile"].passed is False
    assert verdict.gates["compile"].reason == "did not compile: the compiler refused it"
    assert verdict.environment["build"]["source"] == "build stage"
    assert verdict.per_shape == [] and "candidate_startup" not in verdict.phases

    # The GPU stage finds the failure in the cache and starts no child for it.
    result = evaluate(SILU, solution, "cpu", options(cache))
    assert (result.status, result.reward) == ("failed", REWARD_NOT_COMPILED)
    assert result.gates["compile"].detail["build_key"] == report.key
    assert not any(name.startswith(("candidate", "probe", "judge")) for name in result.phases)


def test_what_needs_no_child_is_decided_statically(tmp_path):
    cache = tmp_path / "builds"
    broken = build_solution(SILU, SOLUTIONS / "syntax_error.py", arch="", options=options(cache))
    assert (broken.status, broken.reason) == (builds.FAILED, "not valid Python")
    assert broken.error.startswith("SyntaxError")
    triton = build_solution(SILU, SOLUTIONS / "silu_triton.py", arch="", options=options(cache))
    assert (triton.status, triton.reason, triton.extensions) == (
        builds.BUILT,
        "no extension to build",
        {},
    )
    assert triton.build_s == 0.0  # no child was started


def test_a_build_this_host_cannot_do_is_deferred_and_not_cached(tmp_path):
    import torch

    cache = tmp_path / "builds"
    if torch.version.cuda is None:
        # CUDA sources on a torch without CUDA: the GPU stage builds them, nothing is decided.
        cuda = variant(
            tmp_path,
            "cuda.py",
            "no_implicit_headers=True)",
            'cuda_sources="__global__ void k() {}", no_implicit_headers=True)',
            source="silu_c_extension.py",
        )
        report = build_solution(SILU, cuda, arch="9.0a", options=options(cache))
        assert (report.status, report.reason) == (
            builds.DEFERRED,
            "this build host's torch has no CUDA; the GPU stage builds it",
        )
        assert builds.cache_lookup(cache, report.key) is None
    # An import that needs a GPU (or anything else this host lacks) decides nothing either.
    needs_gpu = variant(
        tmp_path,
        "needs_gpu.py",
        "ext = load_inline(",
        "torch.cuda.current_device()\next = load_inline(",
        source="silu_c_extension.py",
    )
    report = build_solution(SILU, needs_gpu, arch="", options=options(cache))
    assert report.status == builds.DEFERRED
    assert "left to the GPU stage" in report.reason and "current_device" in report.error
    assert builds.cache_lookup(cache, report.key) is None


def test_the_grading_child_builds_what_the_cache_lacks_and_stores_it(tmp_path):
    cache = tmp_path / "builds"
    solution = variant(
        tmp_path, "own.py", "arena_fast_ext", "arena_own_ext", source="silu_c_extension.py"
    )
    first = evaluate(SILU, solution, "cpu", options(cache))
    assert first.status == "passed", first.gates
    assert first.environment["build"]["source"] == "none"
    stored = builds.cache_lookup(cache, first.environment["build"]["key"])
    assert stored is not None and list(stored.extensions) == ["arena_own_ext"]
    second = evaluate(SILU, solution, "cpu", options(cache))
    assert second.status == "passed"
    assert second.environment["build"]["prebuilt_loaded"] == ["arena_own_ext"]


def test_a_prebuilt_library_is_used_only_for_the_same_build_inputs(tmp_path):
    """The digest covers the loader's inputs: other sources or flags under the same name build
    afresh, whatever the cache holds."""
    from torch.utils import cpp_extension

    calls = []

    def real_signature_stub(*args, **kwargs):
        calls.append(kwargs.get("cpp_sources"))
        return type("Built", (), {"__file__": str(tmp_path / "fresh.so")})()

    real_signature_stub.__signature__ = __import__("inspect").signature(cpp_extension.load_inline)
    recorder = builds.ExtensionLoaders(None, build_only=False)
    built = recorder._wrap("load_inline", real_signature_stub)
    built("ext", cpp_sources="int a;")
    digest = recorder.built["ext"]["digest"]

    library = tmp_path / "prebuilt.so"
    library.write_bytes(b"")
    loaders = builds.ExtensionLoaders(
        {"ext": {"digest": digest, "path": str(library)}}, build_only=False
    )
    wrapped = loaders._wrap("load_inline", real_signature_stub)
    wrapped("ext", cpp_sources="int a;", extra_cflags=["-O3"])
    wrapped("ext", cpp_sources="int b;")
    assert calls == ["int a;", "int a;", "int b;"]  # both built afresh
    assert loaders.loaded == []
    # Only `verbose` and the build folder may differ: the same inputs take the library.
    with pytest.raises(ImportError):  # the empty stand-in is no library, so it is tried
        wrapped("ext", cpp_sources="int a;", verbose=True)


def test_the_cache_keeps_only_whole_entries(tmp_path):
    cache = tmp_path / "builds"
    report = builds.BuildReport("k" * 64, builds.BUILT, extensions={"x": {"digest": "d"}})
    library = tmp_path / "x.so"
    library.write_bytes(b"\x7fELF")
    assert builds.cache_store(cache, report, {"x": library})
    assert builds.cache_lookup(cache, "k" * 64).extensions["x"]["file"] == "x.so"
    # A second builder of the same key leaves the first entry as it was.
    assert not builds.cache_store(cache, report, {"x": library})
    # An entry whose library went missing is not an entry.
    (cache / ("k" * 64) / "x.so").unlink()
    assert builds.cache_lookup(cache, "k" * 64) is None
    assert [p.name for p in cache.iterdir()] == ["k" * 64]  # no staging folder left behind


def test_the_architecture_follows_the_gpu():
    assert builds.arch_for_capability("9.0") == "9.0a"
    assert builds.arch_for_capability("8.9") == "8.9"
    assert builds.arch_for_capability("") == ""


def test_what_a_child_reports_cannot_reach_outside_its_folder_or_the_entry(tmp_path):
    """A candidate reports its own extensions; names and paths it makes up are refused."""
    workdir = tmp_path / "candidate"
    (workdir / "ext").mkdir(parents=True)
    inside = workdir / "ext" / "ok.so"
    inside.write_bytes(b"\x7fELF")
    outside = tmp_path / "secret.so"
    outside.write_bytes(b"secret")
    (workdir / "ext" / "link.so").symlink_to(outside)
    good = {"ok": {"digest": "d", "path": str(inside)}}
    assert builds.collected_libraries(good, workdir) == {"ok": inside.resolve()}
    for bad in (
        {"ok": {"digest": "d", "path": str(outside)}},
        {"ok": {"digest": "d", "path": str(workdir / "ext" / "link.so")}},
        {"../../escape": {"digest": "d", "path": str(inside)}},
        {"ok": "not an entry"},
    ):
        assert builds.collected_libraries(bad, workdir) is None, bad
    report = builds.BuildReport("e" * 64, builds.BUILT, extensions={"../x": {"digest": "d"}})
    assert not builds.cache_store(tmp_path / "builds", report, {"../x": inside})
    assert not (tmp_path / "x.so").exists()
