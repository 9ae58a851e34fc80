"""The analysis on the pages: the patch page's caller map, the governance files on the
repository page, blocks_symbols on the freeze page, the require_analysis policy switch."""

import datetime
import re

import pytest
import time_machine
from django.urls import reverse

from evidence.patches import patch_declare
from evidence.reports import report_compute
from evidence.teams import team_create
from freezedebt_ci.changes import parse_name_status
from ledger.governance import governance_sync
from ledger.models import GovernanceFile, Policy
from ledger.sync import ledger_sync
from tests.evidence.analyses import demo_repository
from tests.factories import FreezeFactory, ReportFactory, RepositoryFactory, UserFactory

TODAY = datetime.date(2026, 12, 1)


@pytest.fixture
def frozen_today():
    with time_machine.travel(datetime.datetime(2026, 12, 1, 12, tzinfo=datetime.UTC), tick=False):
        yield


@pytest.fixture
def shop(db, frozen_today):
    """A repository whose ledger, lock and oracle map are the demo git repository's, with its
    two patches declared with their real analyses, and a lead who sees it."""
    demo = demo_repository(TODAY)
    repository = RepositoryFactory(slug="shop")
    lead = UserFactory(username="lead-of-shop")
    team_create(name="Shop", slug="shop", members=[lead], repositories=[repository])
    ledger_sync(
        repository=repository, sha=demo.base_sha, raw=demo.ledger, path="freeze_ledger.toml"
    )
    for kind, text in (("fixture_lock", demo.fixture_lock), ("oracle_map", demo.oracle_map)):
        governance_sync(repository=repository, kind=kind, sha=demo.base_sha, data=text.encode())
    patches = {}
    for demo_patch in demo.patches:
        declared = patch_declare(
            repository=repository,
            ref=demo_patch.ref,
            base_sha=demo_patch.base_sha,
            head_sha=demo_patch.head_sha,
            changes=parse_name_status("\n".join(demo_patch.changed)),
            analysis=demo_patch.analysis,
        )
        report_compute(patch_id=declared.patch.pk)
        patches[demo_patch.ref] = declared.patch
    return {"repository": repository, "lead": lead, "patches": patches, "demo": demo}


def page(client, user, url) -> str:
    client.force_login(user)
    response = client.get(url)
    assert response.status_code == 200
    return response.content.decode()


def row_of(html: str, marker: str) -> str:
    """The table row holding ``marker``."""
    at = html.index(marker)
    return html[html.rindex("<tr", 0, at) : html.index("</tr>", at)]


def test_patch_page_has_the_caller_map(client, shop):
    patch = shop["patches"]["PR-301"]
    html = page(client, shop["lead"], reverse("dashboards:patch", args=["shop", patch.pk]))
    assert html.index('id="problems"') < html.index('id="caller-map-table"')
    html = html[html.index('id="analysis"') :]
    assert "Class <span" in html and "cross" in html
    rounding = row_of(html, "<code>shop.pricing:round_price</code>")
    assert re.search(
        r"shop\.invoice:invoice_line</code> <span class=\"badge block\">untested", rounding
    )
    assert "shop.cart:cart_total</code><br>" in rounding  # tested: no mark
    # The freeze that blocks it, linked to its page (judged on the server's ledger).
    assert reverse("dashboards:freeze", args=["shop", "FRZ-201"]) not in rounding
    vat = row_of(html, "<code>shop.tax:vat</code>")
    assert f'href="{reverse("dashboards:freeze", args=["shop", "FRZ-201"])}"' in vat
    shipping = row_of(html, "<code>shop.shipping:shipping_cost</code>")
    assert 'test_shipping_cost</code> <span class="badge warn">candidate' in shipping
    discount = row_of(html, "<code>shop.pricing:apply_discount</code>")
    assert "signature changed" in discount
    cone = html[html.index('id="impact-cone"') : html.index('id="fixture-lock"')]
    assert "2 public entries" in cone and "shop.invoice:invoice_line" in cone
    lock = html[html.index('id="fixture-lock"') : html.index('id="co-modified"')]
    assert 'tests/fixtures/prices.json</code></td><td><span class="badge block">mutated' in lock
    assert 'tests/fixtures/discounts.json</code></td><td><span class="badge warn">not in' in lock
    co = html[html.index('id="co-modified"') : html.index('id="analysis-governance"')]
    assert '<th scope="row">pricing</th>' in co and "src/shop/pricing.py" in co
    assert "src/shop/shipping.py" in co  # unlabeled
    governance = html[html.index('id="analysis-governance"') :]
    assert governance.count('<span class="badge yes">same</span>') == 3


