"""``analyze`` on a small but real-looking package: classes, dataclasses, decorators, aliases,
relative imports, a re-export through the package ``__init__``, parametrized tests and fixtures in
conftest. Each patch is checked against its whole caller map (issue 12, "Done when")."""

from __future__ import annotations

from pathlib import Path
from typing import Any

from analysis_repos import Repo, codes, file_entry, items

PACKAGE = {
    "pyproject.toml": """
        [project]
        name = "inventory"
        version = "0.1.0"

        [tool.freezedebt]
        src = ["src"]
        tests = ["tests"]
        """,
    "src/inventory/__init__.py": '''
        """Inventory: items, stock and what they cost."""

        from .models import Item, Stock
        from .pricing import price_of as price

        __all__ = ["Item", "Stock", "price"]
        ''',
    "src/inventory/models.py": """
        from dataclasses import dataclass, field
        from functools import total_ordering


        @total_ordering
        @dataclass(frozen=True)
        class Item:
            sku: str
            unit_cents: int

            def __lt__(self, other):
                return self.sku < other.sku

            @property
            def label(self):
                return self.sku.upper()


        @dataclass
        class Stock:
            items: dict = field(default_factory=dict)

            def add(self, item, count=1):
                self.items[item] = self.items.get(item, 0) + count
                return self._total()

            def _total(self):
                return sum(self.items.values())

            @classmethod
            def of(cls, *items):
                stock = cls()
                for item in items:
                    stock.add(item)
                return stock
        """,
    "src/inventory/rounding.py": """
        import math


        def round_half_up(value):
            return int(math.floor(value + 0.5))


        def round_even(value):
            return round(value)
        """,
    "src/inventory/pricing.py": """
        from . import models
        from .rounding import round_half_up as rhu

        TAX = 0.2


        def price_of(item: "models.Item", count: int = 1) -> int:
            return rhu(item.unit_cents * count * (1 + TAX))


        def total(stock):
            return sum(price_of(item, n) for item, n in stock.items.items())
        """,
    "src/inventory/reports/__init__.py": "",
    "src/inventory/reports/summary.py": """
        import functools

        from inventory import price

        from .. import rounding as r
        from ..pricing import total


        def cached(fn):
            memo = {}

            @functools.wraps(fn)
            def wrapper(*args):
                if args not in memo:
                    memo[args] = fn(*args)
                return memo[args]

            return wrapper


        @cached
        def headline(stock):
            return f"{total(stock)} cents"


        def rounded_share(part, whole):
            return r.round_half_up(100 * part / whole)


        def first_price(stock):
            return price(min(stock.items))


        class Report:
            def __init__(self, stock):
                self.stock = stock

            def render(self):
                return self._line() + headline(self.stock)

            def _line(self):
                return "-" * 10
        """,
    "src/inventory/cli.py": """
        import inventory.reports.summary as summary_mod
        from inventory.models import Item, Stock


        def main(argv=None):
            stock = Stock.of(Item("a", 100))
            print(summary_mod.Report(stock).render())
            return 0
        """,
    "tests/conftest.py": """
        import pytest

        from inventory.models import Item, Stock


        @pytest.fixture
        def apple():
            return Item("apple", 120)


        @pytest.fixture
        def stock(apple):
            return Stock.of(apple)
        """,
    "tests/test_pricing.py": """
        import pytest

        from inventory.pricing import price_of


        @pytest.mark.parametrize(("count", "expected"), [(1, 144), (2, 288)])
        def test_price_of(apple, count, expected):
            assert price_of(apple, count) == expected
        """,
    "tests/test_reports.py": """
        from inventory.reports import summary


        def test_headline(stock):
            assert summary.headline(stock).endswith("cents")


        class TestReport:
            def test_render(self, stock):
                assert "cents" in summary.Report(stock).render()
        """,
    "tests/test_rounding.py": """
        import pytest

        from inventory.rounding import round_half_up


        @pytest.mark.parametrize("value", [0.5, 1.5])
        def test_half_up(value):
            assert round_half_up(value) == int(value + 0.5)
        """,
}


def make(tmp_path: Path) -> Repo:
    repo = Repo(tmp_path / "inventory")
    repo.base(PACKAGE)
    return repo


def edit(repo: Repo, path: str, old: str, new: str) -> None:
    source = (repo.root / path).read_text()
    assert old in source, (path, old)
    repo.write({path: source.replace(old, new, 1)})


def caller_map(data: dict[str, Any]) -> dict[str, dict[str, list[str]]]:
    return {
        f"{s['module']}:{s['name']}": {
            "callers": sorted(s["callers"]),
            "tests": sorted(s["tests"]),
            "untested_callers": sorted(s["untested_callers"]),
        }
        for s in data["symbols"]
    }


