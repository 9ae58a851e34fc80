"""The dashboard pages (dashboards/views/): who may open them, what they show, the policy form,
the CSV exports, bounded queries, and the rule that no page loads anything from another host."""

import csv
import datetime
import io
import re
from pathlib import Path

import pytest
from django.conf import settings
from django.test import Client
from django.urls import reverse
from django.utils import timezone

from dashboards.models import DebtSnapshot, DebtTotal
from evidence.models import TestResult
from evidence.teams import team_create
from freezedebt_ci.report import ACTIONS
from ledger.models import FreezeAction, FreezeEvent, PolicyChange
from tests.factories import (
    FreezeEventFactory,
    FreezeFactory,
    PatchFactory,
    ReportFactory,
    RepositoryFactory,
    RunFactory,
    TestNameFactory,
    TestResultFactory,
    UserFactory,
)

ROOT = Path(settings.BASE_DIR)
TODAY = datetime.date.today()


def report_body(**overrides):
    body = {
        "format": "freezedebt-report/1",
        "status": "ready",
        "verdict": "block",
        "today": TODAY.isoformat(),
        "figures": {
            "base": {"passed": 10, "failed": 0, "skipped": 1, "xfail": 0},
            "head": {"passed": 19, "failed": 0, "skipped": 2, "xfail": 0},
            "net_executed_delta": 9,
            "earned": 10,
            "borrowed": 9,
        },
        "new_skips": ["tests/test_a.py::test_new_skip"],
        "retired_skips": [],
        "lost": ["tests/test_b.py::test_expensive"],
        "new_xfails": [],
        "frozen_surface_hits": [
            {
                "freeze": "FRZ-billing",
                "test": "tests/test_net.py::test_fetch",
                "paths": ["src/net/client.py"],
                "compensated": False,
            }
        ],
        "expired_freezes": [],
        "per_file": [
            {"file": "tests/test_a.py", "base_passed": 5, "head_passed": 5, "delta": 0,
             "new_skips": 1, "retired_skips": 0, "lost": 0},
            {"file": "tests/test_b.py", "base_passed": 5, "head_passed": 14, "delta": 9,
             "new_skips": 0, "retired_skips": 0, "lost": 1},
            {"file": "tests/test_c.py", "base_passed": 0, "head_passed": 0, "delta": -2,
             "new_skips": 0, "retired_skips": 0, "lost": 0},
        ],
        "problems": [
            {"code": "environment-drift", "severity": "warn",
             "message": "base and head ran in different environments", "items": ["python"]},
            {"code": "frozen-surface", "severity": "block",
             "message": "src/net/client.py is guarded only by frozen FRZ-billing",
             "items": ["src/net/client.py"]},
            {"code": "lost-tests", "severity": "block",
             "message": "1 test passed on base and no longer pass",
             "items": ["tests/test_b.py::test_expensive"]},
        ],
    }  # fmt: skip
    body.update(overrides)
    return body


def make_repository(slug: str, *, patches: int = 1, freezes: int = 1, days: int = 30):
    """A repository with snapshots, patches with reports and runs, freezes with events."""
    repository = RepositoryFactory(slug=slug)
    DebtSnapshot.objects.bulk_create(
        DebtSnapshot(
            repository=repository,
            day=TODAY - datetime.timedelta(days=offset),
            active=2,
            expiring=1,
            expired=offset % 3,
            unacknowledged=1,
            freeze_days=offset,
            skipped=5 + offset % 4,
            patches=3,
            blocked=1,
            passed=2,
        )
        for offset in range(days)
    )
    # As the snapshot job sums what it wrote.
    DebtTotal.objects.refresh(days=[TODAY - datetime.timedelta(days=o) for o in range(days)])
    patch_list = []
    for number in range(patches):
        patch = PatchFactory(repository=repository, ref=f"PR-{number}")
        for sha, python in ((patch.base_sha, "3.12"), (patch.head_sha, "3.13")):
            RunFactory(
                repository=repository, sha=sha, meta={"python": python}, status="ready",
                parsed_at=timezone.now(),
            )  # fmt: skip
        ReportFactory(patch=patch, status="ready", verdict="block", body=report_body())
        patch_list.append(patch)
    freeze_list = []
    for number in range(freezes):
        freeze = FreezeFactory(
            repository=repository,
            freeze_id="FRZ-billing" if number == 0 else f"FRZ-{slug}-{number}",
            expires=TODAY + datetime.timedelta(days=number - 1),
        )
        FreezeEventFactory(freeze=freeze)
        FreezeEventFactory(
            freeze=freeze,
            kind=FreezeEvent.Kind.RENEWED,
            silent=True,
            chain=1,
            before={"expires": "2026-11-01", "reason": "timeout"},
            after={"expires": "2026-11-14", "reason": "timeout"},
        )
        FreezeAction.objects.create(
            freeze=freeze, freeze_version=freeze.version, owner_email="o@example.com",
            action="acknowledge", nonce=f"{slug}-{number}",
        )  # fmt: skip
        freeze_list.append(freeze)
    return repository, patch_list, freeze_list


