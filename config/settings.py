"""Kernel Arena settings, read from the environment (see README.md and DEVELOPERS.md).

With nothing set, the app runs on embedded defaults: SQLite in WAL mode and a Celery broker kept
in files under ARENA_DATA_DIR. DATABASE_URL switches to PostgreSQL, ARENA_BROKER_URL to Redis.
"""

import re
from pathlib import Path

import dj_database_url
from csp.constants import NONCE, NONE, SELF
from django.core.exceptions import ImproperlyConfigured
from whitenoise.compress import Compressor

from config.email_url import email_settings
from config.env import (
    env_bool,
    env_choice,
    env_int,
    env_list,
    env_path,
    env_rate,
    env_str,
    local_secret_key,
)
from sandboxes.secret_variables import DEPLOYMENT_SECRETS

BASE_DIR = Path(__file__).resolve().parent.parent
DATA_DIR = env_path("ARENA_DATA_DIR", BASE_DIR / "var")

# Local state of the embedded defaults (SQLite file, broker folder, uploads) lives here.
DATA_DIR.mkdir(parents=True, exist_ok=True)

DEBUG = env_bool("ARENA_DEBUG", False)

# Without ARENA_SECRET_KEY, this machine's own key in ARENA_DATA_DIR: written by the first start
# in debug mode (`make run`), so that `manage.py` commands in a new shell use the same local data.
# A deployment sets ARENA_SECRET_KEY; with neither, start-up stops.
SECRET_KEY_FILE = DATA_DIR / "secret-key"
SECRET_KEY = env_str("ARENA_SECRET_KEY")
if not SECRET_KEY:
    SECRET_KEY = local_secret_key(SECRET_KEY_FILE, create=DEBUG)
    if not SECRET_KEY:
        raise ImproperlyConfigured(
            "ARENA_SECRET_KEY is not set. Set it, or set ARENA_DEBUG=1 for local development "
            f"(`make run` does; it also writes {SECRET_KEY_FILE} for later commands)."
        )

ALLOWED_HOSTS = env_list("ARENA_ALLOWED_HOSTS", ["127.0.0.1", "localhost", "testserver"])
CSRF_TRUSTED_ORIGINS = env_list("ARENA_CSRF_TRUSTED_ORIGINS", [])

# Production: the site is served only over HTTPS, by a proxy that terminates TLS and passes the
# request on over plain HTTP with X-Forwarded-Proto set (docs/deploy.md). Trusting that header is
# safe only because the proxy overwrites it and nothing else can reach the web processes.
ARENA_HTTPS = env_bool("ARENA_HTTPS", False)
if ARENA_HTTPS:
    SECURE_PROXY_SSL_HEADER = ("HTTP_X_FORWARDED_PROTO", "https")
    SECURE_SSL_REDIRECT = True
    SESSION_COOKIE_SECURE = True
    CSRF_COOKIE_SECURE = True
    # A year, the least the browsers' preload lists accept. Browsers that saw the header refuse
    # plain HTTP for that long, so turn this on only once HTTPS works.
    SECURE_HSTS_SECONDS = 365 * 24 * 3600
    # These cover the names under the arena's own host name, not its parent domain's; `preload`
    # only makes the site eligible for the browsers' lists, which take a separate submission.
    SECURE_HSTS_INCLUDE_SUBDOMAINS = True
    SECURE_HSTS_PRELOAD = True

INSTALLED_APPS = [
    "django.contrib.admin",
    "django.contrib.contenttypes",
    "django.contrib.auth",
    "django.contrib.sessions",
    "django.contrib.messages",
    "django.contrib.staticfiles",
    "rest_framework",
    "drf_spectacular",
    "drf_spectacular_sidecar",
    "axes",
    "allauth",
    "allauth.account",
    "allauth.socialaccount",
    # Installed always; it is offered only where ARENA_GITHUB_CLIENT_ID configures it.
    "allauth.socialaccount.providers.github",
    "accounts",
    "tasks",
    "evaluator",
    "transcripts",
    "arena",
    "leaderboard",
]

