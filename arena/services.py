import hashlib
from dataclasses import dataclass

from django.contrib.auth.base_user import AbstractBaseUser
from django.contrib.auth.models import Group
from django.db import IntegrityError, transaction

from arena.agent_names import AgentName, AgentNameRefused, agent_name_parse
from arena.lifecycle import run_upload_create, submission_add
from arena.models import Agent, Batch, Run, Submission
from arena.moderation import run_visibility_set
from evaluator.services import evaluation_create
from tasks.models import Task

WITHDRAWN_REASON = "withdrawn by its owner"


class NotYours(Exception):
    """The account may not act for this agent or run; the message says why and what to do."""

    def __init__(self, message: str) -> None:
        super().__init__(message)
        self.message = message


# A new agent's insert that loses a race (its name, look or slug taken meanwhile) looks again.
_AGENT_CREATE_TRIES = 3


def agent_get_or_create(
    *, name: str, owner: AbstractBaseUser | None = None, defaults: dict | None = None
) -> Agent:
    """The agent `name` names, however it is cased or spelled in compatibility forms
    (arena/agent_names.py); a new one is owned by `owner` (None: a platform agent) and takes
    `defaults` (harness, model, config...). Every agent is made here or in the admin, through
    agent_name_set. AgentNameRefused where the name is unusable or looks like another agent's."""
    key = agent_name_parse(name).key
    for _ in range(_AGENT_CREATE_TRIES):
        agent = Agent.objects.filter(name_key=key).first()
        if agent is not None:
            return agent
        try:
            return agent_name_set(agent=Agent(owner=owner, **(defaults or {})), name=name)
        except IntegrityError:
            continue
    raise AgentNameRefused(f"the agent {name!r} could not be stored (made meanwhile?); try again")


def agent_name_set(*, agent: Agent, name: str) -> Agent:
    """Store `agent`, new or renamed, under `name` in its normalised form with its keys. A new
    agent gets a free slug; a renamed one keeps its URLs. AgentNameRefused, and nothing written,
    where the name is another agent's or looks like another agent's."""
    parsed = agent_name_check(name=name, agent=agent)
    agent.name = parsed.shown
    agent.name_key, agent.lookalike_key = parsed.key, parsed.lookalike_key
    if agent.pk is None:
        agent.slug = _agent_free_slug(parsed.slug_base)
    with transaction.atomic():  # a lost race raises IntegrityError and leaves the caller's
        agent.save()  # transaction usable
    return agent


def agent_name_check(*, name: str, agent: Agent | None = None) -> AgentName:
    """The forms of `name` for `agent` (None or unsaved: a new one), or AgentNameRefused where
    another agent has that name or one that looks like it."""
    parsed = agent_name_parse(name)
    others = Agent.objects.all()
    if agent is not None and agent.pk is not None:
        others = others.exclude(pk=agent.pk)
    same = others.filter(name_key=parsed.key).first()
    if same is not None:
        raise AgentNameRefused(f"the agent {same.name!r} ({same.slug}) has this name already")
    twin = others.filter(lookalike_key=parsed.lookalike_key).first()
    if twin is not None:
        raise AgentNameRefused(
            f"the agent name {parsed.shown!r} looks like that of the existing agent "
            f"{twin.name!r} ({twin.slug}): submit under that agent's exact name if it is yours, "
            f"or choose a name that does not look like another agent's"
        )
    return parsed


def _agent_free_slug(base: str) -> str:
    taken = set(Agent.objects.filter(slug__startswith=base).values_list("slug", flat=True))
    slug, n = base, 1
    while slug in taken:
        n += 1
        slug = f"{base}-{n}"
    return slug


def agent_may_act(*, user: AbstractBaseUser, agent: Agent) -> bool:
    """Staff, the agent's owner, or a member of its organisation."""
    if getattr(user, "is_staff", False):
        return True
    if agent.owner_id is not None and agent.owner_id == user.pk:
        return True
    return (
        agent.organisation_id is not None
        and Group.objects.filter(pk=agent.organisation_id, user=user).exists()
    )