@pytest.fixture
def world(db):
    billing, billing_patches, billing_freezes = make_repository("billing")
    search, search_patches, search_freezes = make_repository("search")
    lead = UserFactory(username="lead-of-billing")
    team_create(name="Payments", slug="payments", members=[lead], repositories=[billing])
    team_create(name="Search", slug="search", repositories=[search])
    return {
        "lead": lead,
        "billing": (billing, billing_patches[0], billing_freezes[0]),
        "search": (search, search_patches[0], search_freezes[0]),
    }


def page_urls(repository, patch, freeze) -> dict[str, str]:
    slug = repository.slug
    return {
        "repository": reverse("dashboards:repository", args=[slug]),
        "repository-csv": reverse("dashboards:repository-export", args=[slug, "trend"]),
        "patch": reverse("dashboards:patch", args=[slug, patch.pk]),
        "patch-csv": reverse("dashboards:patch", args=[slug, patch.pk]) + "?format=csv",
        "freeze": reverse("dashboards:freeze", args=[slug, freeze.freeze_id]),
    }


def login(client: Client, user) -> Client:
    client.force_login(user)
    return client


# --- who sees what -------------------------------------------------------------------------

REPOSITORY_PAGES = ["repository", "repository-csv", "patch", "patch-csv", "freeze"]


@pytest.mark.parametrize("page", REPOSITORY_PAGES)
@pytest.mark.parametrize(
    ("persona", "sees_billing", "sees_search"),
    [("staff", True, True), ("lead", True, False), ("outsider", False, False)],
)
def test_repository_pages_are_404_for_a_repository_not_theirs(
    client, world, staff, outsider, page, persona, sees_billing, sees_search
):
    user = {"staff": staff, "lead": world["lead"], "outsider": outsider}[persona]
    login(client, user)
    for slug, sees in (("billing", sees_billing), ("search", sees_search)):
        response = client.get(page_urls(*world[slug])[page])
        assert response.status_code == (200 if sees else 404), (slug, page)


@pytest.mark.parametrize("page", REPOSITORY_PAGES)
def test_repository_pages_send_anonymous_visitors_to_the_login(client, world, page):
    response = client.get(page_urls(*world["billing"])[page])
    assert response.status_code == 302
    assert response["Location"].startswith(reverse("login"))


def test_a_patch_or_freeze_of_another_repository_is_404_under_a_visible_one(client, world):
    login(client, world["lead"])
    billing = world["billing"][0]
    _, search_patch, search_freeze = world["search"]
    assert (
        client.get(reverse("dashboards:patch", args=[billing.slug, search_patch.pk])).status_code
        == 404
    )
    # The search freeze id does not exist in billing.
    url = reverse("dashboards:freeze", args=[billing.slug, f"{search_freeze.freeze_id}-x"])
    assert client.get(url).status_code == 404


@pytest.mark.parametrize("export", ["overview", "freeze-debt", "skip-debt", "blocked-share",
                                    "blocked-weekly", "debt-series"])  # fmt: skip
def test_overview_exports_hold_only_visible_repositories(client, world, export):
    login(client, world["lead"])
    response = client.get(reverse("dashboards:export", args=[export]) + "?repo=search")
    assert response.status_code == 200
    assert response["Content-Type"].startswith("text/csv")
    rows = list(csv.reader(io.StringIO(response.content.decode())))
    assert len(rows) == 1  # the header: search is not theirs, so nothing follows
    body = client.get(reverse("dashboards:export", args=[export])).content.decode()
    rows = list(csv.reader(io.StringIO(body)))
    assert len(rows) > 1  # billing's rows
    assert not [row for row in rows[1:] if "search" in row], rows


