"""Every dashboard page of the demo data in headless Chromium: charts drawn, no script errors,
links followed as a lead would, a CSV downloaded, and a screenshot of each page kept under
``test-output/screenshots/`` for a person to look at."""

import csv
import io
import re

import pytest
from django.urls import reverse

from evidence.demo import DEMO_PASSWORD, DEMO_USER, demo_load
from tests.browser.conftest import SCREENSHOTS

pytestmark = pytest.mark.browser


@pytest.fixture
def demo(transactional_db):
    # No surrounding transaction here (transactional_db), so the demo's on-commit work (report
    # tasks run eagerly) happens as it would in a real process.
    assert demo_load()


def log_in(page) -> None:
    page.goto(reverse("login"))
    page.fill("input[name=username]", DEMO_USER)
    page.fill("input[name=password]", DEMO_PASSWORD)
    page.click("main button[type=submit]")
    page.wait_for_url(re.compile(r"/$"))


def assert_charts_drawn(page, *, at_least: int) -> int:
    """Each chart element holds the SVG plotly.js draws; returns how many there are."""
    charts = page.locator("[data-chart]")
    count = charts.count()
    assert count >= at_least, f"{page.url}: {count} charts, expected at least {at_least}"
    for index in range(count):
        chart = charts.nth(index)
        chart.locator("svg.main-svg").first.wait_for(state="attached")
        assert chart.get_attribute("data-rendered") == "true", page.url
    return count


def shoot(page, name: str) -> None:
    page.screenshot(path=str(SCREENSHOTS / f"{name}.png"), full_page=True)


def test_a_lead_walks_every_page_of_the_demo(demo, browsing, live_server):
    page, errors = browsing.page, browsing.errors
    log_in(page)

    # Overview: one row per repository, three charts across them.
    assert page.locator("h1").inner_text() == "Overview"
    assert_charts_drawn(page, at_least=3)
    repository_links = page.locator("#repositories tbody th a")
    assert repository_links.count() == 3
    shoot(page, "overview")

    # The table's CSV, downloaded as a browser does it.
    with page.expect_download() as download:
        page.click("text=This table as CSV")
    rows = list(csv.reader(io.StringIO(download.value.path().read_text(encoding="utf-8"))))
    assert rows[0][:3] == ["slug", "name", "active"]
    assert len(rows) == 4

    # A chart's numbers: open its table, then download the same numbers.
    panel = page.locator(".chart-panel").first
    panel.locator("summary").click()
    assert panel.locator("table tbody tr").count() > 30
    # Readable as a table: its caption says what and how many days; its header and its dates
    # stay in view while the figures scroll under them.
    assert panel.locator("table caption").inner_text().endswith(" days")
    offset = panel.locator("table").evaluate(
        """table => {
            let box = table.parentElement;
            while (box && box.scrollHeight <= box.clientHeight) box = box.parentElement;
            box.scrollTop = 600;
            box.scrollLeft = 400;
            const date = table.querySelector("tbody tr:nth-child(30) th");
            const frame = box.getBoundingClientRect();
            return [table.querySelector("thead th").getBoundingClientRect().top - frame.top,
                    date.getBoundingClientRect().left - frame.left];
        }"""
    )
    assert 0 <= offset[0] < 5, f"the header scrolled away with the rows ({offset[0]} px)"
    assert 0 <= offset[1] < 5, f"the dates scrolled away with the figures ({offset[1]} px)"
    panel.screenshot(path=str(SCREENSHOTS / "overview-numbers.png"))
    with page.expect_download() as download:
        panel.locator("a[download]").click()
    header = download.value.path().read_text(encoding="utf-8").splitlines()[0]
    assert header == "date,active,expiring,expired,unacknowledged"

    slugs = [link.get_attribute("href").split("/")[2] for link in repository_links.all()]
    verdicts_seen: set[str] = set()
    freeze_shot = sorted_per_file = False
    for slug in slugs:
        page.goto(reverse("dashboards:index"))
        page.click(f"#repositories a[href^='/r/{slug}/']")
        page.wait_for_url(re.compile(rf"/r/{slug}/"))
        assert_charts_drawn(page, at_least=3)
        shoot(page, f"repository-{slug}")

        # A patch of each verdict not seen yet, followed from the repository's patch list.
        patch_rows = page.locator("#patch-table tbody tr")
        targets = {}
        for row in patch_rows.all():
            verdict = row.locator(".badge").inner_text().strip()
            if verdict not in verdicts_seen and verdict not in targets:
                targets[verdict] = row.locator("th a").get_attribute("href")
        for verdict, href in targets.items():
            page.goto(reverse("dashboards:repository", args=[slug]))
            page.click(f"#patch-table a[href='{href}']")
            page.wait_for_url(re.compile(re.escape(href)))
            assert page.locator("#verdict").is_visible()
            assert verdict in page.locator("#verdict strong").inner_text().lower()
            shoot(page, f"patch-{verdict}")
            verdicts_seen.add(verdict)
            if verdict in ("pass", "block") and page.locator("#per-file-table").count():
                # Sorting is a link: the server orders the rows, no script needed.
                page.click("#per-file-table thead a:text('Delta')")
                page.wait_for_url(re.compile(r"sort=delta"))
                page.click("#per-file-table thead a:text('Delta')")
                page.wait_for_url(re.compile(r"sort=-delta"))
                deltas = [
                    int(cell.inner_text().replace("+", ""))
                    for cell in page.locator("#per-file-table tbody tr td:nth-child(4)").all()
                ]
                assert deltas == sorted(deltas, reverse=True)
                sorted_per_file = True

        # A freeze, followed from the current ledger.
        if not freeze_shot:
            page.goto(reverse("dashboards:repository", args=[slug]))
            page.locator("#ledger-table tbody th a").first.click()
            page.wait_for_url(re.compile(rf"/r/{slug}/freezes/"))
            assert page.locator("#blast-radius").is_visible()
            assert page.locator("#versions-table tbody tr").count() >= 1
            shoot(page, "freeze")
            freeze_shot = True

    assert verdicts_seen == {"pass", "block", "pending"}
    assert freeze_shot, "no freeze page was opened"
    assert sorted_per_file, "no passing or blocked patch showed a per-file table to sort"
    assert not errors, "\n".join(errors)


