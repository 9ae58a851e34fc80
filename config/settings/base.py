"""Settings shared by every environment; insecure conveniences belong in local.py only."""

import tempfile
from pathlib import Path

from celery.schedules import crontab

from config.dsn import parse_cache_url, parse_database_url, parse_email_url
from config.env import env_bool, env_int, env_is_set, env_list, env_str

BASE_DIR = Path(__file__).resolve().parent.parent.parent

SECRET_KEY = env_str("SECRET_KEY", default=None)
DEBUG = False
ALLOWED_HOSTS = env_list("ALLOWED_HOSTS", default=[])
CSRF_TRUSTED_ORIGINS = env_list("CSRF_TRUSTED_ORIGINS", default=[])

INSTALLED_APPS = [
    "django.contrib.admin",
    "django.contrib.auth",
    "django.contrib.contenttypes",
    "django.contrib.sessions",
    "django.contrib.messages",
    "django.contrib.staticfiles",
    "rest_framework",
    "drf_spectacular",
    "evidence",
    "ledger",
    "dashboards",
]

MIDDLEWARE = [
    "config.health.HealthCheckMiddleware",
    "config.bodies.ChunkedBodyMiddleware",
    "config.headers.SecurityHeadersMiddleware",
    "django.middleware.security.SecurityMiddleware",
    "whitenoise.middleware.WhiteNoiseMiddleware",
    "django.contrib.sessions.middleware.SessionMiddleware",
    "django.middleware.common.CommonMiddleware",
    "django.middleware.csrf.CsrfViewMiddleware",
    "django.contrib.auth.middleware.AuthenticationMiddleware",
    "django.contrib.messages.middleware.MessageMiddleware",
    "django.middleware.clickjacking.XFrameOptionsMiddleware",
]

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
            ],
        },
    },
]

# --- Database ------------------------------------------------------------------------------

DATABASES = {
    "default": {
        **parse_database_url(
            env_str("DATABASE_URL", default=f"sqlite:///{BASE_DIR / 'db.sqlite3'}")
        ),
        "CONN_MAX_AGE": env_int("DATABASE_CONN_MAX_AGE", default=0, min_value=0),
        "CONN_HEALTH_CHECKS": True,
    }
}
DEFAULT_AUTO_FIELD = "django.db.models.BigAutoField"

CACHES = {"default": parse_cache_url(env_str("CACHE_URL", default="locmem://"))}

# --- Auth ----------------------------------------------------------------------------------

AUTH_PASSWORD_VALIDATORS = [
    {"NAME": "django.contrib.auth.password_validation.UserAttributeSimilarityValidator"},
    {"NAME": "django.contrib.auth.password_validation.MinimumLengthValidator"},
    {"NAME": "django.contrib.auth.password_validation.CommonPasswordValidator"},
    {"NAME": "django.contrib.auth.password_validation.NumericPasswordValidator"},
]
LOGIN_URL = "login"
# Failed sign-ins per account, and per client address, in 15 minutes (config.logins).
FREEZEDEBT_LOGIN_FAILURES = env_int("FREEZEDEBT_LOGIN_FAILURES", default=5, min_value=1)
FREEZEDEBT_LOGIN_FAILURES_PER_ADDRESS = env_int(
    "FREEZEDEBT_LOGIN_FAILURES_PER_ADDRESS", default=20, min_value=1
)
LOGIN_REDIRECT_URL = "dashboards:index"
LOGOUT_REDIRECT_URL = "login"

# --- Internationalisation ------------------------------------------------------------------

LANGUAGE_CODE = "en-us"
TIME_ZONE = env_str("TIME_ZONE", default="UTC")
USE_I18N = True
USE_TZ = True

# --- Static files --------------------------------------------------------------------------

STATIC_URL = "static/"
STATIC_ROOT = BASE_DIR / "staticfiles"
STATICFILES_DIRS = [BASE_DIR / "static"]

# --- E-mail --------------------------------------------------------------------------------

if env_is_set("EMAIL_URL"):
    _email = parse_email_url(env_str("EMAIL_URL"))
else:
    _email = {
        "EMAIL_BACKEND": "django.core.mail.backends.smtp.EmailBackend",
        "EMAIL_HOST": env_str("EMAIL_HOST", default="localhost"),
        "EMAIL_PORT": env_int("EMAIL_PORT", default=25, min_value=1, max_value=65535),
        "EMAIL_HOST_USER": env_str("EMAIL_HOST_USER", default=""),
        "EMAIL_HOST_PASSWORD": env_str("EMAIL_HOST_PASSWORD", default=""),
        "EMAIL_USE_TLS": env_bool("EMAIL_USE_TLS", default=False),
        "EMAIL_USE_SSL": env_bool("EMAIL_USE_SSL", default=False),
    }
