"""The SQL aggregation agrees with the hand-computed scores; filters, hiding and the cache."""

import math

import pytest
from django.core.cache import cache

from arena.lifecycle import submissions_recover
from arena.models import RunScore
from arena.run_scores import leaderboard_invalidate, leaderboard_rebuild, leaderboard_record
from leaderboard.selectors import (
    ScoreFilters,
    agent_boards,
    agent_score_list,
    agent_task_rows,
    cpu_unranked_rows,
    head_to_head_duels,
    leaderboard_filter_options,
    leaderboard_rows,
    matrix_cells,
    run_list_public,
    runs_attach_scores,
    speedup_histogram,
)
from tests.leaderboard.factories import H200, make_agent, make_run, make_task

H100 = "NVIDIA H100 80GB HBM3"

pytestmark = pytest.mark.django_db


@pytest.fixture(autouse=True)
def _fresh_cache():
    cache.clear()


@pytest.fixture
def board():
    """The five runs of test_scores.RECORDS, on five tasks, plus a second agent with a run on
    the same GPU (the default board, with most gradings) and one on another GPU."""
    alpha, beta = make_agent("alpha"), make_agent("beta")
    tasks = [make_task(f"t{i}") for i in range(1, 5)] + [make_task("t5", category="hard")]
    make_run(alpha, tasks[0], speedup=2.0, unseen=(5, 5), tokens=1000, cost_usd=0.5)
    make_run(alpha, tasks[1], speedup=0.5, unseen=(3, 5), tokens=3000, cost_usd=1.5)
    make_run(alpha, tasks[2], outcome="no_compile", tokens=2000)
    make_run(alpha, tasks[3], outcome="incorrect", tokens=2000, cost_usd=1.0)
    make_run(alpha, tasks[4], speedup=10.0, flags=("tampering",), tokens=2000, cost_usd=2.0)
    make_run(beta, tasks[0], speedup=3.0)
    make_run(beta, tasks[1], speedup=1.2, gpu=H100)
    return {"alpha": alpha, "beta": beta, "tasks": tasks}


def test_a_grader_error_counts_in_no_rate_and_shows_as_a_grader_error(board):
    alpha, task = board["alpha"], make_task("t6")
    make_run(alpha, task, outcome="error")
    rows = {r.agent.slug: r.score for r in leaderboard_rows(filters=ScoreFilters())}
    assert rows["alpha"].runs == 5
    assert rows["alpha"].correctness_rate == pytest.approx(2 / 5)
    cells = matrix_cells(filters=ScoreFilters())
    row = next(r for r in cells["grid"] if r["agent"] == alpha)
    column = [t.slug for t in cells["tasks"]].index(task.slug)
    assert row["cells"][column]["verdict"] == "grader_error"


def test_sql_scores_match_the_hand_computed_example(board):
    rows = {r.agent.slug: r.score for r in leaderboard_rows(filters=ScoreFilters())}
    a = rows["alpha"]
    assert a.runs == 5 and a.tasks_attempted == 5
    assert a.compile_rate == pytest.approx(4 / 5)
    assert a.correctness_rate == pytest.approx(2 / 5)
    assert a.fast_p == pytest.approx({0.0: 0.4, 1.0: 0.2, 1.5: 0.2, 2.0: 0.0})
    assert a.speedup_geomean_correct == pytest.approx(1.0)
    # 2x, 0.5x and three failures at the 0.01x floor: (2 * 0.5 * 0.01 ** 3) ** (1 / 5).
    assert a.speedup_geomean_all == pytest.approx(10**-1.2)
    # Roofline: the factory's fraction is achieved GB/s over 4800; 2x and 0.5x of a 1 ms eager,
    # the three other runs counting 0.
    gbps = [8 * (1 << 20) / (ms / 1e3) / 1e9 / 4800 for ms in (0.5, 2.0)]
    assert a.roofline_mean == pytest.approx(sum(gbps) / 5)
    assert a.generalization_pass_rate == pytest.approx(1 / 5)  # t1: 5 of 5 unseen; t2: 3 of 5
    assert a.flagged == 1 and a.overfit_count == 0
    assert a.tokens_per_run == pytest.approx(2000)
    assert a.cost_per_run_usd == pytest.approx(1.25)
    assert a.fast_1_repeats == pytest.approx((0.2, 0.0))
    assert a.flag_counts == {"tampering": 1} and a.flagged_share == pytest.approx(1 / 5)
    assert a.preliminary  # 5 tasks, under PRELIMINARY_BELOW_TASKS
    assert rows["beta"].fast_p[1.0] == 1.0 and rows["beta"].runs == 1  # its H100 run is apart


