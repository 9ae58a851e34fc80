"""``analyze``: ``contract-change`` and the impact cone's public entries (issue 12, "Impact
cone"; seed 001 step 2; SPEC 5.7)."""

from __future__ import annotations

from pathlib import Path

from analysis_repos import Repo, codes, items, problem

CORE = """
    def compute(a, b):
        return a + b


    def _scale(a):
        return a * 2
    """

BASE = {
    "src/app/__init__.py": "",
    "src/app/core.py": CORE,
    "src/app/api.py": """
        from app.core import compute


        def endpoint():
            return compute(1, 2)


        def _internal():
            return compute(0, 0)


        def listing():
            return []
        """,
    "src/app/views.py": """
        from app import core


        def page():
            return core.compute(3, 4)
        """,
    "src/app/standalone.py": "def alone():\n    return 1\n",
    "tests/test_api.py": "from app.api import endpoint\n\n\ndef test_e():\n    assert endpoint()\n",
}


def make(tmp_path: Path) -> Repo:
    repo = Repo(tmp_path / "repo")
    repo.base(BASE)
    return repo


def test_signature_change_is_contract_change_with_its_cone(tmp_path: Path) -> None:
    repo = make(tmp_path)
    repo.patch({"src/app/core.py": CORE.replace("def compute(a, b):", "def compute(a, b, c=0):")})
    data = repo.analyze()
    assert "contract-change" in codes(data)
    assert "app.core:compute" in items(data, "contract-change")
    cone = data["cone"]
    assert cone == sorted(cone)
    # callers of the changed name, and the public functions of the modules importing it
    for entry in ("app.api:endpoint", "app.views:page", "app.api:listing"):
        assert entry in cone, f"{entry} not in cone {cone}"
    # public entries only; modules that do not import the changed module stay out
    assert "app.api:_internal" not in cone
    assert "app.standalone:alone" not in cone
    assert not any(":<module>" in c for c in cone)


def test_cone_count_matches_entries(tmp_path: Path) -> None:
    repo = make(tmp_path)
    repo.patch({"src/app/core.py": CORE.replace("def compute(a, b):", "def compute(a, b, c=0):")})
    data = repo.analyze()
    assert data.get("cone_count", len(data["cone"])) == len(data["cone"])


def test_types_only_change_is_contract_change(tmp_path: Path) -> None:
    repo = make(tmp_path)
    repo.patch(
        {
            "src/app/core.py": CORE.replace(
                "def compute(a, b):", "def compute(a: int, b: int) -> int:"
            )
        }
    )
    data = repo.analyze()
    assert "app.core:compute" in items(data, "contract-change")
    assert "app.api:endpoint" in data["cone"]


def test_removed_public_symbol_is_contract_change(tmp_path: Path) -> None:
    repo = make(tmp_path)
    repo.patch({"src/app/core.py": "def _scale(a):\n    return a * 2\n"})
    data = repo.analyze()
    assert "app.core:compute" in items(data, "contract-change")
    assert "app.api:endpoint" in data["cone"]


def test_local_change_has_no_contract_change(tmp_path: Path) -> None:
    repo = make(tmp_path)
    repo.patch({"src/app/core.py": CORE.replace("return a + b", "return b + a")})
    data = repo.analyze()
    assert data["class"] == "local"
    assert "contract-change" not in codes(data)


def test_private_signature_change_has_no_contract_change(tmp_path: Path) -> None:
    repo = make(tmp_path)
    repo.patch({"src/app/core.py": CORE.replace("def _scale(a):", "def _scale(a, k=2):")})
    data = repo.analyze()
    assert "contract-change" not in codes(data)


def test_contract_change_message_names_the_cone(tmp_path: Path) -> None:
    repo = make(tmp_path)
    repo.patch({"src/app/core.py": CORE.replace("def compute(a, b):", "def compute(a, b, c=0):")})
    found = problem(repo.analyze(), "contract-change")
    assert found["severity"] in ("block", "warn")
    assert found["message"]


def test_large_cone_is_capped_with_an_honest_count(tmp_path: Path) -> None:
    many = "from app.core import compute\n\n" + "".join(
        f"\ndef entry_{i:03}():\n    return compute({i}, 0)\n\n" for i in range(230)
    )
    repo = Repo(tmp_path / "repo")
    repo.base({**BASE, "src/app/many.py": many})
    repo.patch({"src/app/core.py": CORE.replace("def compute(a, b):", "def compute(a, b, c=0):")})
    data = repo.analyze()
    entries = [c for c in data["cone"] if c.startswith("app.many:")]
    count = data.get("cone_count", len(data["cone"]))
    assert count >= 230 + 3
    assert len(data["cone"]) <= count
    assert data["cone"] == sorted(data["cone"])
    assert entries, "the cone lists some of them"
    callers = symbol_entry(data)
    assert callers.get("callers_count", len(callers["callers"])) >= 230


def symbol_entry(data: dict[str, object]) -> dict[str, object]:
    from analysis_repos import symbol

    return symbol(data, "app.core", "compute")
