"""The Celery application; its settings live in Django settings under the CELERY_ prefix."""

import os

from celery import Celery, Task

# A worker started without an explicit module gets production settings, which refuse to run
# without their secrets, rather than silently working against a local SQLite file.
os.environ.setdefault("DJANGO_SETTINGS_MODULE", "config.settings.production")

app = Celery("freezedebt")
app.config_from_object("django.conf:settings", namespace="CELERY")
app.autodiscover_tasks()


def task_named(name: str) -> Task:
    """The registered task of that name, for a service to enqueue.

    Services send tasks by name, the name queued messages carry: each app's tasks module
    imports the services its tasks call, so a service importing it back would be a cycle. A
    worker imports every tasks module when it starts; another process (the web, a command,
    tasks run eagerly) imports them at its first lookup, the same autodiscovery.
    """
    if name not in app.tasks:
        app.autodiscover_tasks(force=True)
    return app.tasks[name]