MIDDLEWARE = [
    "django.middleware.security.SecurityMiddleware",
    "whitenoise.middleware.WhiteNoiseMiddleware",
    # Outside everything that can answer with a page (CSRF failures, the error handlers), so
    # that every HTML response carries the policy below; static files, served above, need none.
    "csp.middleware.CSPMiddleware",
    "django.contrib.sessions.middleware.SessionMiddleware",
    "django.middleware.common.CommonMiddleware",
    "django.middleware.csrf.CsrfViewMiddleware",
    "django.contrib.auth.middleware.AuthenticationMiddleware",
    "django.contrib.messages.middleware.MessageMiddleware",
    "django.middleware.clickjacking.XFrameOptionsMiddleware",
    "allauth.account.middleware.AccountMiddleware",
    # Last, as django-axes asks: it turns a login refused for a lockout into the lockout page.
    "axes.middleware.AxesMiddleware",
]

# Content-Security-Policy of every page (docs/deploy.md). Pages load only this site's own scripts
# and stylesheets: no inline script (a page that must have one, the API docs, gives it the
# request's nonce: NONCE is filled in only for a response whose page asked for
# request.csp_nonce), no eval, no plugins, no framing. A view that sends its own policy keeps it
# (the transcript page and its export: scripts and styles by hash, nothing else).
# plotly.js (static/vendor/) adds two <style> elements as it loads: an empty one that it fills
# through the CSSOM (which no policy restricts) and maplibre's stylesheet for map traces. Each is
# allowed by its hash rather than by 'unsafe-inline', so no other inline style or style attribute
# applies. A new plotly.js may change the second; tests/browser/test_csp.py then names the hash.
_PLOTLY_STYLE_HASHES = [
    "'sha256-47DEQpj8HBSa+/TImW+5JCeuQeRkm5NMpJWZG3hSuFU='",  # the empty text
    "'sha256-ji27qzEtxXZW+7dun6UwjHXJ18e6WAin1VvNtkzIE/o='",  # maplibre-gl's CSS, plotly.js 4.1
]
CONTENT_SECURITY_POLICY = {
    "DIRECTIVES": {
        "default-src": [SELF],
        "script-src": [SELF, NONCE],
        "style-src": [SELF, *_PLOTLY_STYLE_HASHES],
        # data: for the SVG icons that Swagger UI's stylesheet embeds.
        "img-src": [SELF, "data:"],
        "object-src": [NONE],
        "base-uri": [NONE],
        "form-action": [SELF],
        "frame-ancestors": [NONE],
    }
}

ROOT_URLCONF = "config.urls"
WSGI_APPLICATION = "config.wsgi.application"

TEMPLATES = [
    {
        "BACKEND": "django.template.backends.django.DjangoTemplates",
        "DIRS": [BASE_DIR / "templates"],
        "APP_DIRS": True,
        "OPTIONS": {
            "context_processors": [
                "django.template.context_processors.request",
                "django.contrib.auth.context_processors.auth",
                "django.contrib.messages.context_processors.messages",
                "accounts.context_processors.nav_account",
            ],
        },
    },
]

# Tests run the suite against a file (not :memory:) so the Celery worker process that the test
# fixtures start can open the same database.
_SQLITE_PATH = env_path("ARENA_SQLITE_PATH", DATA_DIR / "arena.sqlite3")
_SQLITE_TEST_PATH = DATA_DIR / "test-arena.sqlite3"

DATABASE_URL = env_str("DATABASE_URL")
if DATABASE_URL:
    try:
        DATABASES = {"default": dj_database_url.parse(DATABASE_URL, conn_max_age=60)}
    except ValueError as exc:
        raise ImproperlyConfigured(f"DATABASE_URL is not a database URL: {exc}") from None
else:
    DATABASES = {
        "default": {
            "ENGINE": "django.db.backends.sqlite3",
            "NAME": _SQLITE_PATH,
            "OPTIONS": {
                # WAL lets the web server read while the worker writes; IMMEDIATE takes the write
                # lock at BEGIN so concurrent writers wait on busy_timeout instead of failing
                # with "database is locked" halfway through a transaction.
                "init_command": "PRAGMA journal_mode=WAL; PRAGMA synchronous=NORMAL;",
                "transaction_mode": "IMMEDIATE",
                "timeout": 20,
            },
            "TEST": {"NAME": str(_SQLITE_TEST_PATH)},
        }
    }

DEFAULT_AUTO_FIELD = "django.db.models.BigAutoField"

AUTH_PASSWORD_VALIDATORS = [
    {"NAME": "django.contrib.auth.password_validation.MinimumLengthValidator"},
    {"NAME": "django.contrib.auth.password_validation.CommonPasswordValidator"},
]

