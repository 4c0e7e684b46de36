"""The compare page: gates, shapes and solutions of two runs lined up, checked against examples
worked out by hand, and the page that shows them."""

from datetime import UTC, datetime
from types import SimpleNamespace

import pytest
from django.core.cache import cache

from arena.models import Run, Submission
from evaluator.models import Evaluation, EvaluationShape
from evaluator.services import evaluation_shape_build
from leaderboard.compare import (
    MAX_DIFF_LINES,
    align_gates,
    align_shapes,
    latest_submission,
    shape_kind,
    solution_diff,
    unseen_set_aside,
)
from tests.leaderboard.factories import grader_result, make_agent, make_run, make_task, shape_row


def row(index, shape, *, seen=True, median_ms=None, eager_ms=None):
    return SimpleNamespace(
        index=index, shape=shape, seen=seen, candidate_median_ms=median_ms, eager_ms=eager_ms
    )


def lined_up(pairs):
    """Each pair as (match, A's index, B's index, ordinal), None where a side is missing."""
    return [
        (p.match, p.a.index if p.a else None, p.b.index if p.b else None, p.ordinal) for p in pairs
    ]


# ---- shapes -------------------------------------------------------------------------------------


def test_seen_shapes_pair_on_the_exact_shape_whatever_the_key_order():
    a = [row(0, {"M": 64, "N": 128}), row(1, {"M": 256, "N": 256})]
    b = [row(0, {"N": 256, "M": 256}), row(1, {"N": 128, "M": 64})]
    assert lined_up(align_shapes(a, b)) == [("exact", 0, 1, None), ("exact", 1, 0, None)]


def test_seen_shapes_on_one_side_only_follow_the_paired_ones():
    a = [row(0, {"N": 1}), row(1, {"N": 2})]
    b = [row(0, {"N": 3}), row(1, {"N": 2})]
    assert lined_up(align_shapes(a, b)) == [
        ("a_only", 0, None, None),
        ("exact", 1, 1, None),
        ("b_only", None, 0, None),
    ]


def test_a_repeated_seen_shape_pairs_once_per_repeat():
    a = [row(0, {"N": 8}), row(1, {"N": 8})]
    b = [row(0, {"N": 8})]
    assert lined_up(align_shapes(a, b)) == [("exact", 0, 0, None), ("a_only", 1, None, None)]


def test_unseen_shapes_pair_by_kind_in_draw_order_not_by_size():
    # Edge, scale-up, scale-down on both sides: sizes differ, the n-th unseen shape pairs.
    a = [
        row(0, {"N": 4096}),
        row(1, {"N": 17}, seen=False),
        row(2, {"N": 65000}, seen=False),
        row(3, {"N": 300}, seen=False),
    ]
    b = [
        row(0, {"N": 4096}),
        row(1, {"N": 9}, seen=False),
        row(2, {"N": 61000}, seen=False),
        row(3, {"N": 700}, seen=False),
    ]
    assert lined_up(align_shapes(a, b)) == [
        ("exact", 0, 0, None),
        ("kind", 1, 1, 1),
        ("kind", 2, 2, 2),
        ("kind", 3, 3, 3),
    ]


def test_unseen_shapes_are_grouped_by_their_dimension_names():
    a = [row(5, {"M": 3, "K": 5}, seen=False), row(6, {"N": 7}, seen=False)]
    b = [row(2, {"N": 9}, seen=False), row(3, {"K": 1, "M": 2}, seen=False)]
    assert lined_up(align_shapes(a, b)) == [("kind", 5, 3, 1), ("kind", 6, 2, 1)]
    assert shape_kind({"M": 3, "K": 5}) == ("K", "M")


def test_unseen_shapes_beyond_the_other_sides_count_stand_alone():
    a = [row(1, {"N": 5}, seen=False), row(2, {"N": 6}, seen=False), row(3, {"N": 7}, seen=False)]
    b = [row(1, {"N": 50}, seen=False)]
    assert lined_up(align_shapes(a, b)) == [
        ("kind", 1, 1, 1),
        ("a_only", 2, None, 2),
        ("a_only", 3, None, 3),
    ]


def test_rows_are_read_in_the_graders_order_whatever_order_they_come_in():
    a = [row(2, {"N": 6}, seen=False), row(0, {"N": 1}), row(1, {"N": 5}, seen=False)]
    b = [row(1, {"N": 50}, seen=False), row(2, {"N": 60}, seen=False), row(0, {"N": 1})]
    assert lined_up(align_shapes(a, b)) == [
        ("exact", 0, 0, None),
        ("kind", 1, 1, 1),
        ("kind", 2, 2, 2),
    ]


def test_the_same_unseen_shapes_pair_and_say_so():
    # Grading the same solution twice draws the same unseen shapes.
    a = [row(0, {"N": 33}, seen=False)]
    b = [row(0, {"N": 33}, seen=False)]
    (pair,) = align_shapes(a, b)
    assert pair.match == "kind" and pair.same_shape and not pair.seen