def test_ranking_sorts_and_filters(board):
    by_fast_1 = leaderboard_rows(filters=ScoreFilters())
    assert [r.agent.slug for r in by_fast_1] == ["beta", "alpha"]
    by_tokens = leaderboard_rows(filters=ScoreFilters(), sort="tokens")
    assert [r.agent.slug for r in by_tokens] == ["beta", "alpha"]  # 0 tokens is cheapest
    by_runs = leaderboard_rows(filters=ScoreFilters(), sort="runs")
    assert [r.agent.slug for r in by_runs] == ["alpha", "beta"]
    hard = leaderboard_rows(filters=ScoreFilters(category="hard"))
    assert [(r.agent.slug, r.score.runs, r.score.flagged) for r in hard] == [("alpha", 1, 1)]
    h100 = leaderboard_rows(filters=ScoreFilters(gpu=H100))
    assert [(r.agent.slug, r.gpu, r.score.runs) for r in h100] == [("beta", H100, 1)]
    options = leaderboard_filter_options()
    assert options["gpus"] == {H200: 6, H100: 1}  # the default board first: most gradings
    assert options["suite_versions"] and all(
        v.startswith("core@") for v in options["suite_versions"]
    )
    only = ScoreFilters(suite_version=options["suite_versions"][0])
    assert len(leaderboard_rows(filters=only)) == 2
    assert leaderboard_rows(filters=ScoreFilters(suite_version="core@nope")) == []
    assert agent_score_list(category="cuda2cuda") == []


def test_ties_go_to_correctness_before_the_name(board):
    # Neither is faster than eager: fast_1 ties at 0, and "aaa-broken" sorts first by name.
    broken, slow = make_agent("aaa-broken"), make_agent("zzz-slow")
    tasks = board["tasks"]
    make_run(broken, tasks[0], outcome="incorrect")
    make_run(broken, tasks[1], outcome="no_compile")
    make_run(slow, tasks[0], speedup=0.9)
    make_run(slow, tasks[1], outcome="incorrect")
    ranking = [r.agent.slug for r in leaderboard_rows(filters=ScoreFilters())]
    assert ranking.index("zzz-slow") < ranking.index("aaa-broken")


def test_suite_version_changes_with_the_catalogue_and_marks_superseded_results(board):
    before = RunScore.objects.get(run__agent=board["beta"], gpu=H200).suite_version
    task = board["tasks"][0]
    task.version_hash = "f" * 64
    task.save()
    again = make_run(board["beta"], task, speedup=1.5)
    after = RunScore.objects.get(run=again).suite_version
    assert after.startswith("core@") and after != before
    old = make_run(board["beta"], task, speedup=1.5)
    old.submissions.get().evaluation.__class__.objects.filter(submission__run=old).update(
        task_version="0" * 64
    )
    RunScore.objects.filter(run=old).delete()
    leaderboard_rebuild()
    assert RunScore.objects.get(run=old).suite_version == "core@superseded"


def test_hidden_runs_leave_the_scores_once_invalidated(board):
    assert len(leaderboard_rows(filters=ScoreFilters())) == 2
    board["beta"].runs.update(hidden=True)
    leaderboard_invalidate()
    assert [r.agent.slug for r in leaderboard_rows(filters=ScoreFilters())] == ["alpha"]
    assert not run_list_public(agent="beta").exists()


def test_recording_a_finished_evaluation_refreshes_the_cached_ranking(board):
    assert len(leaderboard_rows(filters=ScoreFilters())) == 2
    gamma = make_agent("gamma")
    run = make_run(gamma, board["tasks"][0], speedup=5.0)
    # make_run records through the same service the write side calls.
    assert RunScore.objects.filter(run=run).exists()
    ranking = leaderboard_rows(filters=ScoreFilters(), sort="speedup")
    assert ranking[0].agent.slug == "gamma"
    submission = run.submissions.get()
    assert leaderboard_record(submission_id=submission.pk).repeat == 1
    assert RunScore.objects.filter(run=run).count() == 1  # idempotent


def test_unrecorded_evaluations_are_scored_by_the_next_sweep_never_by_a_read(board):
    RunScore.objects.all().delete()
    leaderboard_invalidate()
    assert leaderboard_rows(filters=ScoreFilters()) == []
    assert RunScore.objects.count() == 0  # the read side only reads
    submissions_recover()
    assert RunScore.objects.count() == 7
    leaderboard_invalidate()
    assert len(leaderboard_rows(filters=ScoreFilters())) == 2