EMAIL_BACKEND = _email["EMAIL_BACKEND"]
EMAIL_HOST = _email.get("EMAIL_HOST", "localhost")
EMAIL_PORT = _email.get("EMAIL_PORT", 25)
EMAIL_HOST_USER = _email.get("EMAIL_HOST_USER", "")
EMAIL_HOST_PASSWORD = _email.get("EMAIL_HOST_PASSWORD", "")
EMAIL_USE_TLS = _email.get("EMAIL_USE_TLS", False)
EMAIL_USE_SSL = _email.get("EMAIL_USE_SSL", False)
EMAIL_FILE_PATH = _email.get("EMAIL_FILE_PATH", str(BASE_DIR / "sent-mail"))
EMAIL_TIMEOUT = env_int("EMAIL_TIMEOUT", default=30, min_value=1)
DEFAULT_FROM_EMAIL = env_str("DEFAULT_FROM_EMAIL", default="Freeze Debt <freezedebt@localhost>")
SERVER_EMAIL = env_str("SERVER_EMAIL", default=DEFAULT_FROM_EMAIL)
ADMINS = [("Admin", address) for address in env_list("ADMIN_EMAILS", default=[])]

# Absolute base URL for links in e-mails, which are built outside any request. The embedded
# default serves on FREEZEDEBT_ADDR (scripts/dev); production derives it from ALLOWED_HOSTS.
SITE_URL = env_str(
    "SITE_URL", default="http://" + env_str("FREEZEDEBT_ADDR", default="127.0.0.1:8000")
).rstrip("/")

# --- API -----------------------------------------------------------------------------------

REST_FRAMEWORK = {
    # Personal token first: its Bearer challenge makes a missing credential a 401, not a 403.
    # Views list their own (evidence.authentication READ_ and UPLOAD_AUTHENTICATION).
    "DEFAULT_AUTHENTICATION_CLASSES": [
        "evidence.authentication.PersonalTokenAuthentication",
        "rest_framework.authentication.SessionAuthentication",
    ],
    "DEFAULT_PERMISSION_CLASSES": ["rest_framework.permissions.IsAuthenticated"],
    "DEFAULT_RENDERER_CLASSES": ["rest_framework.renderers.JSONRenderer"],
    "DEFAULT_PARSER_CLASSES": ["config.parsers.BoundedJSONParser"],
    "DEFAULT_SCHEMA_CLASS": "drf_spectacular.openapi.AutoSchema",
    "EXCEPTION_HANDLER": "config.api.exception_handler",
}

SPECTACULAR_SETTINGS = {
    "TITLE": "Freeze Debt API",
    "DESCRIPTION": (
        "Upload per-test evidence and patches from CI, sync the freeze ledger, and read "
        'reports. Errors are always {"error": {"code", "message", "details"}}.'
    ),
    "VERSION": "1",
    "SCHEMA_PATH_PREFIX": r"/api/v1",
    "SERVE_INCLUDE_SCHEMA": False,
    "COMPONENT_SPLIT_REQUEST": True,
    # Runs and reports both have a "status"; name each set of choices after its owner.
    "POSTPROCESSING_HOOKS": [
        "drf_spectacular.hooks.postprocess_schema_enums",
        "config.api_docs.require_request_bodies",
    ],
    "ENUM_NAME_OVERRIDES": {
        "RunStatusEnum": "evidence.models.Run.Status",
        "ReportStatusEnum": "evidence.models.Report.Status",
        "ReportVerdictEnum": "evidence.models.Report.Verdict",
    },
}

# --- Upload limits (section 6) -------------------------------------------------------------

FREEZEDEBT_MAX_UPLOAD_BYTES = env_int("FREEZEDEBT_MAX_UPLOAD_BYTES", default=64 << 20, min_value=1)
FREEZEDEBT_MAX_DECOMPRESSED_BYTES = env_int(
    "FREEZEDEBT_MAX_DECOMPRESSED_BYTES", default=512 << 20, min_value=1
)
FREEZEDEBT_MAX_RECORDS = env_int("FREEZEDEBT_MAX_RECORDS", default=2_000_000, min_value=1)
FREEZEDEBT_MAX_NODEID_LENGTH = env_int("FREEZEDEBT_MAX_NODEID_LENGTH", default=4096, min_value=1)
FREEZEDEBT_UPLOADS_PER_MINUTE = env_int("FREEZEDEBT_UPLOADS_PER_MINUTE", default=120, min_value=1)
# Unknown or revoked tokens one client address may send per minute before answers turn 429.
FREEZEDEBT_BAD_TOKENS_PER_MINUTE = env_int(
    "FREEZEDEBT_BAD_TOKENS_PER_MINUTE", default=30, min_value=1
)
# Ordinary JSON bodies (patches, analysis) are read whole; evidence uploads stream instead.
FREEZEDEBT_MAX_JSON_BYTES = env_int("FREEZEDEBT_MAX_JSON_BYTES", default=16 << 20, min_value=1)
DATA_UPLOAD_MAX_MEMORY_SIZE = FREEZEDEBT_MAX_JSON_BYTES
# A ledger file is read whole; a few hundred freezes take a few dozen KiB.
# An analysis is judged at every report of its patch: a cap well under the JSON body's.
FREEZEDEBT_MAX_ANALYSIS_BYTES = env_int(
    "FREEZEDEBT_MAX_ANALYSIS_BYTES", default=8 << 20, min_value=1
)
# The second process: workers' git mirrors of repositories with a git_url (SPEC 5.7).
FREEZEDEBT_MIRROR_DIR = env_str(
    "FREEZEDEBT_MIRROR_DIR", default=str(Path(tempfile.gettempdir()) / "freezedebt-mirrors")
)
FREEZEDEBT_MIRROR_TIMEOUT = env_int("FREEZEDEBT_MIRROR_TIMEOUT", default=300, min_value=1)
FREEZEDEBT_MIRROR_MAX_BYTES = env_int("FREEZEDEBT_MIRROR_MAX_BYTES", default=2 << 30, min_value=1)
FREEZEDEBT_ANALYSIS_BUDGET = env_int("FREEZEDEBT_ANALYSIS_BUDGET", default=300, min_value=1)
FREEZEDEBT_MAX_LEDGER_BYTES = env_int("FREEZEDEBT_MAX_LEDGER_BYTES", default=4 << 20, min_value=1)
# Signed action links in reminder e-mails stop working after this many days.
FREEZEDEBT_LINK_MAX_AGE_DAYS = env_int("FREEZEDEBT_LINK_MAX_AGE_DAYS", default=14, min_value=1)

