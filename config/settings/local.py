"""The embedded default: one process, SQLite, tasks run in-process, e-mail to the console."""

from config.env import env_bool, env_is_set, env_list, env_str

from .base import *  # noqa: F403

DEBUG = env_bool("DEBUG", default=True)
SECRET_KEY = env_str("SECRET_KEY", default="django-insecure-local-only-never-use-in-production")
ALLOWED_HOSTS = env_list("ALLOWED_HOSTS", default=["localhost", "127.0.0.1", "[::1]"])
INTERNAL_IPS = ["127.0.0.1"]

# Serve static files through whitenoise under runserver too, exactly as in production.
INSTALLED_APPS = ["whitenoise.runserver_nostatic", *INSTALLED_APPS]  # noqa: F405

CELERY_TASK_ALWAYS_EAGER = env_bool("CELERY_TASK_ALWAYS_EAGER", default=True)

if not env_is_set("EMAIL_URL") and not env_is_set("EMAIL_HOST"):
    EMAIL_BACKEND = "django.core.mail.backends.console.EmailBackend"
