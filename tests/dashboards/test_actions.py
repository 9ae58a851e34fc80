"""Owners' answers on the dashboards (dashboards/actions.py): every acknowledgement, renewal
request and fixed report shows on the freeze page, the repository page and the overview
("acknowledged 2 days ago"); a renewal request shows to leads as a request with its proposed
reason and never extends the freeze; a handle that names nobody is an "unowned freeze"."""

import datetime
import html
import re

import pytest
import time_machine
from django.urls import reverse
from django.utils import timezone

from dashboards import actions
from evidence.teams import team_create
from ledger.models import Freeze, FreezeAction, Owner
from ledger.selectors import open_renewal_requests
from tests.dashboards.test_pages import login, make_repository
from tests.factories import FreezeFactory, RepositoryFactory, UserFactory

TODAY = datetime.date.today()
# The pages are read "now"; the owners answered before, at fixed times.
NOW = timezone.now().replace(microsecond=0)
TWO_DAYS_AGO = NOW - datetime.timedelta(days=2, minutes=5)
FIVE_HOURS_AGO = NOW - datetime.timedelta(hours=5, minutes=3)


def text(response) -> str:
    """A page's visible text, tags removed and white space collapsed."""
    assert response.status_code == 200
    body = response.content.decode()
    body = re.sub(r"<(script|style)\b.*?</\1>", " ", body, flags=re.DOTALL)
    return re.sub(r"\s+", " ", html.unescape(re.sub(r"<[^>]+>", " ", body))).strip()


def answer(freeze, action, *, at, email="dana@example.com", reason="", version=None, nonce=""):
    with time_machine.travel(at, tick=False):
        return FreezeAction.objects.create(
            freeze=freeze,
            freeze_version=version or freeze.version,
            owner_email=email,
            action=action,
            new_reason=reason,
            nonce=nonce or f"{freeze.pk}-{action}-{at.timestamp()}",
        )


@pytest.fixture
def ledger(db):
    """One repository whose lead sees it: an acknowledged freeze, one with a renewal request
    (and an older request on its previous version), one reported fixed, an unowned one."""
    repository = RepositoryFactory(slug="shop", name="Shop")
    lead = UserFactory(username="lead-of-shop")
    team_create(name="Shop", slug="shop", members=[lead], repositories=[repository])
    Owner.objects.create(handle="team-cart", name="Cart team", email="cart@example.com")

    def freeze(freeze_id, owner, days, **fields):
        return FreezeFactory(
            repository=repository,
            freeze_id=freeze_id,
            owner=owner,
            expires=TODAY + datetime.timedelta(days=days),
            **fields,
        )

    acked = freeze("FRZ-acked", "dana@example.com", 3)
    renewal = freeze("FRZ-renewal", "team-cart", 1, version=2, renewals=1)
    fixed = freeze("FRZ-fixed", "dana@example.com", 10)
    unowned = freeze("FRZ-nobody", "ghost-team", 5)
    answer(acked, "acknowledge", at=TWO_DAYS_AGO)
    # Asked on version 1, which the ledger has renewed since: no longer open.
    answer(renewal, "renewal", at=TWO_DAYS_AGO, version=1, reason="Old request, renewed since")
    answer(
        renewal,
        "renewal",
        at=FIVE_HOURS_AGO,
        email="cart@example.com",
        reason="Gateway vendor ships the fix in December",
    )
    answer(fixed, "acknowledge", at=TWO_DAYS_AGO)
    answer(fixed, "fixed", at=FIVE_HOURS_AGO)
    return {
        "repository": repository,
        "lead": lead,
        "acked": acked,
        "renewal": renewal,
        "fixed": fixed,
        "unowned": unowned,
    }


def freeze_url(freeze) -> str:
    return reverse("dashboards:freeze", args=[freeze.repository.slug, freeze.freeze_id])


# --- the freeze page ----------------------------------------------------------------------


def test_the_freeze_page_lists_every_answer_with_its_time_owner_and_reason(client, ledger):
    login(client, ledger["lead"])
    with time_machine.travel(NOW, tick=False):
        page = text(client.get(freeze_url(ledger["fixed"])))
    assert "Owner's latest answer: reported fixed 5 hours ago by dana@example.com." in page
    answers = page[page.index("Owner's answers") :]
    # Newest first, each with the time since, the exact time, the owner and the answer.
    fixed_at = timezone.localtime(FIVE_HOURS_AGO).strftime("%Y-%m-%d %H:%M")
    acked_at = timezone.localtime(TWO_DAYS_AGO).strftime("%Y-%m-%d %H:%M")
    assert f"5 hours ago {fixed_at} UTC dana@example.com reported fixed" in answers
    assert f"2 days ago {acked_at} UTC dana@example.com acknowledged" in answers
    assert answers.index("reported fixed") < answers.index("acknowledged")


