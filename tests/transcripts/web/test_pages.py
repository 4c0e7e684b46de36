"""The transcript page and its export, served with the run's context and a strict policy."""

from __future__ import annotations

import gzip
import re

import pytest
from django.urls import reverse

from arena.models import Submission
from arena.run_logs import run_trajectory_attach
from evaluator.models import Evaluation
from transcripts.services import page_cache_dir

pytestmark = pytest.mark.django_db


@pytest.fixture
def graded_run(run, codex_log):
    path, _ = codex_log
    run_trajectory_attach(run=run, path=path)
    evaluation = Evaluation.objects.create(
        task=run.task,
        task_version="v1",
        solution_name="solution.py",
        solution_code="class ModelNew:\n    pass  # the <b>final</b> kernel\n",
        solution_sha256="0" * 64,
        status=Evaluation.Status.FAILED,
        reward=0.25,
        result={
            "gates": {
                "compile": {"passed": True, "reason": "built", "detail": {}},
                "correctness": {
                    "passed": False,
                    "reason": "mismatch on shape 2",
                    "detail": {"error": "max abs err 3.1e-2 > 1e-3"},
                },
            }
        },
    )
    Submission.objects.create(run=run, evaluation=evaluation)
    run.refresh_from_db()
    return run


def test_page_shows_the_transcript_with_its_run_context(client, graded_run, uploader):
    client.force_login(uploader)  # the run's owner: the grader's error output is theirs
    response = client.get(reverse("transcript", args=[graded_run.pk]))
    assert response.status_code == 200
    html = response.content.decode()
    assert "Claude Code" in html and "demo/softmax" in html
    assert '<div class="v">failed: correctness <span' in html and "reward 0.250" in html
    assert "the &lt;b&gt;final&lt;/b&gt; kernel" in html  # the solution tab, escaped
    assert "correctness: FAIL mismatch on shape 2" in html and "max abs err 3.1e-2" in html
    client.logout()
    public = client.get(reverse("transcript", args=[graded_run.pk])).content.decode()
    assert "correctness: FAIL mismatch on shape 2" in public
    assert "max abs err 3.1e-2" not in public
    assert f'href="/runs/{graded_run.pk}/transcript/export"' in html
    assert "apply_patch" in html and 'class="ev k-file_change' in html


def test_page_is_served_with_a_hash_based_content_security_policy(client, graded_run):
    response = client.get(reverse("transcript", args=[graded_run.pk]))
    policy = response["Content-Security-Policy"]
    assert policy.startswith("default-src 'none'; script-src 'sha256-")
    assert "frame-ancestors 'none'" in policy and "unsafe-inline" not in policy
    assert response["Referrer-Policy"] == "no-referrer"


def test_export_downloads_the_same_document_as_one_file(client, graded_run):
    response = client.get(reverse("transcript-export", args=[graded_run.pk]))
    assert response.status_code == 200
    assert response["Content-Disposition"] == (
        f'attachment; filename="run-{graded_run.pk}-transcript.html"'
    )
    html = response.content.decode()
    assert '<meta http-equiv="Content-Security-Policy"' in html
    assert "/runs/" not in html  # no link back to the site inside the offline file
    assert not re.search(r"""(src|href)=["']?(https?:)?//""", html)
    assert "mismatch on shape 2" in html


def cached_pages(kind: str) -> list:
    return sorted(page_cache_dir().glob(f"*-{kind}-*.html.gz"))


def test_a_repeat_view_is_served_from_the_cache_without_rendering_again(client, graded_run):
    first = client.get(reverse("transcript", args=[graded_run.pk])).content
    [entry] = cached_pages("page")
    assert gzip.decompress(entry.read_bytes()) == first
    # Mark the cached page: a second render would not carry the mark, a cache hit does.
    entry.write_bytes(gzip.compress(first.replace(b"</body>", b"<!-- from the cache --></body>")))
    second = client.get(reverse("transcript", args=[graded_run.pk])).content
    assert b"<!-- from the cache -->" in second
    assert cached_pages("page") == [entry]


def test_a_new_verdict_is_shown_at_once_and_the_old_page_is_dropped(client, graded_run):
    first = client.get(reverse("transcript", args=[graded_run.pk])).content.decode()
    assert (
        '<div class="card bad"><div class="k">Verdict</div><div class="v">failed: correctness <span'
        in first
    )
    [old] = cached_pages("page")
    Evaluation.objects.filter(submission__run=graded_run).update(
        status=Evaluation.Status.PASSED, reward=0.875, device="cuda"
    )
    html = client.get(reverse("transcript", args=[graded_run.pk])).content.decode()
    assert '<div class="card good"><div class="k">Verdict</div><div class="v">ranked <span' in html
    assert "reward 0.875" in html
    assert old not in cached_pages("page") and len(cached_pages("page")) == 1


def test_the_transcript_page_words_a_flagged_or_cpu_grading_as_the_run_page_does(
    client, graded_run
):
    """A flagged grading never reads as a pass, nor a CPU grading as ranked."""
    graded = Evaluation.objects.filter(submission__run=graded_run)
    graded.update(status=Evaluation.Status.PASSED, device="cpu")
    html = client.get(reverse("transcript", args=[graded_run.pk])).content.decode()
    assert '<div class="card "><div class="k">Verdict</div><div class="v">unranked (CPU)' in html
    flagged = {"gates": {}, "flags": [{"code": "no_own_kernel", "message": "aten only"}]}
    graded.update(device="cuda", result=flagged)
    html = client.get(reverse("transcript", args=[graded_run.pk])).content.decode()
    assert (
        '<div class="card flag"><div class="k">Verdict</div><div class="v">flagged: no_own_kernel'
        in html
    )
    assert "card good" not in html


def test_the_export_is_cached_apart_from_the_page(client, graded_run):
    page = client.get(reverse("transcript", args=[graded_run.pk])).content
    export = client.get(reverse("transcript-export", args=[graded_run.pk])).content
    assert page != export and b'<meta http-equiv="Content-Security-Policy"' in export
    assert len(cached_pages("page")) == 1 and len(cached_pages("export")) == 1
    assert client.get(reverse("transcript-export", args=[graded_run.pk])).content == export


def test_a_run_without_a_trajectory_has_no_transcript_page(client, run):
    assert client.get(reverse("transcript", args=[run.pk])).status_code == 404
    assert client.get(reverse("transcript-export", args=[run.pk])).status_code == 404
    assert client.get("/runs/999999/transcript").status_code == 404


def test_a_hidden_run_has_no_public_transcript(client, graded_run):
    graded_run.hidden = True
    graded_run.save(update_fields=["hidden"])
    assert client.get(reverse("transcript", args=[graded_run.pk])).status_code == 404


def test_stored_transcripts_read_back_equal_to_what_was_parsed():
    from tests.transcripts.render.injection import hostile_transcript
    from transcript_formats.schema import Transcript

    transcript = hostile_transcript()
    document = transcript.to_dict()
    assert Transcript.from_dict(document) == transcript
    document["threads"][0]["turns"][0]["events"][0]["kind"] = "from-a-later-version"
    document["threads"][0]["turns"][0]["events"][0]["new_field"] = 1
    document["added_later"] = True
    read = Transcript.from_dict(document)
    assert read.threads[0].turns[0].events[0].kind == "unknown"
