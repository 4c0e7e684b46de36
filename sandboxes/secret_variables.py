"""The environment variables that hold secrets: the one list, for every process that erases them
before it starts a child (grader/concealment.py does the erasing).

A child of the same user can read /proc/<parent>/environ, so a process that starts untrusted
code erases what it holds of these first. A Celery worker erases the deployment's secrets once
settings have read them (config/celery.py): an agents worker still hands a provider's credential
to the agent it runs. The grader's CLI (`python -m evaluator evaluate`) needs none of them and
erases everything named here.
"""

import re
from collections.abc import Iterable

# The deployment's own secrets, read by config/settings.py: the key that signs sessions and
# tokens, the seed unseen shapes are drawn from, URLs that carry passwords (database, broker,
# cache, mail server) and the OAuth client's secret.
DEPLOYMENT_SECRETS = (
    "ARENA_SECRET_KEY",
    "ARENA_HIDDEN_SEED",
    "DATABASE_URL",
    "ARENA_BROKER_URL",
    "ARENA_CACHE_URL",
    "ARENA_EMAIL_URL",
    "ARENA_GITHUB_SECRET",
)
# Model providers' credentials that the agent adapters pass to their CLIs (arena/agents).
PROVIDER_CREDENTIALS = (
    "ANTHROPIC_API_KEY",
    "CLAUDE_CODE_OAUTH_TOKEN",
    "OPENAI_API_KEY",
    "CODEX_API_KEY",
    "GEMINI_API_KEY",
    "GOOGLE_API_KEY",
    "CURSOR_API_KEY",
)
# Any other variable so named is taken for a secret too: an operator's cloud or registry
# credentials, a command agent's MYCLI_API_KEY.
_SECRET_NAME = re.compile(
    r"SECRET|PASSWORD|PASSWD|TOKEN|API_KEY|ACCESS_KEY|PRIVATE_KEY|CREDENTIAL", re.IGNORECASE
)


def secret_variables(names: Iterable[str]) -> list[str]:
    """Those of `names` (an environment's) that hold secrets."""
    named = {*DEPLOYMENT_SECRETS, *PROVIDER_CREDENTIALS}
    return sorted(name for name in names if name in named or _SECRET_NAME.search(name))