def test_a_side_without_shapes_leaves_the_other_alone():
    b = [row(0, {"N": 1}), row(1, {"N": 2}, seen=False)]
    assert lined_up(align_shapes([], b)) == [("b_only", None, 0, None), ("b_only", None, 1, 1)]
    assert align_shapes([], []) == []


def test_speedup_per_shape_is_eager_over_the_candidates_median():
    (pair,) = align_shapes(
        [row(0, {"N": 1}, median_ms=0.5, eager_ms=2.0)], [row(0, {"N": 1}, eager_ms=2.0)]
    )
    assert pair.a_speedup == 4.0 and pair.b_speedup is None


# ---- gates --------------------------------------------------------------------------------------


def test_gates_line_up_by_name_in_as_order_then_bs_extras():
    a = {"compile": {"passed": True}, "correctness": {"passed": False}}
    b = {"compile": {"passed": False}, "generalization": {"passed": None}, "junk": "not a gate"}
    rows = align_gates(a, b)
    assert [(g.name, g.a, g.b) for g in rows] == [
        ("compile", {"passed": True}, {"passed": False}),
        ("correctness", {"passed": False}, None),
        ("generalization", None, {"passed": None}),
    ]
    assert align_gates(None, {}) == []


def test_shapes_the_grader_set_aside_are_counted_from_the_generalization_gate():
    gates = {"generalization": {"passed": True, "detail": {"unseen_rejected": 2}}}
    assert unseen_set_aside(gates) == 2
    assert unseen_set_aside({"generalization": {"detail": {"unseen_rejected": True}}}) == 0
    assert unseen_set_aside({}) == 0


# ---- solutions ----------------------------------------------------------------------------------


def test_diff_lines_are_tagged_by_kind():
    a = "import torch\nx = 1\n-- y\nkeep\n"
    b = "import torch\nx = 2\nkeep\nnew\n"
    diff = solution_diff(a, b, a_label="A", b_label="B")
    assert [(line.kind, line.text) for line in diff.lines] == [
        ("file", "--- A"),
        ("file", "+++ B"),
        ("hunk", "@@ -1,4 +1,4 @@"),
        ("ctx", " import torch"),
        ("del", "-x = 1"),
        ("del", "--- y"),  # a removed line that looks like a header is still a removal
        ("add", "+x = 2"),
        ("ctx", " keep"),
        ("add", "+new"),
    ]
    assert (diff.added, diff.removed, diff.identical) == (2, 2, False)


def test_identical_solutions_have_no_diff():
    diff = solution_diff("x = 1\n", "x = 1\n", a_label="A", b_label="B")
    assert diff.identical and diff.lines == []


def test_solutions_past_the_cap_are_not_diffed():
    long = "x\n" * (MAX_DIFF_LINES + 1)
    diff = solution_diff(long, "y\n", a_label="A", b_label="B")
    assert diff.too_long and diff.lines == [] and not diff.identical


def test_latest_submission_breaks_a_tie_in_time_by_id():
    at = datetime(2025, 1, 1, tzinfo=UTC)
    older = SimpleNamespace(pk=9, created_at=datetime(2024, 1, 1, tzinfo=UTC))
    first, second = SimpleNamespace(pk=3, created_at=at), SimpleNamespace(pk=4, created_at=at)
    assert latest_submission([first, older, second]) is second
    assert latest_submission([]) is None


# ---- the page -----------------------------------------------------------------------------------

HOSTILE = '# </pre><script>alert("x")</script>\nclass ModelNew: pass\n'


@pytest.fixture
def pair(db):
    cache.clear()
    task = make_task("gemm")
    task.manifest = {**task.manifest, "visible_shapes": [{"N": 1024}, {"N": 4096}]}
    task.save()
    fast = make_run(make_agent("fast"), task, speedup=2.0, unseen=(2, 2), code="x = 1\ny = 2\n")
    slow = make_run(make_agent("slow"), task, outcome="incorrect", code=HOSTILE)
    return fast, slow


def html(client, url: str, status: int = 200) -> str:
    response = client.get(url)
    assert response.status_code == status, (url, response.status_code)
    return response.content.decode()


def add_evaluation(run: Run, *, code: str, unseen_shapes=()) -> Evaluation:
    result = grader_result(speedup=1.5, shapes=run.task.manifest["visible_shapes"])
    result["per_shape"] += [shape_row(s, seen=False) for s in unseen_shapes]
    evaluation = Evaluation.objects.create(
        task=run.task,
        solution_code=code,
        solution_sha256="f" * 64,
        status="passed",
        ranked=True,
        reward=0.5,
        result=result,
    )
    EvaluationShape.objects.bulk_create(
        evaluation_shape_build(evaluation=evaluation, index=i, row=r)
        for i, r in enumerate(result["per_shape"])
    )
    Submission.objects.create(run=run, evaluation=evaluation)
    return evaluation


