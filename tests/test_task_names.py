"""Services enqueue tasks by the name their messages carry (config.celery.task_named): every
name spelt in the code must be a registered task, or the enqueue fails only at run time."""

import re
from pathlib import Path

import pytest

from config.celery import app, task_named

ROOT = Path(__file__).resolve().parent.parent
SPELT = re.compile(r"""task_named\(\s*["']([\w.]+)["']\s*\)""")


def _names_spelt() -> set[str]:
    names = set()
    for package in ("config", "evidence", "ledger", "dashboards"):
        for path in (ROOT / package).rglob("*.py"):
            names.update(SPELT.findall(path.read_text()))
    return names


def test_every_task_a_service_names_is_registered():
    names = _names_spelt()
    assert {"evidence.tasks.ingest_run", "evidence.compute_patch_report"} <= names
    for name in sorted(names):
        assert task_named(name).name == name
    assert names <= set(app.tasks)


def test_an_unknown_name_is_an_error_not_a_silent_no_op():
    with pytest.raises(KeyError):
        task_named("evidence.tasks.no_such_task")