LANGUAGE_CODE = "en-us"
TIME_ZONE = "UTC"
USE_I18N = False
USE_TZ = True

# Accounts sign in on the site's own page (the upload form asks for it); staff also use /admin/.
LOGIN_URL = "login"
LOGIN_REDIRECT_URL = "leaderboard:index"
LOGOUT_REDIRECT_URL = "leaderboard:index"

# Failed logins (web/login_lockout.py, django-axes): this many failures from one address or
# on one account within ARENA_LOGIN_COOLOFF_S refuse logins from that address and to that
# account until that long has passed with no further try. Axes' backend comes first, so that it
# refuses before any backend checks a password (allauth's goes after it, beside ModelBackend).
ARENA_LOGIN_FAILURE_LIMIT = env_int("ARENA_LOGIN_FAILURE_LIMIT", 5, minimum=1)
ARENA_LOGIN_COOLOFF_S = env_int("ARENA_LOGIN_COOLOFF_S", 900, minimum=1)
# How many proxies in front of the web processes append to X-Forwarded-For: the client's address
# is the entry that many from the right. Behind the TLS proxy of docs/deploy.md, one; without
# it every login would come from the proxy's address and one person's failures lock out all.
ARENA_PROXY_COUNT = env_int("ARENA_PROXY_COUNT", 1 if ARENA_HTTPS else 0, minimum=0)
AUTHENTICATION_BACKENDS = [
    "axes.backends.AxesStandaloneBackend",
    "django.contrib.auth.backends.ModelBackend",
    # allauth's form logs in by username or e-mail address, either in any case.
    "allauth.account.auth_backends.AuthenticationBackend",
]
AXES_HANDLER = "web.login_lockout.LoginAttempts"
AXES_LOCKOUT_PARAMETERS = ["ip_address", "username"]
AXES_FAILURE_LIMIT = "web.login_lockout.failure_limit"
AXES_COOLOFF_TIME = "web.login_lockout.cool_off"
AXES_USERNAME_CALLABLE = "web.login_lockout.account_name"
AXES_CLIENT_IP_CALLABLE = "web.login_lockout.client_address"
AXES_LOCKOUT_CALLABLE = "web.login_lockout.lockout_page"
AXES_RESET_ON_SUCCESS = True
# The lockout needs the failures only; a row for every successful login would grow forever.
AXES_DISABLE_ACCESS_LOG = True

# Accounts (django-allauth, accounts/; docs/deploy.md): anyone signs up with a user name, an
# e-mail address and a password, or with GitHub where the operator configures it.
# ARENA_SIGNUP_OPEN=0 closes sign-up; existing accounts still log in.
ARENA_SIGNUP_OPEN = env_bool("ARENA_SIGNUP_OPEN", True)
ACCOUNT_ADAPTER = "accounts.adapter.AccountAdapter"
SOCIALACCOUNT_ADAPTER = "accounts.adapter.SocialAccountAdapter"
ACCOUNT_LOGIN_METHODS = {"username", "email"}
ACCOUNT_SIGNUP_FIELDS = ["username*", "email*", "password1*"]
ACCOUNT_FORMS = {"login": "accounts.forms.LoginForm"}
# "optional": a new address gets a link to verify it and the account works meanwhile;
# "mandatory": no login before the link is followed (then ARENA_EMAIL_URL must really deliver).
ACCOUNT_EMAIL_VERIFICATION = env_choice(
    "ARENA_EMAIL_VERIFICATION", "optional", ("none", "optional", "mandatory")
)
ACCOUNT_SIGNUP_REDIRECT_URL = "accounts:tokens"  # a new account came for a token
ACCOUNT_DEFAULT_HTTP_PROTOCOL = "https" if ARENA_HTTPS else "http"
ACCOUNT_EMAIL_SUBJECT_PREFIX = "[Kernel Arena] "
# Names that would pass for the platform's own voice on run and agent pages.
ACCOUNT_USERNAME_BLACKLIST = ["admin", "administrator", "root", "staff", "arena", "kernel-arena"]
# Sign-up and login posts per client address (the one the lockout counts: accounts/adapter.py),
# counted in Django's cache. Failed logins are axes' to count (above), not allauth's as well.
_SIGNUP_RATE = env_rate("ARENA_SIGNUP_RATE", "20/hour")
_LOGIN_RATE = env_rate("ARENA_LOGIN_RATE", "30/minute")
ACCOUNT_RATE_LIMITS = {
    "signup": f"{_SIGNUP_RATE[0]}/{_SIGNUP_RATE[1]}s/ip" if _SIGNUP_RATE else None,
    "login": f"{_LOGIN_RATE[0]}/{_LOGIN_RATE[1]}s/ip" if _LOGIN_RATE else None,
    "login_failed": None,
}
# GitHub sign-in, offered only when both are set (an OAuth app's id and secret, docs/deploy.md);
# read from here, so no SocialApp row is needed.
ARENA_GITHUB_CLIENT_ID = env_str("ARENA_GITHUB_CLIENT_ID")
ARENA_GITHUB_SECRET = env_str("ARENA_GITHUB_SECRET")
if ARENA_GITHUB_CLIENT_ID:
    # GitHub sign-in posts to our own page, which redirects to GitHub's authorize page:
    # browsers hold a form's redirect to form-action too, so GitHub's origin is named there.
    CONTENT_SECURITY_POLICY["DIRECTIVES"]["form-action"].append("https://github.com")
