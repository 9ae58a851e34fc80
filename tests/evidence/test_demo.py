import datetime as dt

import pytest
from django.contrib.auth import authenticate
from django.core.management import call_command

from evidence.demo import DEMO_PASSWORD, DEMO_USER, demo_load
from evidence.models import Patch, Report, Run
from ledger.models import Freeze, FreezeEvent

TODAY = dt.date(2026, 11, 30)


@pytest.fixture
def demo(db, django_capture_on_commit_callbacks):
    with django_capture_on_commit_callbacks(execute=True):
        assert demo_load(today=TODAY) is True
    return Report.objects.select_related("patch")


def test_demo_reports_show_every_verdict(demo):
    verdicts = {report.verdict for report in demo}
    assert verdicts == {"pass", "block", "pending"}


def test_demo_reports_show_each_patch_problem(demo):
    codes = {p["code"] for report in demo for p in report.body["problems"]}
    assert {
        "head-failed",
        "unaccounted-skip",
        "lost-tests",
        "frozen-surface",
        "expired-freeze",
        "ledger-in-patch",
        "environment-drift",
        "fixture-touched",
        "base-missing",
    } <= codes


def test_demo_ledger_has_active_expiring_expired_and_a_silent_renewal(demo):
    freezes = Freeze.objects.current()
    assert freezes.filter(expires__lt=TODAY).exists()
    assert freezes.filter(expires__gte=TODAY, expires__lte=TODAY + dt.timedelta(days=7)).exists()
    assert freezes.filter(expires__gt=TODAY + dt.timedelta(days=7)).exists()
    assert FreezeEvent.objects.filter(kind="renewed", silent=True).exists()


def test_demo_runs_are_parsed_and_the_login_works(demo):
    assert not Run.objects.exclude(status=Run.Status.READY).exists()
    assert authenticate(username=DEMO_USER, password=DEMO_PASSWORD) is not None


def test_load_demo_twice_changes_nothing(demo):
    counts = (Patch.objects.count(), Run.objects.count(), Freeze.objects.count())
    call_command("load_demo")
    assert (Patch.objects.count(), Run.objects.count(), Freeze.objects.count()) == counts