def test_a_renewal_request_shows_as_a_request_with_its_reason_and_extends_nothing(client, ledger):
    renewal = ledger["renewal"]
    expires = renewal.expires
    login(client, ledger["lead"])
    with time_machine.travel(NOW, tick=False):
        page = text(client.get(freeze_url(renewal)))
    assert (
        "Renewal requested by cart@example.com 5 hours ago" in page
        and "proposed reason: Gateway vendor ships the fix in December" in page
    )
    assert "A request only: the freeze keeps its reason and its expiry" in page
    # The request on the version since renewed is history, not an open request.
    assert "Renewal requested by dana@example.com" not in page
    assert "Old request, renewed since" in page  # still in the table of answers
    assert "Expires " + expires.isoformat() in page
    renewal.refresh_from_db()
    assert (renewal.expires, renewal.version, renewal.reason) == (
        expires,
        2,
        "Connection reset by the sandbox payment gateway",
    )


def test_the_freeze_page_without_answers_says_so(client, ledger):
    login(client, ledger["lead"])
    page = text(client.get(freeze_url(ledger["unowned"])))
    assert "Not acknowledged on this version." in page
    assert "The owner has not answered any reminder about this freeze." in page
    assert "unowned freeze" in page


# --- the repository page ------------------------------------------------------------------


def test_the_repository_page_shows_each_freezes_latest_answer(client, ledger):
    login(client, ledger["lead"])
    with time_machine.travel(NOW, tick=False):
        page = text(client.get(reverse("dashboards:repository", args=["shop"])))
    ledger_table = page[page.index("Current ledger") : page.index("Renewal requests")]
    rows = {
        freeze_id: ledger_table[ledger_table.index(freeze_id) :][:400]
        for freeze_id in ("FRZ-acked", "FRZ-renewal", "FRZ-fixed", "FRZ-nobody")
    }
    assert "acknowledged 2 days ago" in rows["FRZ-acked"]
    assert (
        "renewal requested 5 hours ago : Gateway vendor ships the fix in December"
        in rows["FRZ-renewal"]
    )
    assert "reported fixed 5 hours ago" in rows["FRZ-fixed"]
    assert "not acknowledged" in rows["FRZ-nobody"]


def test_the_repository_page_lists_open_renewal_requests_for_leads(client, ledger):
    login(client, ledger["lead"])
    with time_machine.travel(NOW, tick=False):
        page = text(client.get(reverse("dashboards:repository", args=["shop"])))
    box = page[page.index("Renewal requests") : page.index("Ledger history")]
    assert "A request changes nothing by itself" in box
    assert (
        "FRZ-renewal 5 hours ago cart@example.com Gateway vendor ships the fix in December "
        "Connection reset by the sandbox payment gateway " + ledger["renewal"].expires.isoformat()
    ) in box
    assert "Old request, renewed since" not in box


def test_no_renewal_request_is_open_once_the_ledger_renews_or_retires_the_freeze(client, ledger):
    Freeze.objects.filter(pk=ledger["renewal"].pk).update(version=3, renewals=2)
    login(client, ledger["lead"])
    page = text(client.get(reverse("dashboards:repository", args=["shop"])))
    assert "No open renewal requests on the current freezes." in page
    Freeze.objects.filter(pk=ledger["renewal"].pk).update(version=2, current=False)
    assert open_renewal_requests([ledger["renewal"].pk]) == []


def test_a_handle_that_names_nobody_is_an_unowned_freeze(client, ledger):
    login(client, ledger["lead"])
    page = text(client.get(reverse("dashboards:repository", args=["shop"])))
    rows = page[page.index("Current ledger") : page.index("Renewal requests")]
    assert "ghost-team unowned freeze" in rows
    # A directory entry and an e-mail address both name somebody.
    assert rows.count("unowned freeze") == 1
    assert "Cart team team-cart" in rows


# --- the overview -------------------------------------------------------------------------