if bool(ARENA_GITHUB_CLIENT_ID) != bool(ARENA_GITHUB_SECRET):
    raise ImproperlyConfigured(
        "ARENA_GITHUB_CLIENT_ID and ARENA_GITHUB_SECRET go together: set both to offer GitHub "
        "sign-in, or neither"
    )
_GITHUB_APPS = [{"client_id": ARENA_GITHUB_CLIENT_ID, "secret": ARENA_GITHUB_SECRET, "key": ""}]
SOCIALACCOUNT_PROVIDERS = {
    # user:email reads the account's verified addresses, which its public profile may not show.
    "github": {"SCOPE": ["user:email"], "APPS": _GITHUB_APPS if ARENA_GITHUB_CLIENT_ID else []},
}
SOCIALACCOUNT_QUERY_EMAIL = True

# Mail (verification links, password resets): printed on the console unless ARENA_EMAIL_URL
# names an SMTP server (config/email_url.py).
_EMAIL = email_settings("ARENA_EMAIL_URL", env_str("ARENA_EMAIL_URL"))
EMAIL_BACKEND = _EMAIL.backend
EMAIL_HOST, EMAIL_PORT = _EMAIL.host, _EMAIL.port
EMAIL_HOST_USER, EMAIL_HOST_PASSWORD = _EMAIL.user, _EMAIL.password
EMAIL_USE_TLS, EMAIL_USE_SSL = _EMAIL.use_tls, _EMAIL.use_ssl
# A sign-up waits on the mail server; one that does not answer must not hold a web worker.
EMAIL_TIMEOUT = 10
DEFAULT_FROM_EMAIL = env_str("ARENA_EMAIL_FROM", "Kernel Arena <noreply@localhost>")
SERVER_EMAIL = DEFAULT_FROM_EMAIL

STATIC_URL = "static/"
STATICFILES_DIRS = [BASE_DIR / "static"]
# `collectstatic` target; the test suite's streams share one (Makefile).
STATIC_ROOT = env_path("ARENA_STATIC_ROOT", DATA_DIR / "staticfiles")
STATIC_ROOT.mkdir(parents=True, exist_ok=True)
# Static files are collected (`manage.py collectstatic`) with their content's hash in every name
# and gzip and Brotli copies beside them, so a page names each asset by its content and a browser
# keeps it for good. Wherever the app serves pages with DEBUG off, collect first: `make run`,
# the test suite (tests/conftest.py), bench/web.py, docs/deploy.md. With DEBUG on, pages name the
# source files, which the development server serves as they are edited.
STORAGES = {
    "default": {"BACKEND": "django.core.files.storage.FileSystemStorage"},
    "staticfiles": {"BACKEND": "whitenoise.storage.CompressedManifestStaticFilesStorage"},
}
MEDIA_ROOT = env_path("ARENA_MEDIA_ROOT", DATA_DIR / "media")
MEDIA_URL = "media/"