# --- Celery --------------------------------------------------------------------------------

CELERY_BROKER_URL = env_str("CELERY_BROKER_URL", default="redis://127.0.0.1:6379/0")
CELERY_BROKER_CONNECTION_RETRY_ON_STARTUP = True
CELERY_TASK_SERIALIZER = "json"
CELERY_RESULT_SERIALIZER = "json"
CELERY_ACCEPT_CONTENT = ["json"]
CELERY_TASK_IGNORE_RESULT = True
# Tasks are idempotent, so a message is acknowledged only once its work is done and a worker
# killed mid-task hands the message to another worker instead of losing it.
CELERY_TASK_ACKS_LATE = True
CELERY_TASK_REJECT_ON_WORKER_LOST = True
CELERY_WORKER_PREFETCH_MULTIPLIER = 1
CELERY_TASK_ALWAYS_EAGER = False
CELERY_TASK_EAGER_PROPAGATES = True
CELERY_TIMEZONE = TIME_ZONE

# Recovery of runs whose parse task was lost (broker down at upload, worker killed): every
# FREEZEDEBT_SWEEP_SECONDS the sweep enqueues again the runs received longer ago than that, so
# such a run is parsed within about twice that (plus its parse). A message a killed worker had
# taken is also handed out again by Redis after the visibility timeout; that copy finds the
# run parsed and does nothing. The timeout stays above the longest parse (a 2,000,000-record
# run), or a slow parse would be started twice (harmless, but twice the work).
FREEZEDEBT_SWEEP_SECONDS = env_int("FREEZEDEBT_SWEEP_SECONDS", default=60, min_value=1)
CELERY_BROKER_TRANSPORT_OPTIONS = {
    "visibility_timeout": env_int("CELERY_VISIBILITY_TIMEOUT", default=1800, min_value=60)
}

# Each entry expires just before its next run so a backlog never piles up duplicate sweeps.
CELERY_BEAT_SCHEDULE = {
    "sweep-received-runs": {
        "task": "evidence.tasks.sweep_received_runs",
        "schedule": float(FREEZEDEBT_SWEEP_SECONDS),
        "options": {"expires": FREEZEDEBT_SWEEP_SECONDS * 0.9},
    },
    "send-freeze-reminders": {
        "task": "ledger.tasks.send_freeze_reminders",
        "schedule": crontab(minute=0),
        "options": {"expires": 3500},
    },
    # After midnight, so yesterday's snapshot is final; charts read only these rows.
    "snapshot-debt": {
        "task": "dashboards.tasks.snapshot_debt",
        "schedule": crontab(hour=0, minute=15),
        "options": {"expires": 23 * 3600},
    },
}

# --- Logging -------------------------------------------------------------------------------

LOGGING = {
    "version": 1,
    "disable_existing_loggers": False,
    "formatters": {
        "plain": {"format": "%(asctime)s %(levelname)s %(name)s %(message)s"},
    },
    "filters": {
        "require_debug_false": {"()": "django.utils.log.RequireDebugFalse"},
        "admin_mail_limit": {"()": "config.errormail.AdminMailFilter"},
    },
    "handlers": {
        "console": {"class": "logging.StreamHandler", "formatter": "plain"},
        # Django's own mail_admins, without 503s and health probes, and rate-limited.
        "mail_admins": {
            "class": "django.utils.log.AdminEmailHandler",
            "level": "ERROR",
            "filters": ["require_debug_false", "admin_mail_limit"],
        },
    },
    "loggers": {
        # Replaces Django's default "django" logger, whose mail_admins handler mails every 5xx.
        "django": {"handlers": ["mail_admins"], "level": "INFO"},
    },
    "root": {"handlers": ["console"], "level": env_str("LOG_LEVEL", default="INFO")},
}
