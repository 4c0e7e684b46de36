import hashlib
import logging
import threading
from collections.abc import Callable
from dataclasses import replace
from datetime import datetime, timedelta
from functools import partial

from celery.canvas import Signature
from django.conf import settings
from django.contrib.auth.base_user import AbstractBaseUser
from django.db import transaction
from django.db.models import F, Q
from django.utils import timezone

from evaluator.heartbeat import Heartbeat
from evaluator.models import Evaluation, EvaluationShape
from evaluator.selectors import ACTIVE
from grader import EvalResult, EvaluateOptions, EvaluationStopped, TaskError, evaluate
from grader.builds import FAILED
from grader.evaluate import (
    build_failure_result,
    build_solution,
    private_scratch,
    resolve_device,
)
from sandboxes.backends import SandboxError
from tasks.models import Task
from tasks.selectors import catalog_dirs, task_folder

logger = logging.getLogger(__name__)


def evaluation_create(
    *,
    task: Task,
    solution_name: str,
    solution_code: str,
    submitted_by: AbstractBaseUser | None = None,
) -> Evaluation:
    """A queued Evaluation; the caller enqueues it once its transaction commits."""
    return Evaluation.objects.create(
        task=task,
        task_version=task.version_hash,
        solution_name=solution_name,
        solution_code=solution_code,
        solution_sha256=hashlib.sha256(solution_code.encode()).hexdigest(),
        submitted_by=submitted_by,
    )


def evaluation_claim(*, evaluation_id: int) -> int | None:
    """Take the job: queued, or running under a lease that ran out (its worker died). The
    claim's attempt number: the fencing token that the attempt's heartbeats and its verdict must
    still find on the row. None where the evaluation is finished or held under a live lease."""
    now = timezone.now()
    claimable = Q(status=Evaluation.Status.QUEUED) | Q(
        status=Evaluation.Status.RUNNING, lease_expires_at__lt=now
    )
    # One transaction: the attempt read back is the one this update wrote.
    with transaction.atomic():
        claimed = Evaluation.objects.filter(claimable, pk=evaluation_id).update(
            status=Evaluation.Status.RUNNING,
            started_at=now,
            lease_expires_at=_lease_end(),
            attempts=F("attempts") + 1,
        )
        if claimed != 1:
            return None
        return Evaluation.objects.values_list("attempts", flat=True).get(pk=evaluation_id)


def evaluation_lease_renew(*, evaluation_id: int, attempt: int) -> bool:
    """A heartbeat: extend the lease while `attempt` still holds the evaluation. False once
    another attempt has claimed it (or it finished): that attempt's grading is over."""
    held = Evaluation.objects.filter(
        pk=evaluation_id, attempts=attempt, status=Evaluation.Status.RUNNING
    )
    return held.update(lease_expires_at=_lease_end()) == 1


def _lease_end() -> datetime:
    return timezone.now() + timedelta(seconds=settings.ARENA_GRADER_LEASE_S)


def evaluation_run(
    *, evaluation_id: int, then: Callable[[], object] | None = None
) -> Evaluation | None:
    """Claim one evaluation, grade it under a lease that a heartbeat renews, and store the
    verdict, then `then` in the verdict's own transaction. None where there is nothing to
    store: the evaluation is finished or held by another worker, or another attempt took it
    over while this one graded (its grading stops at the next heartbeat)."""
    attempt = evaluation_claim(evaluation_id=evaluation_id)
    if attempt is None:
        logger.info("evaluation %s is finished or held by another worker", evaluation_id)
        return None
    evaluation = Evaluation.objects.select_related("task").get(pk=evaluation_id)
    renew = partial(evaluation_lease_renew, evaluation_id=evaluation_id, attempt=attempt)
    name = f"evaluation {evaluation_id} attempt {attempt}"
    beat = Heartbeat(renew=renew, interval_s=settings.ARENA_GRADER_HEARTBEAT_S, name=name)
    try:
        # The beats end before the verdict is stored: the lease has most of its time left.
        with beat:
            result = _grade(evaluation, stop=beat.lost)
    except EvaluationStopped:
        logger.warning("%s: taken over by another attempt; grading stopped", name)
        return None
    except (TaskError, OSError, ValueError) as exc:
        message = f"the grader could not run: {exc}"
        return _evaluation_fail(evaluation=evaluation, attempt=attempt, message=message, then=then)
    return evaluation_store_result(
        evaluation=evaluation, data=result.to_dict(), attempt=attempt, then=then
    )