def test_the_overview_lists_only_the_leads_repositories(client, world):
    login(client, world["lead"])
    page = client.get(reverse("dashboards:index")).content.decode()
    assert reverse("dashboards:repository", args=["billing"]) in page
    assert reverse("dashboards:repository", args=["search"]) not in page


def test_the_policy_of_a_repository_not_theirs_is_404_and_unchanged(client, world):
    login(client, world["lead"])
    response = client.post(
        reverse("dashboards:policy-edit", args=["search"]), policy_post(max_freeze_days=3)
    )
    assert response.status_code == 404
    assert not PolicyChange.objects.exists()


# --- overview ------------------------------------------------------------------------------


def test_overview_sorts_by_debt_and_shows_the_30_day_change(client, db, staff):
    make_repository("low", days=40)
    high, _, _ = make_repository("high", days=40)
    DebtSnapshot.objects.filter(repository=high, day=TODAY).update(expired=9)
    page = login(client, staff).get(reverse("dashboards:index")).content.decode()
    assert page.index("/r/high/") < page.index("/r/low/")
    # 30 days ago "expired" was 0 (offset 30 % 3); today 9 for high.
    assert ">+9<" in page


def test_overview_rows_escape_what_users_named(client, db, staff):
    repository, _, _ = make_repository("odd", days=40)
    repository.name = 'Odd <script>alert("x")</script> & co'
    repository.save()
    page = login(client, staff).get(reverse("dashboards:index")).content.decode()
    row = page[page.index('href="/r/odd/') :]
    row = row[: row.index("</tr>")]
    assert "<script>" not in row
    assert "Odd &lt;script&gt;alert(&quot;x&quot;)&lt;/script&gt; &amp; co</a>" in row
    assert "<code>odd</code>" in row
    # And so does the repository filter's option.
    option = 'value="odd">Odd &lt;script&gt;alert(&quot;x&quot;)&lt;/script&gt; &amp; co (odd)'
    assert option in page


def test_overview_charts_reach_the_page_as_json_data_not_script(client, world, staff):
    page = login(client, staff).get(reverse("dashboards:index")).content.decode()
    for chart in ("freeze-debt", "skip-debt", "blocked-share"):
        assert f'<script id="chart-{chart}" type="application/json">' in page
        assert f'data-chart="chart-{chart}"' in page
    # Every script element is either the vendored library, charts.js, or json_script data.
    for tag in re.findall(r"<script[^>]*>", page):
        assert 'type="application/json"' in tag or " src=" in tag, tag


def test_overview_filters_live_in_the_url(client, world, staff):
    login(client, staff)
    start = (TODAY - datetime.timedelta(days=6)).isoformat()
    response = client.get(reverse("dashboards:index"), {"start": start, "repo": "billing"})
    page = response.content.decode()
    assert "/r/billing/" in page
    assert "/r/search/" not in page
    # The filter shows what was chosen, and offers the rest.
    assert re.search(r'<option value="billing" selected>[^<]*\(billing\)</option>', page)
    assert re.search(r'<option value="search">[^<]*\(search\)</option>', page)
    # The chart's CSV link carries the same filters, so it exports what the page shows.
    csv_link = re.search(r'href="(/export/freeze-debt\.csv\?[^"]+)"', page).group(1)
    rows = client.get(csv_link.replace("&amp;", "&")).content.decode().splitlines()
    assert rows[0] == "date,active,expiring,expired,unacknowledged"
    assert len(rows) == 1 + 7


def test_overview_explains_a_bad_filter_instead_of_failing(client, world, staff):
    response = login(client, staff).get(
        reverse("dashboards:index"), {"start": "yesterday", "end": "2026-01-01"}
    )
    assert response.status_code == 200
    assert "is not a date" in response.content.decode()


def test_overview_shows_an_honest_empty_state_without_snapshots(client, db, staff):
    RepositoryFactory(slug="fresh")
    page = login(client, staff).get(reverse("dashboards:index")).content.decode()
    assert "no snapshot yet" in page
    assert "No snapshots in this range yet" in page


