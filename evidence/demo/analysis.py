"""A small real git repository for the demo (and the tests), and real analyses of its patches.

The demo's patch pages should show what ``freezedebt-ci analyze`` finds on a real patch, so
``load_demo`` builds this repository in a temporary directory and runs the same analyzer CI runs
on it: nothing here is a hand-written analysis. The one patch with findings has each code of
SPEC 5.7; the other is a docstring fix, cosmetic and clean.
"""

import datetime as dt
import hashlib
import os
import subprocess
import tempfile
import textwrap
from dataclasses import dataclass
from pathlib import Path
from typing import Any

from freezedebt_ci.analysis import Options, analyze

_GIT_ENV = {
    "GIT_CONFIG_GLOBAL": os.devnull,
    "GIT_CONFIG_SYSTEM": os.devnull,
    "GIT_CONFIG_NOSYSTEM": "1",
    "GIT_AUTHOR_NAME": "Demo",
    "GIT_AUTHOR_EMAIL": "demo@example.com",
    "GIT_COMMITTER_NAME": "Demo",
    "GIT_COMMITTER_EMAIL": "demo@example.com",
    "GIT_AUTHOR_DATE": "2026-11-30T12:00:00+00:00",
    "GIT_COMMITTER_DATE": "2026-11-30T12:00:00+00:00",
}

PYPROJECT = """
[tool.freezedebt]
src = ["src"]
tests = ["tests"]
fixtures = ["tests/fixtures/**"]
fixture-lock = "fixtures.lock"
oracle-map = "oracle_map.json"
ledger = "freeze_ledger.toml"
"""

ORACLE_MAP = """
{"features": {
  "pricing": {"prod": ["src/shop/pricing.py"], "oracle": ["tests/fixtures/prices.json"],
              "test": ["tests/test_pricing.py"]},
  "cart": {"prod": ["src/shop/cart.py", "src/shop/invoice.py"], "test": ["tests/test_cart.py"]},
  "tax": {"prod": ["src/shop/tax.py"], "oracle": ["tests/fixtures/rates.json"],
          "test": ["tests/test_tax.py"]},
  "governance": {"prod": ["pyproject.toml", "oracle_map.json", "fixtures.lock",
                          "freeze_ledger.toml", "src/shop/__init__.py"]}
}}
"""

BASE_FILES = {
    "pyproject.toml": PYPROJECT,
    "oracle_map.json": ORACLE_MAP,
    "src/shop/__init__.py": '"""A small shop."""\n',
    "src/shop/pricing.py": '''
        """Prices."""


        def round_price(amount):
            """Round to cents."""
            return round(amount, 2)


        def apply_discount(price, percent):
            return round_price(price * (1 - percent / 100))
        ''',
    "src/shop/cart.py": """
        from shop.pricing import round_price


        def cart_total(prices):
            return round_price(sum(prices))
        """,
    "src/shop/invoice.py": """
        from shop.pricing import round_price


        def invoice_line(quantity, price):
            return round_price(quantity * price)
        """,
    "src/shop/tax.py": """
        def vat(amount, rate=0.2):
            return amount * rate
        """,
    "tests/test_pricing.py": """
        import json
        from pathlib import Path

        from shop.pricing import apply_discount, round_price

        CASES = json.loads((Path(__file__).parent / "fixtures" / "prices.json").read_text())


        def test_round_price():
            for case in CASES:
                assert round_price(case["amount"]) == case["rounded"]


        def test_apply_discount():
            assert apply_discount(10.0, 10) == 9.0
        """,
    "tests/test_cart.py": """
        from shop.cart import cart_total


        def test_cart_total():
            assert cart_total([1.0, 2.005]) == 3.0
        """,
    "tests/test_tax.py": """
        from shop.tax import vat


        def test_vat():
            assert vat(100) == 20
        """,
    "tests/fixtures/prices.json": '[{"amount": 2.675, "rounded": 2.67}]\n',
    "tests/fixtures/rates.json": '{"standard": 0.2}\n',
}

# The findings patch: one of each analysis finding.
FINDINGS_PATCH = {
    # local change of a helper with an untested caller (invoice_line): untested-caller
    "src/shop/pricing.py": '''
        """Prices."""
        from decimal import ROUND_HALF_EVEN, Decimal


        def round_price(amount):
            """Round to cents, half to even."""
            return float(Decimal(str(amount)).quantize(Decimal("0.01"), ROUND_HALF_EVEN))


        def apply_discount(price, percent, *, floor=0.0):
            return max(floor, round_price(price * (1 - percent / 100)))
        ''',
    # the oracle of pricing edited with its code (co-modified), a locked fixture mutated
    "tests/fixtures/prices.json": '[{"amount": 2.675, "rounded": 2.68}]\n',
    # a fixture the lock does not know
    "tests/fixtures/discounts.json": '[{"price": 10.0, "percent": 10, "net": 9.0}]\n',
    # a symbol blocked by an active freeze (blocks_symbols), on a path no feature claims
    "src/shop/tax.py": """
        def vat(amount, rate=0.2):
            return round(amount * rate, 2)
        """,
    # new code only the patch's own new test names: candidate-only, and an unlabeled path
    "src/shop/shipping.py": """
        def shipping_cost(weight):
            return 4.5 + 0.5 * weight
        """,
    "tests/test_shipping.py": """
        from shop.shipping import shipping_cost


        def test_shipping_cost():
            assert shipping_cost(2) == 5.5
        """,
}