# Uploads: solutions are source files, transcripts are logs; both are capped.
ARENA_MAX_SOLUTION_BYTES = env_int("ARENA_MAX_SOLUTION_BYTES", 1024 * 1024, minimum=1024)
# An agent's log as uploaded, and again as unpacked from a .zip or .gz.
ARENA_TRAJECTORY_MAX_BYTES = env_int("ARENA_TRAJECTORY_MAX_BYTES", 200 * 1024 * 1024, minimum=1024)
# An uploaded .zip's entries at most, and how many times its compressed size an entry may expand
# to: logs deflate about 10x, a zip bomb about 1000x (transcript_formats/archives.py).
ARENA_ARCHIVE_MAX_MEMBERS = env_int("ARENA_ARCHIVE_MAX_MEMBERS", 10_000, minimum=1)
ARENA_ARCHIVE_MAX_RATIO = env_int("ARENA_ARCHIVE_MAX_RATIO", 100, minimum=2)
DATA_UPLOAD_MAX_MEMORY_SIZE = env_int("ARENA_MAX_UPLOAD_BYTES", 64 * 1024 * 1024, minimum=1024)
# An upload being received, and an import's work, wait in the app's own folder, never the
# system's temp folder: what a killed worker leaves there is swept (transcripts/spool.py).
FILE_UPLOAD_TEMP_DIR = str(DATA_DIR / "tmp" / "uploads")
Path(FILE_UPLOAD_TEMP_DIR).mkdir(parents=True, exist_ok=True)
# Leftovers of killed uploads and imports (temporary files, files in media no row names) are
# removed once this old, by a sweep every quarter of it on a worker of the default queue.
ARENA_ORPHAN_MAX_AGE_S = env_int("ARENA_ORPHAN_MAX_AGE_S", 3600, minimum=300)

REST_FRAMEWORK = {
    "DEFAULT_SCHEMA_CLASS": "arena.api_schema.ArenaAutoSchema",
    "DEFAULT_RENDERER_CLASSES": ["rest_framework.renderers.JSONRenderer"],
    "DEFAULT_PARSER_CLASSES": [
        "rest_framework.parsers.MultiPartParser",
        "rest_framework.parsers.FormParser",
        "rest_framework.parsers.JSONParser",
    ],
    # Reads are public; every write needs an API token (accounts/authentication.py: made on
    # /accounts/tokens/ or with `manage.py token_create`, kept hashed).
    "DEFAULT_AUTHENTICATION_CLASSES": ["accounts.authentication.ApiTokenAuthentication"],
    "DEFAULT_PERMISSION_CLASSES": ["rest_framework.permissions.IsAuthenticatedOrReadOnly"],
    "DEFAULT_THROTTLE_CLASSES": ["web.throttles.WriteRateThrottle"],
    "UNAUTHENTICATED_USER": None,
    "EXCEPTION_HANDLER": "web.api_errors.api_exception_handler",
}

# Writes per API token, "<count>/<second|minute|hour|day>"; empty turns the limit off.
ARENA_WRITE_RATE = env_str("ARENA_WRITE_RATE", "60/min")
if ARENA_WRITE_RATE and not re.fullmatch(
    r"\d+/(s|sec|second|m|min|minute|h|hour|d|day)", ARENA_WRITE_RATE
):
    raise ImproperlyConfigured(f"ARENA_WRITE_RATE={ARENA_WRITE_RATE!r} is not like 60/min")

SPECTACULAR_SETTINGS = {
    "TITLE": "Kernel Arena API",
    "DESCRIPTION": (
        "Reads are public. Writes need an API token, sent as `Authorization: Token <secret>` "
        "(or `Bearer <secret>`), and "
        "are rate limited per token. Every 4xx has one JSON shape: "
        '`{"error": {"status", "code", "message", "fields"}}`; `fields` names each bad field.'
    ),
    "VERSION": "1",
    "SERVE_INCLUDE_SCHEMA": False,
    # Swagger UI and Redoc from the drf-spectacular-sidecar package's static files, never a CDN.
    "SWAGGER_UI_DIST": "SIDECAR",
    "SWAGGER_UI_FAVICON_HREF": "SIDECAR",
    "REDOC_DIST": "SIDECAR",
    # No validator badge: Swagger UI would load it from validator.swagger.io on any host but
    # localhost, sending it our schema's address, and the site's policy refuses other origins.
    "SWAGGER_UI_SETTINGS": {"deepLinking": True, "validatorUrl": None},
    "COMPONENT_SPLIT_REQUEST": True,
    "POSTPROCESSING_HOOKS": [
        "drf_spectacular.hooks.postprocess_schema_enums",
        "web.api_errors.add_error_responses",
    ],
}

