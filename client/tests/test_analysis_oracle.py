"""``analyze``: oracle independence (issue 12, "Oracle independence"; seed 003; SPEC 5.7
``co-modified`` and ``unlabeled-path``)."""

from __future__ import annotations

import json
from pathlib import Path
from typing import Any

import pytest
from analysis_repos import Repo, codes, items, problem

MAP = {
    "features": {
        "pricing": {
            "prod": ["src/app/pricing.py"],
            "oracle": ["tests/golden/pricing/**"],
            "test": ["tests/test_pricing.py"],
        },
        "billing": {
            "prod": ["src/app/billing/**"],
            "fixture": ["**/invoice.json"],
            "test": ["tests/billing/**"],
        },
        "package": {"prod": ["src/app/__init__.py"]},
    }
}


def toml_map(document: dict[str, Any]) -> str:
    out = []
    for name, spec in document["features"].items():
        out.append(f"[features.{name}]")
        out.extend(f"{kind} = {json.dumps(paths)}" for kind, paths in spec.items())
        out.append("")
    return "\n".join(out)


def render(document: dict[str, Any], fmt: str) -> str:
    return json.dumps(document, indent=2) + "\n" if fmt == "json" else toml_map(document)


BASE = {
    "src/app/__init__.py": "",
    "src/app/pricing.py": "def price(n):\n    return n * 10\n",
    "src/app/billing/__init__.py": "",
    "src/app/billing/calc.py": "def bill(n):\n    return n + 1\n",
    "src/app/misc.py": "def misc():\n    return 0\n",
    "tests/golden/pricing/out.json": '{"price": 10}\n',
    "tests/data/invoice.json": '{"total": 2}\n',
    "tests/test_pricing.py": "from app.pricing import price\n\n\ndef test_p():\n"
    "    assert price(1)\n",
    "tests/billing/test_calc.py": "from app.billing.calc import bill\n\n\ndef test_b():\n"
    "    assert bill(1)\n",
}


@pytest.fixture(params=["json", "toml"])
def fmt(request: pytest.FixtureRequest) -> str:
    """The oracle map in JSON (``oracle_map.json``) and in TOML (``oracle_map.toml``)."""
    value: str = request.param
    return value


def map_path(fmt: str) -> str:
    return f"oracle_map.{fmt}"


def make(tmp_path: Path, fmt: str) -> tuple[Repo, tuple[str, str]]:
    repo = Repo(tmp_path / "repo")
    document = json.loads(json.dumps(MAP))
    document["features"]["package"]["prod"] = ["src/app/__init__.py", map_path(fmt)]
    repo.base({**BASE, map_path(fmt): render(document, fmt)})
    return repo, ("--oracle-map", map_path(fmt))


def test_prod_and_its_oracle_changed_together(tmp_path: Path, fmt: str) -> None:
    repo, flags = make(tmp_path, fmt)
    repo.patch(
        {
            "src/app/pricing.py": "def price(n):\n    return n * 11\n",
            "tests/golden/pricing/out.json": '{"price": 11}\n',
        }
    )
    data = repo.analyze(*flags)
    assert data["oracle"]["co_modified"] == [
        {
            "feature": "pricing",
            "prod": ["src/app/pricing.py"],
            "oracle": ["tests/golden/pricing/out.json"],
        }
    ]
    assert {"src/app/pricing.py", "tests/golden/pricing/out.json"} <= items(data, "co-modified")
    assert data["_exit"] == 1


def test_fixture_alias_and_any_depth_pattern(tmp_path: Path, fmt: str) -> None:
    repo, flags = make(tmp_path, fmt)
    repo.patch(
        {
            "src/app/billing/calc.py": "def bill(n):\n    return n + 2\n",
            "tests/data/invoice.json": '{"total": 3}\n',
        }
    )
    data = repo.analyze(*flags)
    rows = data["oracle"]["co_modified"]
    assert [r["feature"] for r in rows] == ["billing"]
    assert rows[0]["oracle"] == ["tests/data/invoice.json"]
    assert rows[0]["prod"] == ["src/app/billing/calc.py"]


def test_prod_alone_is_not_co_modified(tmp_path: Path, fmt: str) -> None:
    repo, flags = make(tmp_path, fmt)
    repo.patch({"src/app/pricing.py": "def price(n):\n    return n * 11\n"})
    data = repo.analyze(*flags)
    assert data["oracle"]["co_modified"] == []
    assert "co-modified" not in codes(data)
    assert "unlabeled-path" not in codes(data)


