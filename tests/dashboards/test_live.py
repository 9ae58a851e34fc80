"""Today's snapshot follows what is committed (dashboards.live): a new repository's first run,
a ledger version, a report and an owner's answer show on the overview at once, the same on
every page, while the days before stay as their snapshots took them."""

import datetime
import json
import re

import pytest
from django.urls import reverse
from django.utils import timezone

from dashboards import freshness, live
from dashboards.models import DebtSnapshot
from dashboards.tasks import refresh_today
from ledger.links import link_token, link_url
from ledger.models import Freeze, FreezeAction
from tests.ledger.test_sync import freeze_toml

SHA, OTHER_SHA = "a" * 40, "c" * 40


def bearer(token):
    return {"HTTP_AUTHORIZATION": f"Bearer {token}"}


@pytest.fixture
def committed(django_capture_on_commit_callbacks):
    def run(call):
        with django_capture_on_commit_callbacks(execute=True):
            return call()

    return run


@pytest.fixture
def upload(api_client, evidence_token, committed):
    def send(records, *, sha=SHA, branch="main"):
        body = json.dumps({"exit": 0, "records": records}).encode()
        response = committed(
            lambda: api_client.post(
                f"/api/v1/runs?sha={sha}&branch={branch}",
                body,
                content_type="application/json",
                **bearer(evidence_token),
            )
        )
        assert response.status_code == 202, response.content
        return response

    return send


def record(nodeid, outcome="passed", when="call"):
    return {"nodeid": nodeid, "when": when, "outcome": outcome, "xfail": False}


def overview_row(client, slug):
    page = client.get(reverse("dashboards:index")).content.decode()
    row = page[page.index(f'href="/r/{slug}/') :]
    return row[: row.index("</tr>")]


def test_a_new_repositorys_first_run_shows_on_the_overview_at_once(
    client, staff, repository, upload
):
    client.force_login(staff)
    assert "no snapshot yet" in overview_row(client, repository.slug)  # and now cached
    upload(
        [
            record("t.py::a"),
            record("t.py::b", "skipped", "setup"),
            record("t.py::c", "skipped", "setup"),
        ]
    )
    snapshot = DebtSnapshot.objects.get(repository=repository)
    assert (snapshot.day, snapshot.skipped) == (timezone.localdate(), 2)
    row = overview_row(client, repository.slug)
    assert "no snapshot yet" not in row
    assert re.search(r'<td class="num">2</td>', row)


def test_a_run_off_the_default_branch_leaves_the_snapshot_alone(repository, upload):
    upload([record("t.py::a", "skipped", "setup")], branch="feature/x")
    assert not DebtSnapshot.objects.exists()


def test_a_ledger_version_and_an_answer_show_alike_on_every_page(
    client, staff, repository, api_client, ledger_token, committed
):
    client.force_login(staff)
    today = timezone.localdate()
    body = freeze_toml(
        "FRZ-1",
        opened=(today - datetime.timedelta(days=2)).isoformat(),
        expires=(today + datetime.timedelta(days=3)).isoformat(),
    )
    response = committed(
        lambda: api_client.put(
            f"/api/v1/ledger?sha={SHA}",
            body.encode(),
            content_type="application/toml",
            **bearer(ledger_token),
        )
    )
    assert response.status_code == 201
    snapshot = DebtSnapshot.objects.get(repository=repository, day=today)
    assert (snapshot.active, snapshot.expiring, snapshot.unacknowledged) == (1, 1, 1)
    overview_row(client, repository.slug)  # cached with the freeze unacknowledged

    freeze = Freeze.objects.get(freeze_id="FRZ-1")
    url = link_url(
        link_token(freeze=freeze, owner_email="finley@example.com", action="acknowledge")
    )
    page = client.get(url)
    token = re.search(r'name="csrfmiddlewaretoken" value="([^"]+)"', page.content.decode())
    answered = committed(lambda: client.post(url, {"csrfmiddlewaretoken": token and token[1]}))
    assert answered.status_code == 200
    assert FreezeAction.objects.count() == 1
    snapshot.refresh_from_db()
    assert snapshot.unacknowledged == 0
    # The overview (cached before the answer) and the repository page agree.
    row = overview_row(client, repository.slug)
    assert "acknowledged" in row
    repository_page = client.get(reverse("dashboards:repository", args=[repository.slug]))
    assert repository_page.status_code == 200


def test_a_report_counts_in_todays_patches_and_history_stays_as_taken(
    repository, upload, api_client, evidence_token, committed
):
    yesterday = timezone.localdate() - datetime.timedelta(days=1)
    DebtSnapshot.objects.create(repository=repository, day=yesterday, skipped=7)
    upload([record("t.py::a")], sha=SHA, branch="")
    upload([record("t.py::a")], sha=OTHER_SHA, branch="")
    payload = {"ref": "PR-1", "base_sha": SHA, "head_sha": OTHER_SHA}
    committed(
        lambda: api_client.post(
            "/api/v1/patches",
            json.dumps(payload),
            content_type="application/json",
            **bearer(evidence_token),
        )
    )
    today = DebtSnapshot.objects.get(repository=repository, day=timezone.localdate())
    assert (today.patches, today.passed, today.blocked) == (1, 1, 0)
    assert DebtSnapshot.objects.get(repository=repository, day=yesterday).skipped == 7


def test_refreshes_are_debounced_and_a_change_during_one_schedules_another(
    repository, monkeypatch, django_capture_on_commit_callbacks
):
    sent = []
    monkeypatch.setattr(
        refresh_today, "apply_async", lambda args, countdown: sent.append(countdown)
    )
    with django_capture_on_commit_callbacks(execute=True):
        for _ in range(5):  # a burst: one run, its reports, a ledger push...
            live.refresh_later(repository.pk)
    assert sent == [live.REFRESH_DELAY]
    freshness.refresh_started(repository.pk)  # the task begins: what follows is not seen by it
    with django_capture_on_commit_callbacks(execute=True):
        live.refresh_later(repository.pk)
    assert sent == [live.REFRESH_DELAY, live.REFRESH_DELAY]


def test_a_refresh_is_idempotent_and_makes_cached_overviews_stale(repository):
    before = freshness.generation()
    refresh_today(repository.pk)
    first = DebtSnapshot.objects.values().get(repository=repository)
    refresh_today(repository.pk)
    assert DebtSnapshot.objects.values().get(repository=repository) == first
    assert freshness.generation() == before + 2
    refresh_today(987654)  # a repository that is gone: nothing