def test_overview_table_as_csv(client, world, staff):
    response = login(client, staff).get(reverse("dashboards:index"), {"format": "csv"})
    rows = list(csv.reader(io.StringIO(response.content.decode())))
    assert rows[0][:3] == ["slug", "name", "active"]
    assert sorted(row[0] for row in rows[1:]) == ["billing", "search"]


# --- repository ----------------------------------------------------------------------------


def test_repository_page_shows_ledger_history_patches_and_policy(client, world):
    _, patch, freeze = world["billing"]
    page = (
        login(client, world["lead"])
        .get(reverse("dashboards:repository", args=["billing"]))
        .content.decode()
    )
    assert reverse("dashboards:freeze", args=["billing", freeze.freeze_id]) in page
    assert "silent renewal" in page
    assert reverse("dashboards:patch", args=["billing", patch.pk]) in page
    assert "acknowledged (I am on it)" in page
    assert 'name="max_freeze_days"' in page
    assert "csrfmiddlewaretoken" in page
    for chart in ("trend", "patch-outcomes", "blocked-share"):
        assert f'data-chart="chart-{chart}"' in page


def test_repository_page_links_each_renewal_chain(client, db, staff):
    repository = RepositoryFactory(slug="shop")
    FreezeFactory(repository=repository, freeze_id="FRZ-once", renewals=1)
    FreezeFactory(repository=repository, freeze_id="tests/t.py::test_a[x&y]", renewals=2)
    FreezeFactory(repository=repository, freeze_id="FRZ-never", renewals=0)
    page = login(client, staff).get(reverse("dashboards:repository", args=["shop"]))
    text = page.content.decode()
    chains = text[text.index("Renewal chains:") :]
    chains = chains[: chains.index("</p>")]
    assert '<a href="/r/shop/freezes/FRZ-once/">FRZ-once</a> renewed 1 time' in chains
    node = reverse("dashboards:freeze", args=["shop", "tests/t.py::test_a[x&y]"])
    assert node.endswith("test_a%5Bx&y%5D/")
    assert f'<a href="{node.replace("&", "&amp;")}">tests/t.py::test_a[x&amp;y]</a>' in chains
    assert "renewed 2 times" in chains
    assert "FRZ-never" not in chains


def policy_post(**changes):
    data = {
        "max_freeze_days": 14,
        "fixture_paths": "tests/fixtures/**\ntests/factories/**\n**/conftest.py",
        "ledger_path": "freeze_ledger.toml",
    }
    data.update(changes)
    return data


def test_a_lead_changes_the_policy_and_the_change_is_audited(client, world):
    login(client, world["lead"])
    response = client.post(
        reverse("dashboards:policy-edit", args=["billing"]),
        policy_post(**{"max_freeze_days": 7, "severity_environment-drift": "block"}),
    )
    assert response.status_code == 302
    change = PolicyChange.objects.get()
    assert change.changed_by == world["lead"]
    assert change.after["max_freeze_days"] == 7
    assert change.after["severities"] == {"environment-drift": "block"}
    page = client.get(response["Location"]).content.decode()
    assert "Policy saved" in page
    assert "environment-drift</code>: default → block" in page


def test_the_policy_form_refuses_bad_values_and_records_nothing(client, world):
    login(client, world["lead"])
    response = client.post(
        reverse("dashboards:policy-edit", args=["billing"]),
        policy_post(max_freeze_days=0, fixture_paths="/etc/passwd"),
    )
    assert response.status_code == 400
    assert 'class="error"' in response.content.decode()
    assert not PolicyChange.objects.exists()


def test_the_policy_form_needs_its_csrf_token(world):
    client = Client(enforce_csrf_checks=True)
    login(client, world["lead"])
    response = client.post(reverse("dashboards:policy-edit", args=["billing"]), policy_post())
    assert response.status_code == 403
    assert not PolicyChange.objects.exists()


# --- patch report --------------------------------------------------------------------------