def test_the_overview_shows_each_repositorys_latest_answer_by_its_unacknowledged_count(
    client, ledger
):
    other = RepositoryFactory(slug="quiet", name="Quiet")
    acked = FreezeFactory(repository=other, owner="dana@example.com")
    silent = RepositoryFactory(slug="silent", name="Silent")
    FreezeFactory(repository=silent, owner="dana@example.com")
    for repository in (other, silent):
        team_create(
            name=repository.name,
            slug=repository.slug,
            members=[ledger["lead"]],
            repositories=[repository],
        )
    answer(acked, "acknowledge", at=TWO_DAYS_AGO)
    login(client, ledger["lead"])
    with time_machine.travel(NOW, tick=False):
        body = client.get(reverse("dashboards:index")).content.decode()
    cells = {}
    for slug in ("shop", "quiet", "silent"):
        row = re.search(rf'<tr>\s*<th scope="row"><a href="/r/{slug}/.*?</tr>', body, re.S)
        cells[slug] = [
            text_of(c) for c in re.findall(r'<td class="num".*?</td>', row.group(0), re.S)
        ]
    # The fourth figure is the unacknowledged count; the latest answer is next to it.
    assert cells["quiet"][3] == "0 acknowledged 2 days ago"
    assert cells["shop"][3] == "0 reported fixed 5 hours ago"
    assert cells["silent"][3] == "0"
    assert not any("ago" in cell for row in cells.values() for cell in row[:3] + row[4:])


def text_of(fragment: str) -> str:
    return re.sub(r"\s+", " ", html.unescape(re.sub(r"<[^>]+>", " ", fragment))).strip()


# --- bounded queries ----------------------------------------------------------------------


@pytest.fixture
def busy(db, staff):
    """Many repositories with freezes answered many times: counts must not grow with them."""
    for number in range(8):
        _, _, freezes = make_repository(f"busy-{number:02d}", patches=3, freezes=6, days=10)
        FreezeAction.objects.filter(freeze__in=freezes).update(created_at=TWO_DAYS_AGO)
        for index, freeze in enumerate(freezes):
            answer(freeze, "renewal", at=FIVE_HOURS_AGO, reason=f"Needs {index} more days")
            answer(freeze, "fixed", at=NOW - datetime.timedelta(hours=1))
    return staff


def test_each_reader_takes_one_query(busy, django_assert_num_queries):
    freezes = list(Freeze.objects.current())
    rows = [{"slug": f"busy-{number:02d}"} for number in range(8)]
    with django_assert_num_queries(1):
        assert len(open_renewal_requests(f.pk for f in freezes)) == len(freezes)
    with django_assert_num_queries(1):
        actions.overview_actions(rows)
    assert all(row["answer"]["verb"] == "reported fixed" for row in rows)
    with django_assert_num_queries(1):
        latest = actions.latest_by_repository(row["slug"] for row in rows)
    assert len(latest) == 8


def test_pages_with_answers_keep_their_query_bounds(client, busy, django_assert_max_num_queries):
    login(client, busy)
    with time_machine.travel(NOW, tick=False), django_assert_max_num_queries(8):
        response = client.get(reverse("dashboards:index"))
    assert "reported fixed 1 hour ago" in text(response)
    with time_machine.travel(NOW, tick=False), django_assert_max_num_queries(16):
        response = client.get(reverse("dashboards:repository", args=["busy-03"]))
    page = text(response)
    assert page.count("Needs 2 more days") == 1
    assert "reported fixed 1 hour ago" in page
    with time_machine.travel(NOW, tick=False), django_assert_max_num_queries(12):
        response = client.get(reverse("dashboards:freeze", args=["busy-03", "FRZ-busy-03-2"]))
    assert "Renewal requested by dana@example.com" in text(response)


def test_every_page_renders_without_any_answer(client, staff):
    repository = RepositoryFactory(slug="bare", name="Bare")
    freeze = FreezeFactory(repository=repository, owner="", expires=None)
    login(client, staff)
    for url in (
        reverse("dashboards:index"),
        reverse("dashboards:repository", args=["bare"]),
        freeze_url(freeze),
    ):
        assert client.get(url).status_code == 200, url
    page = text(client.get(reverse("dashboards:repository", args=["bare"])))
    assert "unowned freeze" in page
    assert "No open renewal requests on the current freezes." in page


@pytest.mark.parametrize(
    "delta",
    [
        datetime.timedelta(seconds=30),
        datetime.timedelta(minutes=1),
        datetime.timedelta(minutes=59, seconds=59),
        datetime.timedelta(hours=1),
        datetime.timedelta(hours=5, minutes=3),
        datetime.timedelta(days=1),
        datetime.timedelta(days=2, minutes=5),
        datetime.timedelta(days=7),
        datetime.timedelta(days=20),
        datetime.timedelta(days=31),
        datetime.timedelta(days=75),
        datetime.timedelta(days=366),
        datetime.timedelta(days=800),
    ],
)
def test_ago_says_what_djangos_timesince_says_in_its_largest_unit(delta):
    from django.utils.timesince import timesince

    when = NOW - delta
    expected = (
        "just now"
        if delta < datetime.timedelta(minutes=1)
        else (f"{timesince(when, NOW, depth=1)} ago")
    )
    assert actions.ago(when, NOW) == expected
