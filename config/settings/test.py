"""Settings for the test suite: SQLite by default, PostgreSQL when DATABASE_URL is set."""

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

# Tasks run in-process; the end-to-end tests (tests/e2e) start a real worker of their own.
CELERY_TASK_ALWAYS_EAGER = True