def test_repeats_are_numbered_per_agent_and_task(board):
    task = board["tasks"][0]
    second = make_run(board["beta"], task, speedup=1.0)
    third = make_run(board["beta"], task, outcome="incorrect")
    assert RunScore.objects.get(run=second).repeat == 2
    assert RunScore.objects.get(run=third).repeat == 3
    # A rebuild numbers them the same way, after what is already scored.
    RunScore.objects.filter(run__in=[second, third]).delete()
    assert leaderboard_rebuild() == 2
    assert RunScore.objects.get(run=second).repeat == 2
    assert RunScore.objects.get(run=third).repeat == 3
    RunScore.objects.all().delete()
    assert leaderboard_rebuild() == 9
    assert sorted(RunScore.objects.filter(task__slug="t1").values_list("repeat", flat=True)) == [
        1,
        1,
        2,
        3,
    ]
    beta = {r.agent.slug: r.score for r in leaderboard_rows(filters=ScoreFilters())}["beta"]
    # fast_1 per repeat: 1, 0 (1.0x is not faster), 0 -> mean 1/3, sample sd sqrt(1/3).
    assert beta.repeats == 3
    assert beta.fast_1_repeats == pytest.approx((1 / 3, math.sqrt(1 / 3)))
    rows = {r["task__slug"]: r for r in agent_task_rows(agent=board["beta"])}
    assert rows["t1"]["n_runs"] == 3 and rows["t1"]["best_speedup"] == pytest.approx(3.0)
    assert rows["t1"]["mean_speedup"] == pytest.approx(2.0)
    assert rows["t1"]["spread_speedup"] == pytest.approx(math.sqrt(2.0))


def test_matrix_cells_carry_the_verdict_the_best_speedup_and_the_run(board):
    matrix = matrix_cells(filters=ScoreFilters())
    # Grouped by category (hard before torch2triton), then by slug.
    assert [t.slug for t in matrix["tasks"]] == ["t5", "t1", "t2", "t3", "t4"]
    assert [row["agent"].slug for row in matrix["grid"]] == ["beta", "alpha"]  # board order
    alpha = next(row for row in matrix["grid"] if row["agent"].slug == "alpha")
    verdicts = [cell["verdict"] for cell in alpha["cells"]]
    assert verdicts == ["flagged", "ranked", "ranked", "failed", "failed"]
    assert [cell["best_speedup"] for cell in alpha["cells"]] == [None, 2.0, 0.5, None, None]
    t1_run = board["alpha"].runs.get(task__slug="t1")
    assert alpha["cells"][1]["run_id"] == t1_run.pk
    beta = next(row for row in matrix["grid"] if row["agent"].slug == "beta")
    assert beta["cells"][0] is None and beta["cells"][1]["verdict"] == "ranked"


def test_a_matrix_cell_opens_its_fastest_ranked_run(board):
    task = board["tasks"][0]
    faster = make_run(board["alpha"], task, speedup=4.0)
    make_run(board["alpha"], task, outcome="incorrect")
    cells = matrix_cells(filters=ScoreFilters())
    alpha = next(row for row in cells["grid"] if row["agent"].slug == "alpha")
    assert alpha["cells"][1]["run_id"] == faster.pk
    assert alpha["cells"][1]["best_speedup"] == 4.0


def test_speedup_histogram_bins_ranked_runs_in_powers_of_two(board):
    bins = speedup_histogram(filters=ScoreFilters())
    assert {(b["agent"], b["log2_low"], b["n"]) for b in bins} == {
        ("alpha", 1.0, 1),  # 2x
        ("alpha", -1.0, 1),  # 0.5x
        ("beta", 1.5, 1),  # 3x: log2 3 = 1.58; its 1.2x is on another board
    }


def test_run_list_filters(board):
    assert run_list_public(agent="alpha").count() == 5
    assert run_list_public(category="hard").count() == 1
    assert run_list_public(gpu=H100).count() == 1
    assert run_list_public(status="done", task="t1").count() == 2
    [first] = runs_attach_scores(list(run_list_public(task="t1", agent="alpha")))
    assert first.score_ranked is True and first.score_speedup == pytest.approx(2.0)
    [ungraded] = runs_attach_scores([make_run(board["beta"], board["tasks"][1], status="queued")])
    assert ungraded.score_status is None


