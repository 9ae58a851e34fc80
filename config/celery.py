"""The Celery application; its settings live in Django settings under the CELERY_ prefix."""

import os

from celery import Celery

# A worker started without an explicit module gets production settings, which refuse to run
# without their secrets, rather than silently working against a local SQLite file.
os.environ.setdefault("DJANGO_SETTINGS_MODULE", "config.settings.production")

app = Celery("freezedebt")
app.config_from_object("django.conf:settings", namespace="CELERY")
app.autodiscover_tasks()
