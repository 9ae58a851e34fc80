"""Settings for the test suite: SQLite by default, PostgreSQL when DATABASE_URL is set."""

from django.core.exceptions import ImproperlyConfigured

from config.env import env_bool, env_is_set

from .base import *  # noqa: F403

DEBUG = False
SECRET_KEY = "test-only-secret-key-of-no-value-outside-the-test-suite"  # noqa: S105
ALLOWED_HOSTS = ["testserver", "localhost"]
SITE_URL = "http://testserver"

# Serve static files from their source directories; the suite never runs collectstatic.
WHITENOISE_AUTOREFRESH = True
WHITENOISE_USE_FINDERS = True

PASSWORD_HASHERS = ["django.contrib.auth.hashers.MD5PasswordHasher"]
EMAIL_BACKEND = "django.core.mail.backends.locmem.EmailBackend"
CACHES = {
    "default": {
        "BACKEND": "django.core.cache.backends.locmem.LocMemCache",
        "LOCATION": "freezedebt-tests",
    }
}

# Eager by default; a live worker only when both a broker and the intent are given.
_LIVE_WORKER = env_bool("FREEZEDEBT_TEST_LIVE_WORKER", default=False)
if _LIVE_WORKER and not env_is_set("CELERY_BROKER_URL"):
    raise ImproperlyConfigured("FREEZEDEBT_TEST_LIVE_WORKER needs CELERY_BROKER_URL.")
CELERY_TASK_ALWAYS_EAGER = not _LIVE_WORKER