def test_ranking_costs_a_fixed_number_of_queries(board, django_assert_max_num_queries):
    for i in range(20):
        agent = make_agent(f"extra-{i}")
        make_run(agent, board["tasks"][i % 5], speedup=1.0 + i / 10)
    cache.clear()
    # generation, boards, scores, repeats, task groups, runs, flags, best runs, transcripts,
    # agents
    with django_assert_max_num_queries(12):
        rows = leaderboard_rows(filters=ScoreFilters())
    assert len(rows) == 22
    with django_assert_max_num_queries(1):  # cached: the generation only
        leaderboard_rows(filters=ScoreFilters(), sort="cost")


def test_cpu_gradings_are_never_ranked(board):
    """A correct CPU grading of a new agent stays off every board, listed apart as unranked."""
    newcomer = make_agent("newcomer")
    run = make_run(newcomer, board["tasks"][0], speedup=None, gpu="cpu")
    score = RunScore.objects.get(run=run)
    assert score.gpu == "cpu" and score.ranked is False
    boards = [ScoreFilters(), ScoreFilters(gpu="cpu"), ScoreFilters(gpu=H100)]
    for filters in boards:
        assert "newcomer" not in [r.agent.slug for r in leaderboard_rows(filters=filters)]
    # gpu=cpu is not a board: it falls back to the default one.
    assert {r.gpu for r in leaderboard_rows(filters=ScoreFilters(gpu="cpu"))} == {H200}
    assert "cpu" not in leaderboard_filter_options()["gpus"]
    [unranked] = cpu_unranked_rows(filters=ScoreFilters())
    assert unranked["agent__slug"] == "newcomer" and unranked["n_correct"] == 1
    matrix = matrix_cells(filters=ScoreFilters())
    assert "newcomer" not in [row["agent"].slug for row in matrix["grid"]]
    assert run_list_public(status="unranked").get() == run


def test_ties_follow_the_stated_tie_breakers_then_the_name(board):
    """Sorted by fast_1, which ties at 0: the speedup breaks it, then correctness, the name."""
    tasks = board["tasks"]
    slow, slower = make_agent("b-slow", name="Bee"), make_agent("a-slower", name="Ay")
    twin = make_agent("c-twin", name="Cee")
    for agent, speedup in ((slow, 0.9), (slower, 0.5), (twin, 0.9)):
        make_run(agent, tasks[0], speedup=speedup)
        make_run(agent, tasks[1], outcome="incorrect")
    broken = make_agent("0-broken", name="Aardvark")
    make_run(broken, tasks[0], outcome="incorrect")
    make_run(broken, tasks[1], outcome="no_compile")
    ranking = [r.agent.slug for r in leaderboard_rows(filters=ScoreFilters(), sort="fast_1")]
    # beta (fast_1 1.0) and alpha (0.2) lead; then speedup 0.9 and a failure (Bee before Cee by
    # name) before 0.5; the broken agent last although its name sorts first.
    assert ranking == ["beta", "alpha", "b-slow", "c-twin", "a-slower", "0-broken"]
    # By the default key, the geometric-mean speedup, alpha's three failures put it under
    # the three agents with one correct run of two: (2 * 0.5 * 0.01^3)^(1/5) = 0.063.
    by_speedup = [r.agent.slug for r in leaderboard_rows(filters=ScoreFilters())]
    assert by_speedup == ["beta", "b-slow", "c-twin", "a-slower", "alpha", "0-broken"]


def test_rows_carry_rank_ranges_where_their_intervals_overlap(board):
    tasks = board["tasks"]
    twin = make_agent("twin")
    for task in tasks[:4]:
        make_run(twin, task, outcome="incorrect")
    make_run(twin, tasks[4], outcome="no_compile")
    rows = leaderboard_rows(filters=ScoreFilters())
    places = {r.agent.slug: (r.rank_best, r.rank_worst, r.rank_label) for r in rows}
    # beta's one 3x run stands alone above; alpha's interval (0.01x to 0.3x or so) reaches
    # down to twin's, which is the floor alone: alpha and twin share places 2-3.
    assert places["beta"] == (1, 1, "1")
    assert places["alpha"][:2] == (2, 3) and places["twin"][:2] == (2, 3)
    assert places["twin"][2] == "2\N{EN DASH}3"
    twin_row = next(r for r in rows if r.agent.slug == "twin")
    assert twin_row.best_run_id is None  # no ranked run: no best run
    assert twin_row.score.ranked_runs == 0 and twin_row.score.unranked_runs == 5