def test_helper_behind_an_alias_and_a_relative_module_import(tmp_path: Path) -> None:
    repo = make(tmp_path)
    edit(
        repo,
        "src/inventory/rounding.py",
        "return int(math.floor(value + 0.5))",
        "return math.floor(value + 0.5)",
    )
    repo.commit("round_half_up returns what floor returns")
    data = repo.analyze()
    assert data["class"] == "local"
    assert caller_map(data) == {
        "inventory.rounding:round_half_up": {
            # price_of calls it as rhu (from .rounding import round_half_up as rhu);
            # rounded_share as r.round_half_up (from .. import rounding as r)
            "callers": [
                "inventory.pricing:price_of",
                "inventory.reports.summary:rounded_share",
            ],
            "tests": ["tests/test_rounding.py::test_half_up"],
            # price_of is named by test_price_of; rounded_share by no test
            "untested_callers": ["inventory.reports.summary:rounded_share"],
        }
    }
    assert items(data, "untested-caller") == {"inventory.reports.summary:rounded_share"}
    assert data["_exit"] == 1


def test_signature_change_reexported_under_another_name(tmp_path: Path) -> None:
    repo = make(tmp_path)
    edit(
        repo,
        "src/inventory/pricing.py",
        'def price_of(item: "models.Item", count: int = 1) -> int:',
        'def price_of(item: "models.Item", count: int = 1, discount: int = 0) -> int:',
    )
    repo.commit("price_of takes a discount")
    data = repo.analyze()
    assert file_entry(data, "src/inventory/pricing.py")["class"] == "contract"
    assert caller_map(data) == {
        "inventory.pricing:price_of": {
            # total in the same module; first_price through `from inventory import price`
            # (the package re-exports price_of as price)
            "callers": ["inventory.pricing:total", "inventory.reports.summary:first_price"],
            # the parametrized test, once, without its parameter ids; it reaches price_of
            # with the conftest fixture apple
            "tests": ["tests/test_pricing.py::test_price_of"],
            "untested_callers": [
                "inventory.pricing:total",
                "inventory.reports.summary:first_price",
            ],
        }
    }
    assert "inventory.pricing:price_of" in items(data, "contract-change")
    cone = set(data["cone"])
    for entry in (
        "inventory.pricing:total",
        "inventory.reports.summary:first_price",
        "inventory.reports.summary:headline",
    ):
        assert entry in cone, (entry, sorted(cone))
    assert "inventory.reports.summary:Report._line" not in cone
    assert "inventory.rounding:round_even" not in cone
    assert data["cone"] == sorted(data["cone"])


def test_private_method_reached_through_self(tmp_path: Path) -> None:
    repo = make(tmp_path)
    edit(
        repo, "src/inventory/models.py", "return sum(self.items.values())", "return len(self.items)"
    )
    repo.commit("_total counts distinct items")
    data = repo.analyze()
    assert data["class"] == "local"
    assert caller_map(data) == {
        "inventory.models:Stock._total": {
            "callers": ["inventory.models:Stock.add"],
            "tests": [],
            "untested_callers": ["inventory.models:Stock.add"],
        }
    }


def test_decorated_function_with_a_tested_caller(tmp_path: Path) -> None:
    repo = make(tmp_path)
    edit(repo, "src/inventory/reports/summary.py", 'f"{total(stock)} cents"', 'f"{total(stock)} ¢"')
    repo.commit("headline uses the cent sign")
    data = repo.analyze()
    assert caller_map(data) == {
        "inventory.reports.summary:headline": {
            "callers": ["inventory.reports.summary:Report.render"],
            "tests": ["tests/test_reports.py::test_headline"],
            # Report.render is named by TestReport::test_render
            "untested_callers": [],
        }
    }
    assert "untested-caller" not in codes(data)


def test_dataclass_field_seen_by_conftest_fixtures(tmp_path: Path) -> None:
    repo = make(tmp_path)
    edit(
        repo,
        "src/inventory/models.py",
        "    unit_cents: int\n",
        "    unit_cents: int\n    vat: bool = True\n",
    )
    repo.commit("items carry a VAT flag")
    data = repo.analyze()
    assert file_entry(data, "src/inventory/models.py")["class"] == "contract"
    item = next(s for s in data["symbols"] if s["name"] == "Item")
    assert item["kind"] == "class"
    # conftest's fixture apple builds an Item: every test using it reaches the class
    for test in ("tests/test_pricing.py::test_price_of", "tests/test_reports.py::test_headline"):
        assert test in item["tests"], (test, item["tests"])
    assert "inventory.cli:main" in item["callers"]