def test_patch_page_of_a_clean_analysis_and_of_none(client, shop):
    clean = shop["patches"]["PR-302"]
    html = page(client, shop["lead"], reverse("dashboards:patch", args=["shop", clean.pk]))
    assert "cosmetic" in html and "No public signature changed." in html
    bare = patch_declare(
        repository=shop["repository"], ref="PR-9", base_sha="a" * 40, head_sha="b" * 40, changes=[]
    ).patch
    report_compute(patch_id=bare.pk)
    html = page(client, shop["lead"], reverse("dashboards:patch", args=["shop", bare.pk]))
    assert 'id="no-analysis"' in html
    assert 'id="caller-map-table"' not in html


def test_a_report_stored_before_the_section_still_shows_the_caller_map(client, shop):
    patch = shop["patches"]["PR-301"]
    body = {**patch.report.body}
    del body["analysis"]
    patch.report.delete()
    ReportFactory(patch=patch, status="ready", verdict="block", body=body)
    html = page(client, shop["lead"], reverse("dashboards:patch", args=["shop", patch.pk]))
    html = html[html.index('id="caller-map-table"') :]
    vat = row_of(html, "<code>shop.tax:vat</code>")
    assert reverse("dashboards:freeze", args=["shop", "FRZ-201"]) in vat


def test_repository_page_lists_the_governance_files_versions(client, shop):
    demo = shop["demo"]
    governance_sync(
        repository=shop["repository"],
        kind="fixture_lock",
        sha="f" * 40,
        data=demo.fixture_lock.encode() + b"# rotated\n",
    )
    html = page(client, shop["lead"], reverse("dashboards:repository", args=["shop"]))
    table = html[
        html.index('id="governance-table"') : html.index(
            "</table>", html.index('id="governance-table"')
        )
    ]
    rows = re.findall(
        r"<tr><th scope=\"row\">(fixture lock|oracle map)( <span[^>]*>current</span>)?", table
    )
    assert rows == [
        ("fixture lock", ' <span class="badge active">current</span>'),
        ("fixture lock", ""),
        ("oracle map", ' <span class="badge active">current</span>'),
    ]
    latest = GovernanceFile.objects.filter(kind="fixture_lock").order_by("-created_at").first()
    assert latest.sha256[:16] in table
    assert "ffffffffffff" in table


def test_freeze_page_shows_the_symbols_it_blocks(client, shop):
    html = page(client, shop["lead"], reverse("dashboards:freeze", args=["shop", "FRZ-201"]))
    assert "<code>shop.tax:vat</code>" in row_of(html, "Blocks symbols")


def test_the_policy_form_turns_require_analysis_on(client, shop):
    client.force_login(shop["lead"])
    data = {
        "max_freeze_days": 14,
        "fixture_paths": "tests/fixtures/**",
        "ledger_path": "freeze_ledger.toml",
        "require_analysis": "on",
    }
    response = client.post(reverse("dashboards:policy-edit", args=["shop"]), data)
    assert response.status_code == 302
    assert Policy.objects.get(repository=shop["repository"]).require_analysis is True
    bare = patch_declare(
        repository=shop["repository"], ref="PR-10", base_sha="a" * 40, head_sha="b" * 40, changes=[]
    ).patch
    report = report_compute(patch_id=bare.pk)
    assert "analysis-missing" in {p["code"] for p in report.body["problems"]}
    assert "checked" in row_of(
        client.get(reverse("dashboards:repository", args=["shop"])).content.decode(),
        "require_analysis",
    )


def test_freeze_factory_blocks_symbols_default_is_empty(db):
    assert FreezeFactory().blocks_symbols == []