def test_a_frozen_surface_hit_links_to_its_freeze(demo, browsing):
    page, errors = browsing.page, browsing.errors
    log_in(page)
    from evidence.models import Report

    report = next(
        r
        for r in Report.objects.select_related("patch__repository")
        if r.body.get("frozen_surface_hits")
    )
    patch = report.patch
    page.goto(reverse("dashboards:patch", args=[patch.repository.slug, patch.pk]))
    hit = page.locator("#frozen-surface-table tbody th a").first
    freeze_id = hit.inner_text()
    hit.click()
    page.wait_for_url(re.compile(rf"/freezes/{freeze_id}/$"))
    assert freeze_id in page.locator("h1").inner_text()
    shoot(page, "freeze-from-patch")
    assert not errors, "\n".join(errors)


def test_a_lead_changes_the_policy_in_the_browser(demo, browsing):
    page, errors = browsing.page, browsing.errors
    log_in(page)
    page.goto(reverse("dashboards:repository", args=["shop-api"]) + "#policy")
    page.select_option("select[name=severity_environment-drift]", "block")
    page.fill("input[name=max_freeze_days]", "10")
    page.click("text=Save policy")
    page.wait_for_url(re.compile(r"/r/shop-api/"))
    assert "Policy saved" in page.locator(".notice").inner_text()
    changes = page.locator("#policy-changes").inner_text()
    assert "environment-drift" in changes
    assert "max_freeze_days" in changes
    shoot(page, "repository-policy-saved")
    assert not errors, "\n".join(errors)


def test_a_lead_reads_a_patch_caller_map_and_follows_a_frozen_symbol(demo, browsing):
    """The demo's analysed patch (a real analysis of a real git repository): the caller map,
    the freeze that blocks a changed symbol, and the governance files on the repository."""
    page, errors = browsing.page, browsing.errors
    log_in(page)
    from evidence.models import Patch

    patch = Patch.objects.select_related("repository").get(ref="PR-301")
    slug = patch.repository.slug
    page.goto(reverse("dashboards:repository", args=[slug]))
    governance = page.locator("#governance-table")
    assert governance.locator("tbody tr").count() == 2
    page.locator("#governance").scroll_into_view_if_needed()
    governance.screenshot(path=str(SCREENSHOTS / "repository-governance.png"))
    policy = page.locator("form.policy")
    assert policy.locator("input[name=require_analysis]").count() == 1
    policy.screenshot(path=str(SCREENSHOTS / "repository-policy-form.png"))
    page.click(f"#patch-table a[href='{reverse('dashboards:patch', args=[slug, patch.pk])}']")
    page.wait_for_url(re.compile(rf"/patches/{patch.pk}/$"))
    table = page.locator("#caller-map-table")
    assert table.is_visible()
    rounding = table.locator("tr", has_text="shop.pricing:round_price")
    assert "untested" in rounding.locator("td").nth(1).inner_text()
    shipping = table.locator("tr", has_text="shop.shipping:shipping_cost")
    assert "candidate" in shipping.inner_text()
    assert page.locator("#co-modified").is_visible()
    assert "mutated" in page.locator("#fixture-lock").inner_text()
    page.locator("#analysis").scroll_into_view_if_needed()
    shoot(page, "patch-caller-map")
    rounding.locator("a", has_text="FRZ-014").click()
    page.wait_for_url(re.compile(r"/freezes/FRZ-014/$"))
    assert "shop.pricing:round_price" in page.locator("main").inner_text()
    shoot(page, "freeze-blocks-symbols")
    assert not errors, "\n".join(errors)


def test_the_pages_read_at_390_px_without_breaking_an_id(demo, browsing):
    page, errors = browsing.page, browsing.errors
    page.set_viewport_size({"width": 390, "height": 844})
    log_in(page)
    from evidence.models import Report

    patch = Report.objects.select_related("patch__repository").first().patch
    pages = {
        "overview-390": reverse("dashboards:index"),
        "repository-390": reverse("dashboards:repository", args=["shop-api"]),
        "patch-390": reverse("dashboards:patch", args=[patch.repository.slug, patch.pk]),
    }
    for name, url in pages.items():
        page.goto(url)
        if name == "overview-390":
            assert_charts_drawn(page, at_least=3)
        # The page keeps the phone's width: wide tables scroll inside their own box.
        width = page.evaluate("document.documentElement.scrollWidth")
        wide = page.evaluate(
            """Array.from(document.querySelectorAll('main *')).filter(e => {
                 for (let a = e.parentElement; a; a = a.parentElement) {
                   if (getComputedStyle(a).overflowX !== 'visible') return false;
                 }
                 return e.getBoundingClientRect().right > 391;
               }).slice(0, 5).map(e => e.outerHTML.slice(0, 120))"""
        )
        assert width <= 390, f"{url}: {width} px wide: {wide}"
        # No freeze id, node id or path is broken over two lines.
        broken = page.evaluate(
            """Array.from(document.querySelectorAll('main code')).filter(
                 c => c.getClientRects().length > 1).map(c => c.textContent)"""
        )
        assert broken == [], f"{url}: {broken[:5]}"
        shoot(page, name)
    assert not errors, "\n".join(errors)