def grader_options() -> EvaluateOptions:
    """The grader's options as this deployment's settings give them."""
    return EvaluateOptions(
        timeout_s=settings.ARENA_GRADER_TIMEOUT_S,
        sandbox=settings.ARENA_GRADER_SANDBOX,
        hidden_seed=settings.ARENA_HIDDEN_SEED,
        scratch_dir=settings.ARENA_SCRATCH_DIR,
        sandbox_image=settings.ARENA_SANDBOX_IMAGE,
        baseline_cache=str(settings.ARENA_BASELINE_CACHE),
        probe_cache=str(settings.ARENA_PROBE_CACHE),
        judge_kernel_cache=str(settings.ARENA_JUDGE_KERNEL_CACHE),
        catalogs=tuple(str(root) for root in catalog_dirs()),
        allow_unisolated=settings.ARENA_UNSAFE_RUN_UNISOLATED,
        build_cache=str(settings.ARENA_BUILD_CACHE),
        prepared=settings.ARENA_GRADER_PREPARED
        and resolve_device(settings.ARENA_GRADER_DEVICE) == "cuda",
        prepared_ahead=settings.ARENA_GRADER_PREPARED_AHEAD,
        warm_judge=settings.ARENA_GRADER_WARM_JUDGE
        and resolve_device(settings.ARENA_GRADER_DEVICE) == "cuda",
        judge_cache_bytes=settings.ARENA_GRADER_JUDGE_CACHE_MB * 1024**2,
        evaluations_per_gpu=settings.ARENA_GRADER_EVALUATIONS_PER_GPU,
        candidate_rounds=settings.ARENA_GRADER_CANDIDATE_ROUNDS,
        compile_threads=settings.ARENA_GRADER_COMPILE_THREADS,
        fork_server=settings.ARENA_GRADER_FORK_SERVER,
    )


def evaluation_build(*, evaluation_id: int) -> bool:
    """The build stage of a queued evaluation (grader/builds.py), on a CPU worker:
    its extensions compiled into the build cache for the GPU stage. True when the evaluation
    is finished: a compile failure graded here, without a GPU, or one finished before. A
    failure of the build stage itself decides nothing; the GPU stage grades as it always could.
    """
    evaluation = Evaluation.objects.select_related("task").filter(pk=evaluation_id).first()
    if evaluation is None or evaluation.is_finished:
        return True
    options = grader_options()
    device = resolve_device(settings.ARENA_GRADER_DEVICE)
    arch = "" if device == "cpu" else settings.ARENA_BUILD_CUDA_ARCH
    with private_scratch("arena-solution") as tmp:
        solution = tmp / "solution.py"
        solution.write_text(evaluation.solution_code, encoding="utf-8")
        try:
            folder = task_folder(task=evaluation.task)
            report = build_solution(folder, solution, arch=arch, options=options)
            if report.status != FAILED:
                logger.info(
                    "evaluation %s: build %s (%s)", evaluation_id, report.status, report.reason
                )
                return False
            result = build_failure_result(folder, solution, device, report)
        except (TaskError, SandboxError, OSError, ValueError) as exc:
            logger.warning("evaluation %s: the build stage could not run: %s", evaluation_id, exc)
            return False
    attempt = evaluation_claim(evaluation_id=evaluation_id)
    if attempt is None:
        return False  # taken by a GPU worker meanwhile; it grades the solution itself
    stored = evaluation_store_result(evaluation=evaluation, data=result.to_dict(), attempt=attempt)
    return stored is not None


def _grade(evaluation: Evaluation, *, stop: threading.Event) -> EvalResult:
    options = replace(grader_options(), stop=stop)
    with private_scratch("arena-solution") as tmp:
        solution = tmp / "solution.py"
        solution.write_text(evaluation.solution_code, encoding="utf-8")
        folder = task_folder(task=evaluation.task)
        return evaluate(folder, solution, settings.ARENA_GRADER_DEVICE, options)


def evaluation_store_result(
    *, evaluation: Evaluation, data: dict, attempt: int, then: Callable[[], object] | None = None
) -> Evaluation | None:
    """Store a verdict (EvalResult.to_dict()) as attempt `attempt` of the evaluation: a claim's
    (evaluation_claim), or 0 for one recorded on a GPU host into a row never claimed. Fenced:
    written, with its per-shape rows and then `then`, all in one transaction, only while the row
    is unfinished and still that attempt's; a verdict of an attempt that was taken over is
    refused, logged, and writes nothing. None when refused."""
    fields = {
        "status": data["status"],
        "device": data["device"],
        "reward": data["reward"],
        "ranked": data["ranked"],
        "task_version": data["task_version"],
        "result": data,
        "error": "",
    }
    shapes = [
        evaluation_shape_build(evaluation=evaluation, index=index, row=row)
        for index, row in enumerate(data["per_shape"])
    ]
    return _evaluation_close(
        evaluation=evaluation, attempt=attempt, fields=fields, shapes=shapes, then=then
    )