def test_patch_report_puts_the_verdict_first_and_lists_everything(client, world):
    _, patch, _ = world["billing"]
    page = (
        login(client, world["lead"])
        .get(reverse("dashboards:patch", args=["billing", patch.pk]))
        .content.decode()
    )
    assert page.index('id="verdict"') < page.index('id="problems"') < page.index('id="figures"')
    assert "2 blocking problems and 1 warning" in page
    assert "tests/test_b.py::test_expensive" in page  # lost
    assert "tests/test_a.py::test_new_skip" in page  # new skip, unaccounted
    assert reverse("dashboards:freeze", args=["billing", "FRZ-billing"]) in page  # hit
    assert "⇄ swap" in page  # test_b lost one test and gained ten
    assert "3.12" in page and "3.13" in page  # environment drift from the runs' meta
    assert re.search(r'href="/api/v1/runs/\d+"', page)


@pytest.mark.parametrize(
    ("sort", "expected"),
    [
        ("delta", ["tests/test_c.py", "tests/test_a.py", "tests/test_b.py"]),
        ("-delta", ["tests/test_b.py", "tests/test_a.py", "tests/test_c.py"]),
        ("file", ["tests/test_a.py", "tests/test_b.py", "tests/test_c.py"]),
        ("", ["tests/test_b.py", "tests/test_a.py", "tests/test_c.py"]),  # swaps first
        ("nonsense", ["tests/test_b.py", "tests/test_a.py", "tests/test_c.py"]),
    ],
)
def test_per_file_delta_sorts_through_links(client, world, sort, expected):
    _, patch, _ = world["billing"]
    url = reverse("dashboards:patch", args=["billing", patch.pk])
    page = login(client, world["lead"]).get(url, {"sort": sort}).content.decode()
    table = page[page.index('id="per-file-table"') :]
    order = re.findall(r"<th scope=\"row\"><code>(tests/test_\w\.py)</code>", table)
    assert order == expected
    # Each header is a plain link to the page sorted by that column.
    assert 'href="?sort=lost#per-file"' in table


def test_per_file_delta_as_csv_keeps_the_order(client, world):
    _, patch, _ = world["billing"]
    url = reverse("dashboards:patch", args=["billing", patch.pk])
    response = login(client, world["lead"]).get(url, {"sort": "-delta", "format": "csv"})
    lines = response.content.decode().splitlines()
    assert lines[0] == "file,base_passed,head_passed,delta,new_skips,retired_skips,lost"
    assert lines[1].startswith("tests/test_b.py,")


def test_patch_report_shows_inherited_problems_apart_with_owner_and_what_to_do(client, world):
    repository = world["billing"][0]
    patch = PatchFactory(repository=repository)
    own = {
        "code": "lost-tests",
        "severity": "block",
        "message": "1 test passed on base and no longer pass: 1 now failing",
        "items": ["tests/test_b.py::test_expensive"],
        "origin": "patch",
        "owners": [],
        "action": ACTIONS["lost-tests"],
    }
    inherited = {
        "code": "expired-freeze",
        "severity": "block",
        "message": "the ledger holds 1 expired freeze: FRZ-9 (owner ops, expired 2026-11-01)",
        "items": ["FRZ-9"],
        "origin": "ledger",
        "owners": ["ops"],
        "action": ACTIONS["expired-freeze"],
    }
    ReportFactory(
        patch=patch, status="ready", verdict="block", body=report_body(problems=[inherited, own])
    )
    page = (
        login(client, world["lead"])
        .get(reverse("dashboards:patch", args=["billing", patch.pk]))
        .content.decode()
    )
    own_at, inherited_at = page.index('id="problems"'), page.index('id="inherited"')
    assert own_at < page.index("<code>lost-tests</code>") < inherited_at
    assert page.index("<code>expired-freeze</code>") > inherited_at
    assert f"<strong>What to do:</strong> {ACTIONS['lost-tests']}" in page
    assert "(owner: ops)" in page
    assert "2 blocking problems" in page  # the policy still counts the inherited one


def test_a_pending_patch_says_why_in_the_reports_words(client, world):
    repository = world["billing"][0]
    patch = PatchFactory(repository=repository)
    why = "no ready run of the base commit abc with no label yet; base runs exist with 'py311'"
    ReportFactory(
        patch=patch,
        status="pending",
        verdict="pending",
        body=report_body(status="pending", verdict="pending", pending_reason=why),
    )
    page = (
        login(client, world["lead"])
        .get(reverse("dashboards:patch", args=["billing", patch.pk]))
        .content.decode()
    )
    assert (
        f"The report waits for a run: {why.replace(chr(39), '&#x27;')}. It is not a pass." in page
    )