# Celery. The embedded default keeps messages as files under DATA_DIR/broker, so `make run`
# needs no server; ARENA_BROKER_URL=redis://... is the production path.
ARENA_BROKER_DIR = env_path("ARENA_BROKER_DIR", DATA_DIR / "broker")
EMBEDDED_BROKER_URL = "filesystem://localhost//"
CELERY_BROKER_URL = env_str("ARENA_BROKER_URL") or EMBEDDED_BROKER_URL
if CELERY_BROKER_URL.startswith("filesystem://"):
    # Kombu's filesystem transport, with messages written whole before they can be read.
    CELERY_BROKER_TRANSPORT = "config.broker_files:Transport"
    CELERY_BROKER_TRANSPORT_OPTIONS = {
        "data_folder_in": str(ARENA_BROKER_DIR / "messages"),
        "data_folder_out": str(ARENA_BROKER_DIR / "messages"),
        "control_folder": str(ARENA_BROKER_DIR / "control"),
        "store_processed": False,
        # A worker looks for its next message one poll after it acks a task (prefetch 1, late
        # acks), so each hop of a run (agents, build, gpu queue) waits up to one poll: Kombu's
        # 1 s by default, where a poll is a listing of one folder per queue.
        "polling_interval": 0.1,
    }
else:
    CELERY_BROKER_TRANSPORT_OPTIONS = {"visibility_timeout": 4 * 3600}

# The grader. Timeouts are seconds of wall clock per evaluation.
_SANDBOX_CHOICES = ("auto", "bwrap", "docker", "process")
ARENA_GRADER_DEVICE = env_choice("ARENA_GRADER_DEVICE", "auto", ("auto", "cuda", "cpu"))
ARENA_GRADER_TIMEOUT_S = env_int("ARENA_GRADER_TIMEOUT_S", 300, minimum=1)
ARENA_GRADER_SANDBOX = env_choice("ARENA_GRADER_SANDBOX", "auto", _SANDBOX_CHOICES)
# A GPU worker starts each evaluation's grader children ahead, while it grades the one before
# (grader/prepared.py); on the CPU, where timings are never ranked, children start
# when needed.
ARENA_GRADER_PREPARED = env_bool("ARENA_GRADER_PREPARED", True)
# How many evaluations' children it keeps started ahead (each about 1.5 GB of host memory).
ARENA_GRADER_PREPARED_AHEAD = env_int("ARENA_GRADER_PREPARED_AHEAD", 2, minimum=1)
# A GPU worker keeps one judge alive from one evaluation to the next (grader/warm_judge.py),
# holding each case's expected outputs in up to ARENA_GRADER_JUDGE_CACHE_MB of host memory for
# the next solution of the same task.
ARENA_GRADER_WARM_JUDGE = env_bool("ARENA_GRADER_WARM_JUDGE", True)
ARENA_GRADER_JUDGE_CACHE_MB = env_int("ARENA_GRADER_JUDGE_CACHE_MB", 4096, minimum=0)
# How many evaluations share one GPU at once (a worker's --concurrency for that GPU): above 1,
# one solution runs at a time and every timing runs alone (grader/gpu_share.py), each
# evaluation within 1/N of the GPU's memory.
ARENA_GRADER_EVALUATIONS_PER_GPU = env_int("ARENA_GRADER_EVALUATIONS_PER_GPU", 1, minimum=1)
# Two candidate rounds (the visible shapes, then the unseen ones, each judged in turn) where a
# plan's outputs pass the device budget: "auto", the default; "off" sends the cases past it
# through host memory (grader/options.py, docs/grading-pipeline.md).
ARENA_GRADER_CANDIDATE_ROUNDS = env_choice(
    "ARENA_GRADER_CANDIDATE_ROUNDS", "auto", ("off", "auto", "always")
)
# Inductor's compile workers for torch.compile's baseline of a task (1: in the judge's own
# process; 0: torch's own choice, a worker per core). grader/options.py says why 1.
ARENA_GRADER_COMPILE_THREADS = env_int("ARENA_GRADER_COMPILE_THREADS", 1, minimum=0)
# The grader's trusted children (the probe's, the judge's) forked from a server that imported
# torch once (grader/forkserver.py); off, each starts as an interpreter of its own.
ARENA_GRADER_FORK_SERVER = env_bool("ARENA_GRADER_FORK_SERVER", True)
# A grading worker holds its evaluation under a lease of ARENA_GRADER_LEASE_S, renewed every
# ARENA_GRADER_HEARTBEAT_S while it grades (evaluator/heartbeat.py); a worker that dies leaves
# the evaluation to the next sweep once the lease runs out. The lease outlasts missed beats.
ARENA_GRADER_LEASE_S = env_int("ARENA_GRADER_LEASE_S", 60, minimum=2)
ARENA_GRADER_HEARTBEAT_S = env_int("ARENA_GRADER_HEARTBEAT_S", 15, minimum=1)
if ARENA_GRADER_HEARTBEAT_S * 2 > ARENA_GRADER_LEASE_S:
    raise ImproperlyConfigured(
        f"ARENA_GRADER_HEARTBEAT_S={ARENA_GRADER_HEARTBEAT_S} is more than half of "
        f"ARENA_GRADER_LEASE_S={ARENA_GRADER_LEASE_S}: one late beat would lose the lease"
    )