@pytest.mark.django_db
def test_page_lines_up_gates_shapes_and_escapes_the_diff(client, pair):
    fast, slow = pair
    page = html(client, f"/compare/?a={fast.pk}&b={slow.pk}")
    assert f"Run #{fast.pk} versus run #{slow.pk}" in page
    assert page.count('class="shape-row') == 4  # two seen shapes and A's two unseen ones
    assert page.count('data-match="exact"') == 2 and page.count('data-match="a_only"') == 2
    assert page.count('class="correct side-a') == page.count('class="correct side-b') == 4
    assert page.count("<tr data-gate=") == 4
    assert "values differ" in page  # B's failing shapes say why
    assert '<script>alert("x")' not in page
    assert '<span class="diff-line diff-add">+# &lt;/pre&gt;&lt;script&gt;' in page
    assert '<span class="diff-line diff-del">-x = 1</span>' in page
    assert f'href="/runs/{fast.pk}/"' in page and 'href="#solution-b"' in page
    assert 'id="solution-a"' in page and 'id="solution-b"' in page


@pytest.mark.django_db
def test_unseen_rows_pair_by_kind_and_say_so(client, pair):
    fast, _ = pair
    other = make_run(make_agent("other"), fast.task, speedup=1.1, unseen=(1, 1))
    Evaluation.objects.filter(submission__run=other).update(solution_code="z = 3\n")
    page = html(client, f"/compare/?a={fast.pk}&b={other.pk}")
    # Both drew {"N": 1000} first (the factory's shapes), so that one is the very same shape.
    assert page.count('data-match="kind"') == 1 and "same shape" in page
    assert page.count('data-match="a_only"') == 1
    fast_unseen = [{"N": 77}, {"N": 9000}]
    other_unseen = [{"N": 5}, {"N": 8000}]
    ea = add_evaluation(fast, code="a\n", unseen_shapes=fast_unseen)
    eb = add_evaluation(other, code="b\n", unseen_shapes=other_unseen)
    page = html(client, f"/compare/?a={fast.pk}&b={other.pk}")
    assert page.count("matched by kind") == 2
    assert f"#{ea.pk}, the latest of 2 submissions" in page
    assert f"#{eb.pk}, the latest of 2 submissions" in page


@pytest.mark.django_db
def test_an_earlier_evaluation_can_be_chosen(client, pair):
    fast, slow = pair
    first = fast.submissions.get().evaluation
    latest = add_evaluation(fast, code="later\n")
    page = html(client, f"/compare/?a={fast.pk}&b={slow.pk}")
    assert f"#{latest.pk}, the latest of 2 submissions" in page
    assert f"?a={fast.pk}&amp;b={slow.pk}&amp;ea={first.pk}" in page
    page = html(client, f"/compare/?a={fast.pk}&b={slow.pk}&ea={first.pk}")
    assert f"#{first.pk}, not the latest of 2 submissions" in page
    assert f"?a={fast.pk}&amp;b={slow.pk}&amp;ea={latest.pk}" in page
    html(client, f"/compare/?a={fast.pk}&b={slow.pk}&eb={first.pk}", 404)  # not B's
    assert "ea: give an evaluation id" in html(client, "/compare/?a=1&b=2&ea=x", 400)


@pytest.mark.django_db
def test_a_run_against_itself_has_identical_solutions(client, pair):
    fast, _ = pair
    page = html(client, f"/compare/?a={fast.pk}&b={fast.pk}")
    assert "The two solutions are identical." in page and "Both sides are the same run." in page
    assert page.count('data-match="exact"') == 2 and page.count('data-match="kind"') == 2


@pytest.mark.django_db
def test_transcript_links_only_for_runs_with_a_transcript(client, pair):
    from transcripts.models import Trajectory

    fast, slow = pair
    Run.objects.filter(pk=fast.pk).update(trajectory=Trajectory.objects.create(format="x"))
    page = html(client, f"/compare/?a={fast.pk}&b={slow.pk}")
    assert page.count('class="transcript-link"') == 1
    assert f'href="/runs/{fast.pk}/transcript"' in page and "no transcript" in page


@pytest.mark.django_db
def test_a_run_without_a_submission_still_compares(client, pair):
    fast, _ = pair
    bare = Run.objects.create(agent=fast.agent, task=fast.task, status=Run.Status.FAILED)
    page = html(client, f"/compare/?a={fast.pk}&b={bare.pk}")
    assert "no submission" in page and "nothing to diff" in page
    assert page.count('data-match="a_only"') == 4


@pytest.mark.django_db
def test_bad_ids_keep_their_answers(client, pair):
    fast, _ = pair
    assert "b: give a run id" in html(client, "/compare/?a=1&b=<x>", 400)
    assert 'id="choose-runs"' in html(client, "/compare/?b=1")  # one run: choose the other
    html(client, f"/compare/?a={fast.pk}&b=999999", 404)
    Run.objects.filter(pk=fast.pk).update(hidden=True)
    html(client, f"/compare/?a={fast.pk}&b={fast.pk}", 404)