def test_a_pending_patch_says_it_is_not_a_pass(client, world):
    repository = world["billing"][0]
    patch = PatchFactory(repository=repository)
    page = (
        login(client, world["lead"])
        .get(reverse("dashboards:patch", args=["billing", patch.pk]))
        .content.decode()
    )
    assert "It is not a pass." in page


# --- freeze --------------------------------------------------------------------------------


def test_freeze_page_shows_fields_blast_radius_versions_and_acknowledgements(client, world):
    _, _, freeze = world["billing"]
    page = (
        login(client, world["lead"])
        .get(reverse("dashboards:freeze", args=["billing", freeze.freeze_id]))
        .content.decode()
    )
    assert freeze.nodeid in page
    assert "src/net/**" in page
    assert "silent renewal" in page
    assert "o@example.com" in page
    assert "No runs of this repository yet." not in page  # the patches' runs are there


def test_freeze_page_lists_each_recent_run_with_its_outcome(client, db, staff):
    repository = RepositoryFactory(slug="shop")
    freeze = FreezeFactory(repository=repository, freeze_id="FRZ-1", nodeid="tests/t.py::flaky")
    name = TestNameFactory(repository=repository, nodeid="tests/t.py::flaky")
    moment = timezone.now().replace(microsecond=0) - datetime.timedelta(hours=2)
    failed = RunFactory(
        repository=repository, branch='feat/<b>"x"</b>', label="py3.12", status="ready",
        parsed_at=moment, created_at=moment,
    )  # fmt: skip
    unlabelled = RunFactory(
        repository=repository, branch="", status="ready", parsed_at=moment,
        created_at=moment - datetime.timedelta(hours=1),
    )  # fmt: skip
    TestResultFactory(run=failed, test=name, bucket=TestResult.Bucket.FAILED)
    page = (
        login(client, staff)
        .get(reverse("dashboards:freeze", args=["shop", freeze.freeze_id]))
        .content.decode()
    )
    rows = re.findall(r"<tr><td><a href=[^\n]*?</tr>", page)
    assert len(rows) == 2
    newest, oldest = rows
    assert f'<a href="/api/v1/runs/{failed.pk}">{failed.pk}</a>' in newest
    assert f"<code>{failed.sha[:12]}</code> <small>py3.12</small>" in newest
    assert "<td>feat/&lt;b&gt;&quot;x&quot;&lt;/b&gt;</td>" in newest
    local = timezone.localtime(moment).strftime("%Y-%m-%d %H:%M")
    assert f"<td>{local}</td>" in newest
    assert '<span class="outcome failed">failed</span>' in newest
    # No label, no branch, and the test did not run there.
    assert f"<code>{unlabelled.sha[:12]}</code></td><td>\N{EN DASH}</td>" in oldest
    assert '<span class="outcome not-run">not run</span>' in oldest


# --- query counts --------------------------------------------------------------------------


@pytest.fixture
def crowd(db, staff):
    """Many repositories, patches and freezes: the query counts must not grow with them."""
    for number in range(12):
        make_repository(f"repo-{number:02d}", patches=15, freezes=6, days=60)
    return staff


def test_overview_queries_are_bounded(client, crowd, django_assert_max_num_queries):
    login(client, crowd)
    with django_assert_max_num_queries(8):
        assert client.get(reverse("dashboards:index")).status_code == 200
    with django_assert_max_num_queries(8):
        assert client.get(reverse("dashboards:export", args=["debt-series"])).status_code == 200


def test_repository_page_queries_are_bounded(client, crowd, django_assert_max_num_queries):
    login(client, crowd)
    with django_assert_max_num_queries(16):
        assert client.get(reverse("dashboards:repository", args=["repo-03"])).status_code == 200


def test_patch_and_freeze_page_queries_are_bounded(client, crowd, django_assert_max_num_queries):
    login(client, crowd)
    repository = RepositoryFactory._meta.model.objects.get(slug="repo-05")
    patch = repository.patches.first()
    with django_assert_max_num_queries(10):
        assert (
            client.get(reverse("dashboards:patch", args=["repo-05", patch.pk])).status_code == 200
        )
    with django_assert_max_num_queries(12):
        url = reverse("dashboards:freeze", args=["repo-05", "FRZ-repo-05-3"])
        assert client.get(url).status_code == 200