# A grading still queued after this long lost its message (a worker killed holding it on the
# embedded broker): the sweep sends it again.
ARENA_GRADER_REQUEUE_S = env_int("ARENA_GRADER_REQUEUE_S", 1800, minimum=1)
# The secret from which unseen shapes are drawn; without it, fresh randomness per evaluation.
ARENA_HIDDEN_SEED = env_str("ARENA_HIDDEN_SEED") or None
# Where outputs pass from the candidate to the judge; unset: /dev/shm when roomy, else the
# system's temporary folder (grader/evaluate.py: scratch_root).
ARENA_SCRATCH_DIR = env_str("ARENA_SCRATCH_DIR") or None
# The grader's caches of eager and torch.compile timings and of the reference's probes.
_GRADER_CACHE = Path.home() / ".cache" / "kernel-arena"
ARENA_BASELINE_CACHE = env_path("ARENA_BASELINE_CACHE", _GRADER_CACHE / "baselines.json")
ARENA_PROBE_CACHE = env_path("ARENA_PROBE_CACHE", _GRADER_CACHE / "probes.json")
ARENA_JUDGE_KERNEL_CACHE = env_path("ARENA_JUDGE_KERNEL_CACHE", _GRADER_CACHE / "judge-kernels")
# The task catalogue that ships with the source tree, and where imported tasks are written
# (import_kernelbench), outside it; both are read.
ARENA_CATALOG_DIR = env_path("ARENA_CATALOG_DIR", BASE_DIR / "tasks" / "catalog")
ARENA_IMPORTED_CATALOG_DIR = env_path("ARENA_IMPORTED_CATALOG_DIR", DATA_DIR / "catalog")
# The docker sandbox's image (docs/sandboxes.md: `make sandbox-image` builds it).
ARENA_SANDBOX_IMAGE = env_str("ARENA_SANDBOX_IMAGE", "kernel-arena-sandbox:full")
# Development only: run untrusted code (candidates, agents) in a plain process where no
# isolating sandbox works, with this user's files, network and /proc within its reach.
ARENA_UNSAFE_RUN_UNISOLATED = env_bool("ARENA_UNSAFE_RUN_UNISOLATED", False)
# Erased from a worker's environment once settings hold them (grader/concealment.py),
# so that no process it starts can read them from /proc/<worker>/environ. One list, in
# sandboxes/secret_variables.py, which the grader's CLI erases too: a new secret goes there.
ARENA_CONCEALED_VARIABLES = DEPLOYMENT_SECRETS