def _evaluation_close(
    *,
    evaluation: Evaluation,
    attempt: int,
    fields: dict,
    shapes: list[EvaluationShape],
    then: Callable[[], object] | None,
) -> Evaluation | None:
    held = Evaluation.objects.filter(pk=evaluation.pk, attempts=attempt, status__in=ACTIVE)
    with transaction.atomic():
        # The conditional update comes first: it locks the row against a concurrent claim, and
        # the shapes are replaced only under the verdict that won.
        if held.update(finished_at=timezone.now(), lease_expires_at=None, **fields) != 1:
            logger.warning(
                "evaluation %s: the verdict of attempt %s is refused: another attempt holds or "
                "finished it",
                evaluation.pk,
                attempt,
            )
            return None
        evaluation.shapes.all().delete()
        EvaluationShape.objects.bulk_create(shapes)
        if then is not None:
            then()
    evaluation.refresh_from_db()
    return evaluation


def evaluation_shape_build(*, evaluation: Evaluation, index: int, row: dict) -> EvaluationShape:
    """The unsaved per-shape row for one entry of a grader result's `per_shape`."""
    timing = row.get("candidate_ms") or {}
    return EvaluationShape(
        evaluation=evaluation,
        index=index,
        shape=row["shape"],
        seen=row["seen"],
        correct=row["correct"],
        reason=row["reason"],
        max_abs_err=row["max_abs_err"],
        max_rel_err=row["max_rel_err"],
        candidate_median_ms=timing.get("median"),
        candidate_p10_ms=timing.get("p10"),
        candidate_p90_ms=timing.get("p90"),
        eager_ms=row["eager_ms"],
        compile_ms=row["compile_ms"],
        sota_ms=row["sota_ms"],
        tflops=row["tflops"],
        gbps=row["gbps"],
        roofline_fraction=row["roofline_fraction"],
    )


def _evaluation_fail(
    *, evaluation: Evaluation, attempt: int, message: str, then: Callable[[], object] | None
) -> Evaluation | None:
    fields = {"status": Evaluation.Status.ERROR, "error": message}
    return _evaluation_close(
        evaluation=evaluation, attempt=attempt, fields=fields, shapes=[], then=then
    )


def evaluation_lease_remaining_s(*, evaluation_id: int) -> float | None:
    """Seconds until a running evaluation's lease runs out; None if it is not running."""
    evaluation = Evaluation.objects.filter(pk=evaluation_id).first()
    if evaluation is None or evaluation.status != Evaluation.Status.RUNNING:
        return None
    if evaluation.lease_expires_at is None:
        return 0.0
    return max(0.0, (evaluation.lease_expires_at - timezone.now()).total_seconds())


@transaction.atomic
def evaluation_submit(
    *,
    task: Task,
    solution_name: str,
    solution_code: str,
    submitted_by: AbstractBaseUser | None = None,
) -> Evaluation:
    """An evaluation requested through the API, outside any run, readable by `submitted_by`
    alone (and staff); graded on the gpu queue."""
    evaluation = evaluation_create(
        task=task,
        solution_name=solution_name,
        solution_code=solution_code,
        submitted_by=submitted_by,
    )
    transaction.on_commit(lambda: evaluation_enqueue(evaluation=evaluation))
    return evaluation


def evaluation_enqueue(*, evaluation: Evaluation) -> None:
    from evaluator.jobs import evaluation_run_task  # the Celery tasks call back into this module

    evaluation_grade_enqueue(
        evaluation_id=evaluation.pk, then=evaluation_run_task.si(evaluation.pk)
    )


def evaluation_grade_enqueue(*, evaluation_id: int, then: Signature) -> None:
    """Send a grading on its way: through the build stage on ARENA_BUILD_QUEUE where one is
    configured, then `then` (the job that grades and closes it) on ARENA_GPU_QUEUE. A compile
    failure found by the build stage sends `then` back to the build queue: it only closes."""
    if not settings.ARENA_BUILD_QUEUE:
        then.apply_async(queue=settings.ARENA_GPU_QUEUE)
        return
    from evaluator.jobs import evaluation_build_task  # the Celery tasks call this module

    evaluation_build_task.apply_async(
        (evaluation_id, then, settings.ARENA_GPU_QUEUE, settings.ARENA_BUILD_QUEUE),
        queue=settings.ARENA_BUILD_QUEUE,
    )