# --- assets --------------------------------------------------------------------------------

FOREIGN_ASSET = re.compile(
    r"""(?:\b(?:src|href|action)\s*=\s*["']?\s*|url\(\s*["']?|@import\s+["'])(?:https?:)?//""",
    re.IGNORECASE,
)
VENDOR = ROOT / "static" / "vendor"


def asset_files():
    for folder in (ROOT / "templates", ROOT / "static"):
        for path in sorted(folder.rglob("*")):
            # The vendored library's own source is exempt: its comments and code name hosts
            # it never loads from here.
            if path.is_file() and not (path.parent == VENDOR and path.name.endswith(".min.js")):
                yield path


def test_no_template_or_static_file_loads_from_another_host():
    offenders = []
    for path in asset_files():
        text = path.read_text(encoding="utf-8", errors="replace")
        offenders += [
            f"{path.relative_to(ROOT)}: {m.group(0)}" for m in FOREIGN_ASSET.finditer(text)
        ]
    assert not offenders, offenders


def test_the_foreign_asset_check_catches_what_it_should():
    for bad in (
        '<script src="https://assets.example.net/plotly.min.js">',
        "<link href='//fonts.example.com/a.css'>",
        "background: url(http://example.com/x.png)",
        '@import "https://example.com/a.css";',
    ):
        assert FOREIGN_ASSET.search(bad), bad
    assert not FOREIGN_ASSET.search('<script src="/static/vendor/plotly-4.1.1.min.js">')


def test_plotly_is_vendored_with_its_version_and_licence(client, db):
    bundles = sorted(VENDOR.glob("plotly-*.min.js"))
    assert len(bundles) == 1
    version = re.fullmatch(r"plotly-(\d+\.\d+\.\d+)\.min\.js", bundles[0].name).group(1)
    assert f"plotly.js v{version}" in bundles[0].read_text(encoding="utf-8")[:200]
    assert "MIT License" in (VENDOR / "LICENSE-plotly.js.txt").read_text(encoding="utf-8")
    assert version in (VENDOR / "README.md").read_text(encoding="utf-8")
    layout = (ROOT / "templates" / "dashboards" / "layout.html").read_text(encoding="utf-8")
    assert f"vendor/plotly-{version}.min.js" in layout
    # Served by whitenoise from the project's own static files.
    response = client.get(f"{settings.STATIC_URL}vendor/plotly-{version}.min.js")
    assert response.status_code == 200
    assert b"".join(response.streaming_content)[:40].startswith(b"/**\n* plotly.js")


def test_the_overview_cache_never_shows_one_users_repositories_to_another(client, world, staff):
    login(client, staff)
    assert "/r/search/" in client.get(reverse("dashboards:index")).content.decode()
    login(client, world["lead"])
    page = client.get(reverse("dashboards:index")).content.decode()
    assert "/r/billing/" in page
    assert "/r/search/" not in page


def test_a_repeated_overview_is_answered_from_the_cache(
    client, crowd, django_assert_max_num_queries
):
    login(client, crowd)
    client.get(reverse("dashboards:index"))
    # The session, the user and the visible repositories; no snapshot is read again.
    with django_assert_max_num_queries(3):
        assert client.get(reverse("dashboards:index")).status_code == 200


def test_a_freeze_named_by_its_node_id_has_working_links(client, db, staff):
    # The ledger's map form names each freeze by the node id it freezes: slashes, colons and
    # brackets in a URL path segment.
    repository, _, _ = make_repository("mapped", freezes=0)
    nodeid = "tests/unit/test_pricing.py::TestRound::test_half[0.5-up]"
    freeze = FreezeFactory(repository=repository, freeze_id=nodeid, nodeid=nodeid)
    FreezeEventFactory(freeze=freeze)
    login(client, staff)
    page = client.get(reverse("dashboards:repository", args=["mapped"])).content.decode()
    links = set(re.findall(r'href="(/r/mapped/freezes/[^"#]+)"', page))
    assert links == {
        "/r/mapped/freezes/tests/unit/test_pricing.py::TestRound::test_half%5B0.5-up%5D/"
    }
    freeze_page = client.get(links.pop())
    assert freeze_page.status_code == 200
    assert nodeid in freeze_page.content.decode()