# Agent runs (arena/runs.py): like the grader's candidate, only in a sandbox that isolates
# ("auto": bwrap, else docker); the model's API is reached through an allow-listed proxy.
ARENA_AGENT_SANDBOX = env_choice("ARENA_AGENT_SANDBOX", "auto", _SANDBOX_CHOICES)
# Memory of an agent's whole process tree, in MiB (0: no cap), held by a cgroup where the host
# can make one and by the container under docker; a plain process without a cgroup has none.
ARENA_AGENT_MEMORY_MB = env_int("ARENA_AGENT_MEMORY_MB", 16384, minimum=0)
ARENA_RUNS_DIR = env_path("ARENA_RUNS_DIR", DATA_DIR / "runs")
# A worker renews its run's lease while it works; a lease that runs out means the worker died.
ARENA_RUN_LEASE_S = env_int("ARENA_RUN_LEASE_S", 120, minimum=2)
# Every worker on the agents queue looks for runs lost with a dead worker this often, and every
# GPU worker for gradings: a dead worker's grading is taken over at most ARENA_GRADER_LEASE_S
# plus this after its last heartbeat.
ARENA_RUN_SWEEP_S = env_int("ARENA_RUN_SWEEP_S", 30, minimum=1)
# Queues of arena runs: the agent phase, then grading (one queue per GPU kind, docs/deploy.md).
ARENA_AGENTS_QUEUE = env_str("ARENA_AGENTS_QUEUE", "agents")
ARENA_GPU_QUEUE = env_str("ARENA_GPU_QUEUE", "gpu")
# The build stage (grader/builds.py): CPU workers on this queue compile solutions'
# extensions before a GPU worker sees them, and grade compile failures themselves; "" sends
# gradings straight to ARENA_GPU_QUEUE. ARENA_BUILD_CACHE must be one folder that every build
# and GPU worker reaches (a shared volume across hosts).
ARENA_BUILD_QUEUE = env_str("ARENA_BUILD_QUEUE", "build")
ARENA_BUILD_CACHE = env_path("ARENA_BUILD_CACHE", DATA_DIR / "builds")
# The architecture the build stage compiles for (TORCH_CUDA_ARCH_LIST); a GPU worker compiles
# for its own GPU and takes a build only when the two agree (9.0a: H100 and H200).
ARENA_BUILD_CUDA_ARCH = env_str("ARENA_BUILD_CUDA_ARCH", "9.0a")

# Django's cache, shared by every process of a deployment so that a page rendered by one web
# process (the leaderboard's ranking, figures and matrix) serves them all: a folder under
# ARENA_DATA_DIR by default, or Redis with ARENA_CACHE_URL=redis://host:6379/1 (a database of its
# own: clearing the cache empties it). "locmem" keeps it per process.
ARENA_CACHE_URL = env_str("ARENA_CACHE_URL", "")
if ARENA_CACHE_URL.startswith(("redis://", "rediss://")):
    CACHES = {
        "default": {
            "BACKEND": "django.core.cache.backends.redis.RedisCache",
            "LOCATION": ARENA_CACHE_URL,
            "KEY_PREFIX": "arena",
        }
    }
elif ARENA_CACHE_URL == "locmem":
    CACHES = {"default": {"BACKEND": "django.core.cache.backends.locmem.LocMemCache"}}
elif ARENA_CACHE_URL == "":
    CACHES = {
        "default": {
            "BACKEND": "django.core.cache.backends.filebased.FileBasedCache",
            "LOCATION": str(DATA_DIR / "cache"),
            "OPTIONS": {"MAX_ENTRIES": 2000},
        }
    }
else:
    raise ImproperlyConfigured(
        f"ARENA_CACHE_URL={ARENA_CACHE_URL!r}: give redis://host:port/db, locmem, or nothing"
    )

# Public pages and read API responses (the leaderboard, the matrix, the ranking API) are kept
# whole this many seconds per web process (web/page_cache.py); 0 turns that off.
ARENA_PAGE_CACHE_S = env_int("ARENA_PAGE_CACHE_S", 1, minimum=0)

LOGGING = {
    "version": 1,
    "disable_existing_loggers": False,
    "formatters": {"plain": {"format": "%(asctime)s %(levelname)s %(name)s: %(message)s"}},
    "handlers": {"console": {"class": "logging.StreamHandler", "formatter": "plain"}},
    "root": {"handlers": ["console"], "level": env_str("ARENA_LOG_LEVEL", "INFO")},
}

# Pages load only assets served by this app (no CDN). WhiteNoise serves the collected files,
# Brotli- or gzip-compressed as the browser accepts, a hashed name with "max-age=315360000,
# public, immutable" (the rest for 60 s); the source folders only with DEBUG on.
WHITENOISE_AUTOREFRESH = DEBUG
# Source maps are read by developer tools alone: not worth compressing (they are half the bytes).
WHITENOISE_SKIP_COMPRESS_EXTENSIONS = [*Compressor.SKIP_COMPRESS_EXTENSIONS, "map"]