def test_run_list_filters_by_suite_verdict_flag_and_transcript(board):
    alpha = board["alpha"]
    assert run_list_public(flag="tampering").get().task.slug == "t5"
    assert run_list_public(flag="tamper").count() == 0  # a code, not a substring
    assert run_list_public(status="flagged").count() == 1
    assert run_list_public(status="passed", agent="alpha").count() == 2  # an older name
    assert run_list_public(verdict="ranked", agent="alpha").count() == 2
    assert run_list_public(verdict="failed", agent="alpha").count() == 2
    assert run_list_public(status="failed", agent="alpha").count() == 0  # a run's status
    assert run_list_public(verdict="flagged").count() == 1
    assert run_list_public(suite="core").count() == 7
    assert run_list_public(suite="other").count() == 0
    assert run_list_public(transcript="no").count() == 7
    assert run_list_public(transcript="yes").count() == 0
    boards = agent_boards(agent=board["beta"])
    assert [(b["gpu"], b["place"], b["of"]) for b in boards] in (
        [(H200, 1, 2), (H100, 1, 1)],
        [(H100, 1, 1), (H200, 1, 2)],
    )
    [alpha_board] = agent_boards(agent=alpha)
    assert alpha_board["row"].best_run_id == alpha.runs.get(task__slug="t1").pk


def test_intervals_of_a_task_run_many_times_come_from_its_sql_summary(board):
    """40 runs of one task (over EXACT_REPEATS): SQL sums them up, and the interval is the
    normal law's: 20 of 40 fast, sd sqrt(0.25 / 40) = 0.079, so about 0.5 -+ 0.155."""
    many = make_agent("many")
    for i in range(40):
        make_run(many, board["tasks"][0], speedup=2.0 if i % 2 else 0.5)
    rows = {r.agent.slug: r.score for r in leaderboard_rows(filters=ScoreFilters())}
    low, high = rows["many"].intervals["fast_1"]
    assert low == pytest.approx(0.345, abs=0.03) and high == pytest.approx(0.655, abs=0.03)
    # The speedup's: ln 2 and ln 0.5 half each, mean 0 (1x), sd ln 2 / sqrt(40) = 0.11.
    low, high = rows["many"].intervals["speedup"]
    assert low == pytest.approx(math.exp(-0.215), abs=0.04)
    assert high == pytest.approx(math.exp(0.215), abs=0.04)
    # alpha's five tasks, one run each, still draw every run: fast_1 is 1 of 5.
    assert rows["alpha"].intervals["fast_1"] == pytest.approx((0.0, 0.6))


def test_a_suite_selects_every_version_of_it(board):
    other = make_task("x1", suite="kernelbench-hard")
    make_run(make_agent("hard-one"), other, speedup=1.5)
    by_suite = {
        name: sorted(
            r.agent.slug for r in leaderboard_rows(filters=ScoreFilters(suite_version=name))
        )
        for name in ("core", "kernelbench-hard", "nothing")
    }
    assert by_suite == {"core": ["alpha", "beta"], "kernelbench-hard": ["hard-one"], "nothing": []}
    options = leaderboard_filter_options()
    assert list(options["suites"]) == ["core", "kernelbench-hard"]
    assert all(v.startswith("kernelbench-hard@") for v in options["suites"]["kernelbench-hard"])


def test_head_to_head_duels_pair_two_agents_tasks_on_one_board(board):
    alpha, beta = board["alpha"], board["beta"]
    extra = make_run(beta, board["tasks"][0], speedup=2.5)  # beta's t1: 3x and 2.5x
    duels = {d.task: d for d in head_to_head_duels(a=alpha, b=beta, filters=ScoreFilters())}
    assert sorted(duels) == ["t1", "t2", "t3", "t4", "t5"]  # beta's t2 is on the H100 board
    t1 = duels["t1"]
    assert (t1.a.best, t1.b.best, t1.b.slowest, t1.b.ranked) == (2.0, 3.0, 2.5, 2)
    assert t1.outcome == "b" and t1.b.best_run_id != extra.pk
    assert duels["t2"].b is None and duels["t2"].outcome is None
    assert (duels["t5"].a.best, duels["t5"].a.flagged) == (None, 1)  # flagged, not ranked
    assert duels["t3"].a.flagged == 0 and duels["t3"].a.runs == 1