def agent_for_account(
    *, name: str, user: AbstractBaseUser | None, defaults: dict | None = None
) -> Agent:
    """The agent an account submits under: a new name makes an agent owned by the account
    (with `defaults`: harness, model...); a name that is someone else's is refused (NotYours).
    None is the platform itself."""
    agent = agent_get_or_create(name=name, owner=user, defaults=defaults)
    if user is None or agent_may_act(user=user, agent=agent):
        return agent
    if agent.owner_id is None:
        raise NotYours(f"the agent {agent.name!r} is run by the platform; only staff act for it")
    raise NotYours(
        f"the agent {agent.name!r} belongs to another account: submit under a name of your "
        f"own, or ask its owner to add you to its organisation"
    )


def run_may_act(*, user: AbstractBaseUser, run: Run) -> bool:
    """The account that created the run, or one that may act for its agent."""
    return run.created_by_id == user.pk or agent_may_act(user=user, agent=run.agent)


def run_withdraw(*, run_id: int, user: AbstractBaseUser) -> Run:
    """Take a run off every public page at its owner's request (it stays in the database and
    the admin). A run hidden by a moderator keeps the moderator's reason."""
    run = Run.objects.select_related("agent").get(pk=run_id)
    if not run_may_act(user=user, run=run):
        raise NotYours(f"run {run_id} is not yours to withdraw")
    if not run.hidden:
        run_visibility_set(runs=Run.objects.filter(pk=run_id), hidden=True, reason=WITHDRAWN_REASON)
        run.refresh_from_db()
    return run


@transaction.atomic
def submission_create(
    *,
    task: Task,
    agent_name: str,
    solution_name: str,
    solution_code: str,
    user: AbstractBaseUser | None = None,
) -> Submission:
    """An uploaded solution: Run + Evaluation + Submission, graded once this commits. `user`
    must be allowed to act for the named agent (NotYours otherwise); nothing is written then."""
    agent = agent_for_account(name=agent_name, user=user)
    return upload_submission_add(
        task=task, agent=agent, solution_name=solution_name, solution_code=solution_code, user=user
    )


def upload_submission_add(
    *,
    task: Task,
    agent: Agent,
    solution_name: str,
    solution_code: str,
    user: AbstractBaseUser | None,
    batch: Batch | None = None,
) -> Submission:
    """Run + Evaluation + Submission of an uploaded solution, enqueued once the caller's
    transaction commits."""
    run = run_upload_create(agent=agent, task=task, created_by=user)
    evaluation = evaluation_create(
        task=task, solution_name=solution_name, solution_code=solution_code
    )
    return submission_add(run=run, evaluation=evaluation, batch=batch)


@dataclass
class BatchUpload:
    batch: Batch
    created: list[Submission]
    already: int  # in the batch from an earlier upload under the same key


@transaction.atomic
def batch_submit(
    *,
    agent_name: str,
    items: list[tuple[Task, str, str]],
    user: AbstractBaseUser | None,
    key: str = "",
) -> BatchUpload:
    """Many solutions (task, file name, source) of one agent, each graded as its own upload.
    Under a `key` the account used before, the same batch: a solution it already holds (same
    task, name and source) is not added again, so a client killed midway sends it all again.
    All or nothing: NotYours (the agent is someone else's) writes nothing."""
    agent = agent_for_account(name=agent_name, user=user)
    batch = None
    if key:
        batch = Batch.objects.select_for_update().filter(created_by=user, key=key).first()
        if batch is not None and batch.agent_id != agent.pk:
            raise NotYours(f"the batch {key!r} is for the agent {batch.agent.name!r}")
    if batch is None:
        batch = Batch.objects.create(agent=agent, created_by=user, key=key)
    held = set(
        batch.submissions.values_list(
            "run__task_id", "evaluation__solution_name", "evaluation__solution_sha256"
        )
    )
    created = []
    for task, name, code in items:
        identity = (task.pk, name, hashlib.sha256(code.encode()).hexdigest())
        if identity in held:
            continue
        held.add(identity)
        created.append(
            upload_submission_add(
                task=task,
                agent=agent,
                solution_name=name,
                solution_code=code,
                user=user,
                batch=batch,
            )
        )
    return BatchUpload(batch=batch, created=created, already=len(items) - len(created))