# A docstring fix: cosmetic, nothing to find.
CLEAN_PATCH = {
    "src/shop/cart.py": '''
        """The cart."""
        from shop.pricing import round_price


        def cart_total(prices):
            return round_price(sum(prices))
        ''',
}


def ledger_text(today: dt.date) -> str:
    """The demo repository's ledger: the VAT test frozen, the freeze blocking ``vat``."""
    opened, expires = today - dt.timedelta(days=2), today + dt.timedelta(days=5)
    return textwrap.dedent(f"""
        [[freeze]]
        id = "FRZ-201"
        test = "tests/test_tax.py::test_vat"
        covers = ["src/shop/tax.py"]
        owner = "team-tax"
        opened = {opened.isoformat()}
        expires = {expires.isoformat()}
        reason = "Timeout against the sandbox VAT rates service"
        class = "timeout"
        blocks_symbols = ["shop.tax:vat"]
        """).lstrip()


@dataclass(frozen=True)
class DemoPatch:
    ref: str
    title: str
    base_sha: str
    head_sha: str
    changed: list[str]
    analysis: dict[str, Any]


@dataclass(frozen=True)
class DemoRepository:
    base_sha: str
    ledger: str
    fixture_lock: str
    oracle_map: str
    patches: list[DemoPatch]


class _Git:
    def __init__(self, root: Path) -> None:
        self.root = root

    def __call__(self, *args: str) -> str:
        done = subprocess.run(  # noqa: S603 - fixed arguments, our own scratch repository
            ["git", "-C", str(self.root), *args],  # noqa: S607 - git from PATH, as CI has it
            capture_output=True,
            check=True,
            env={**os.environ, **_GIT_ENV},
            text=True,
        )
        return done.stdout

    def write(self, files: dict[str, str]) -> None:
        for rel, text in files.items():
            path = self.root / rel
            path.parent.mkdir(parents=True, exist_ok=True)
            path.write_text(textwrap.dedent(text).lstrip("\n"), encoding="utf-8")

    def commit(self, message: str) -> str:
        self("add", "-A")
        self("commit", "-q", "-m", message)
        return self("rev-parse", "HEAD").strip()


def _lock(root: Path) -> str:
    lines = ["# freezedebt-fixture-lock/1"]
    for path in sorted((root / "tests" / "fixtures").rglob("*")):
        if path.is_file():
            digest = hashlib.sha256(path.read_bytes()).hexdigest()
            lines.append(f"{digest}  {path.relative_to(root).as_posix()}")
    return "\n".join(lines) + "\n"


def build_demo_repository(
    root: Path, *, today: dt.date, ledger: str | None = None
) -> DemoRepository:
    """Build the demo repository in ``root`` (an empty directory) and analyze its patches.
    ``ledger``: its ledger file (default :func:`ledger_text`)."""
    git = _Git(root)
    git("init", "-q", "-b", "main")
    git.write(BASE_FILES)
    (root / "freeze_ledger.toml").write_text(ledger or ledger_text(today), encoding="utf-8")
    git.write({"fixtures.lock": _lock(root)})
    base = git.commit("base")
    patches = []
    for ref, title, files in (
        ("PR-301", "Round prices half to even", FINDINGS_PATCH),
        ("PR-302", "Document the cart module", CLEAN_PATCH),
    ):
        git("checkout", "-q", "-b", ref.lower(), base)
        git.write(files)
        head = git.commit(title)
        changed = git("diff", "--name-status", "-M", f"{base}...{head}").splitlines()
        analysis = analyze(Options(repo=root, base=base, head=head, today=today, cache=False))
        patches.append(DemoPatch(ref, title, base, head, changed, analysis))
    git("checkout", "-q", "main")
    read = {name: (root / name).read_text(encoding="utf-8") for name in BASE_FILES}
    return DemoRepository(
        base_sha=base,
        ledger=(root / "freeze_ledger.toml").read_text(encoding="utf-8"),
        fixture_lock=(root / "fixtures.lock").read_text(encoding="utf-8"),
        oracle_map=read["oracle_map.json"],
        patches=patches,
    )


def demo_analyses(*, today: dt.date, ledger: str | None = None) -> DemoRepository:
    """:func:`build_demo_repository` in a temporary directory removed afterwards."""
    with tempfile.TemporaryDirectory(prefix="freezedebt-demo-") as tmp:
        return build_demo_repository(Path(tmp), today=today, ledger=ledger)