def test_oracle_of_another_feature_is_not_co_modified(tmp_path: Path, fmt: str) -> None:
    repo, flags = make(tmp_path, fmt)
    repo.patch(
        {
            "src/app/pricing.py": "def price(n):\n    return n * 11\n",
            "tests/data/invoice.json": '{"total": 3}\n',
        }
    )
    data = repo.analyze(*flags)
    assert data["oracle"]["co_modified"] == []


def test_changed_path_no_feature_claims_is_unlabeled(tmp_path: Path, fmt: str) -> None:
    repo, flags = make(tmp_path, fmt)
    repo.patch(
        {
            "src/app/misc.py": "def misc():\n    return 1\n",
            "src/app/pricing.py": "def price(n):\n    return n * 11\n",
            "README.md": "new\n",
        }
    )
    data = repo.analyze(*flags)
    assert data["oracle"]["unlabeled"] == ["README.md", "src/app/misc.py"]
    assert items(data, "unlabeled-path") == {"README.md", "src/app/misc.py"}


def test_unlabeled_path_fails_closed(tmp_path: Path, fmt: str) -> None:
    # "fail closed": a path no feature claims is a finding, never silently passed over. Its
    # default severity is warn (issue 13's policy defaults); the repository's policy may make
    # it block.
    repo, flags = make(tmp_path, fmt)
    repo.patch({"src/app/misc.py": "def misc():\n    return 1\n", "tests/test_misc.py": ""})
    data = repo.analyze(*flags)
    found = problem(data, "unlabeled-path")
    assert found["severity"] == "warn"
    assert set(found["items"]) == {"src/app/misc.py", "tests/test_misc.py"}


def test_renamed_path_is_claimed_by_either_side_or_unlabeled(tmp_path: Path, fmt: str) -> None:
    repo, flags = make(tmp_path, fmt)
    repo.mv("src/app/misc.py", "src/app/pricing_extra.py")
    repo.commit("rename")
    data = repo.analyze(*flags)
    # neither path is claimed by any feature: fail closed
    assert "unlabeled-path" in codes(data)


def test_map_changed_by_the_patch_is_a_finding(tmp_path: Path, fmt: str) -> None:
    repo, flags = make(tmp_path, fmt)
    relaxed = json.loads(json.dumps(MAP))
    relaxed["features"]["pricing"]["oracle"] = []
    repo.patch({map_path(fmt): render(relaxed, fmt)})
    data = repo.analyze(*flags)
    flagged = {i for p in data["problems"] for i in p["items"]}
    assert map_path(fmt) in flagged, data["problems"]
    assert data["_exit"] == 1


def test_map_is_read_from_the_base_commit(tmp_path: Path, fmt: str) -> None:
    # the patch drops the oracle from the map while changing code and oracle together
    repo, flags = make(tmp_path, fmt)
    relaxed = json.loads(json.dumps(MAP))
    relaxed["features"]["pricing"]["oracle"] = []
    repo.patch(
        {
            map_path(fmt): render(relaxed, fmt),
            "src/app/pricing.py": "def price(n):\n    return n * 11\n",
            "tests/golden/pricing/out.json": '{"price": 11}\n',
        }
    )
    data = repo.analyze(*flags)
    assert [r["feature"] for r in data["oracle"]["co_modified"]] == ["pricing"]


def test_without_a_map_there_is_no_oracle_finding(tmp_path: Path) -> None:
    repo = Repo(tmp_path / "repo")
    repo.base(BASE)
    repo.patch(
        {
            "src/app/pricing.py": "def price(n):\n    return n * 11\n",
            "tests/golden/pricing/out.json": '{"price": 11}\n',
        }
    )
    data = repo.analyze("--oracle-map", "oracle_map.json")
    assert data["oracle"]["map"] is None
    assert not codes(data) & {"co-modified", "unlabeled-path"}


def test_unreadable_map_is_exit_2_naming_it(tmp_path: Path) -> None:
    repo = Repo(tmp_path / "repo")
    repo.base({**BASE, "oracle_map.json": '{"features": {"a": {"prod": ["src/**"], "oops": []}}}'})
    repo.patch({"src/app/misc.py": "def misc():\n    return 1\n"})
    result = repo.run("--json", "--oracle-map", "oracle_map.json")
    assert result.code == 2
    assert "oracle_map.json" in result.stderr