@pytest.mark.parametrize("page", ["overview", "repository"])
def test_every_chart_has_its_numbers_as_csv(client, world, page):
    login(client, world["lead"])
    url = (
        reverse("dashboards:index")
        if page == "overview"
        else reverse("dashboards:repository", args=["billing"])
    )
    html = client.get(url).content.decode()
    panels = re.findall(r'<section class="chart-panel".*?</section>', html, re.S)
    assert len(panels) == 3
    for panel in panels:
        chart = re.search(r'data-chart="([^"]+)"', panel)[1]
        link = re.search(r'<a class="csv" href="([^"]+)" download>', panel)
        assert link, f"{chart} has no CSV link"
        response = client.get(link[1].replace("&amp;", "&"))
        assert response.status_code == 200, chart
        assert response["Content-Type"].startswith("text/csv"), chart
        assert len(response.content.decode().splitlines()) > 1, chart


def test_the_repository_page_filters_live_in_the_url(client, world):
    login(client, world["lead"])
    start = (TODAY - datetime.timedelta(days=6)).isoformat()
    page = client.get(reverse("dashboards:repository", args=["billing"]), {"start": start})
    html = page.content.decode()
    assert f'value="{start}"' in html  # the form shows the range it was given
    link = re.search(r'href="(/r/billing/export/trend\.csv\?[^"]+)"', html)[1]
    assert f"start={start}" in link
    rows = client.get(link.replace("&amp;", "&")).content.decode().splitlines()
    assert len(rows) == 1 + 7  # the header, then the seven days of the range


def test_the_header_links_to_owners_api_docs_and_for_staff_the_admin(client, world, staff):
    page = login(client, world["lead"]).get(reverse("dashboards:index")).content.decode()
    header = page[page.index('class="site-header"') : page.index("</header>")]
    assert f'href="{reverse("ledger:owner-list")}"' in header
    assert f'href="{reverse("api:docs")}"' in header
    assert f'href="{reverse("admin:index")}"' not in header
    client.force_login(staff)
    page = client.get(reverse("dashboards:index")).content.decode()
    assert f'href="{reverse("admin:index")}">Admin</a>' in page


def test_the_per_file_delta_lists_the_files_the_patch_changed_first(client, world):
    repository = world["billing"][0]
    patch = PatchFactory(repository=repository)
    unchanged = {"base_passed": 5, "head_passed": 5, "delta": 0, "new_skips": 0,
                 "retired_skips": 0, "lost": 0}  # fmt: skip
    per_file = [
        {"file": "tests/test_a.py", **unchanged},
        {"file": "tests/test_b.py", **unchanged},
        {**unchanged, "file": "tests/test_z.py", "head_passed": 9, "delta": 4},
    ]
    ReportFactory(patch=patch, status="ready", verdict="pass", body=report_body(per_file=per_file))
    url = reverse("dashboards:patch", args=["billing", patch.pk])
    page = login(client, world["lead"]).get(url).content.decode()
    table = page[page.index('id="per-file-table"') :]
    order = re.findall(r"<th scope=\"row\"><code>(tests/test_\w\.py)</code>", table)
    assert order == ["tests/test_z.py", "tests/test_a.py", "tests/test_b.py"]


def test_breadcrumbs_end_with_a_link_not_a_stray_separator(client, world):
    _, patch, freeze = world["billing"]
    login(client, world["lead"])
    for url in (
        reverse("dashboards:repository", args=["billing"]),
        reverse("dashboards:patch", args=["billing", patch.pk]),
        reverse("dashboards:freeze", args=["billing", freeze.freeze_id]),
    ):
        page = client.get(url).content.decode()
        crumbs = page[page.index('<p class="crumbs">') :]
        crumbs = crumbs[: crumbs.index("</p>")]
        assert crumbs.endswith("</a>"), url


def test_an_address_owner_is_shown_once_in_the_ledger(client, world):
    repository = world["billing"][0]
    FreezeFactory(repository=repository, freeze_id="FRZ-ADDR", owner="ops@example.com")
    page = login(client, world["lead"]).get(reverse("dashboards:repository", args=["billing"]))
    html = page.content.decode()
    row = html[html.index("FRZ-ADDR</a>") :]
    row = row[: row.index("</tr>")]
    assert row.count("ops@example.com") == 1
