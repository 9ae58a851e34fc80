"""The cache is optional at run time: pages and counts go on without it."""

from django.test import override_settings
from django.urls import reverse

from config.cache import cache_count, cache_get, cache_set
from tests.dashboards.test_pages import login
from tests.dashboards.test_pages import world as world  # a fixture
from tests.evidence.test_throttles import UNREACHABLE_CACHE


@override_settings(CACHES=UNREACHABLE_CACHE)
def test_cache_helpers_answer_without_a_reachable_cache():
    cache_set("key", "value", 60)
    assert cache_get("key", "default") == "default"
    assert cache_count("counter", timeout=60) is None


def test_cache_count_counts_one_per_call():
    assert [cache_count("counter", timeout=60) for _ in range(3)] == [1, 2, 3]


def test_the_overview_and_its_csv_answer_while_the_cache_is_unreachable(client, world):
    login(client, world["lead"])
    with override_settings(CACHES=UNREACHABLE_CACHE):
        page = client.get(reverse("dashboards:index"))
        csv = client.get(reverse("dashboards:export", args=["overview"]))
    assert page.status_code == 200
    assert "/r/billing/" in page.content.decode()
    assert csv.status_code == 200
