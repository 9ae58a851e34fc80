"""``analyze``: frozen symbols (seed 000 step 6) and candidate tests (seed 001 section 5); SPEC 5.7
``frozen-symbol`` and ``candidate-only``."""

from __future__ import annotations

from pathlib import Path

from analysis_repos import Repo, codes, freeze, items, ledger, symbol

UTIL = """
    def helper(x):
        return x * 2


    class Service:
        def step(self):
            return 1
    """

BASE = {
    "src/app/__init__.py": "",
    "src/app/util.py": UTIL,
    "src/app/report.py": "from app.util import helper\n\n\ndef summary():\n    return helper(1)\n",
    "tests/test_util.py": "from app.util import helper\n\n\ndef test_helper():\n"
    "    assert helper(1) == 2\n",
    "tests/test_report.py": "from app.report import summary\n\n\ndef test_summary():\n"
    "    assert summary() == 2\n",
}

HELPER_TEST = "tests/test_util.py::test_helper"
EXPIRED = "2026-11-20"  # before TODAY (2026-12-01)


def make(tmp_path: Path, freezes: list[dict[str, object]] | None = None, **extra: str) -> Repo:
    repo = Repo(tmp_path / "repo")
    files: dict[str, str] = {**BASE, **extra}
    if freezes is not None:
        files["freeze_ledger.toml"] = ledger(freezes)
    repo.base(files)
    return repo


def change_helper(repo: Repo, **extra: str | None) -> dict[str, object]:
    repo.patch({"src/app/util.py": UTIL.replace("x * 2", "x * 3"), **extra})
    return repo.analyze()


# -- frozen-symbol: blocks_symbols -----------------------------------------------------------------


def test_changed_symbol_in_blocks_symbols_of_active_freeze(tmp_path: Path) -> None:
    repo = make(
        tmp_path, [freeze("FRZ-1", "tests/test_report.py::test_summary", blocks=["helper"])]
    )
    data = change_helper(repo)
    assert items(data, "frozen-symbol") == {"app.util:helper"}
    assert "FRZ-1" in symbol(data, "app.util", "helper")["frozen_by"]
    assert data["_exit"] == 1


def test_blocks_symbols_of_expired_freeze_does_not_count(tmp_path: Path) -> None:
    repo = make(
        tmp_path,
        [freeze("FRZ-1", "tests/test_report.py::test_summary", blocks=["helper"], expires=EXPIRED)],
    )
    data = change_helper(repo)
    assert "frozen-symbol" not in codes(data)
    assert symbol(data, "app.util", "helper")["frozen_by"] == []


def test_freeze_active_through_its_expiry_day(tmp_path: Path) -> None:
    # SPEC 5.2: active when expires >= today
    repo = make(
        tmp_path,
        [
            freeze(
                "FRZ-1",
                "tests/test_report.py::test_summary",
                blocks=["helper"],
                expires="2026-12-01",
            )
        ],
    )
    assert "frozen-symbol" in codes(change_helper(repo))


def test_blocks_symbols_naming_another_symbol_does_not_count(tmp_path: Path) -> None:
    repo = make(
        tmp_path, [freeze("FRZ-1", "tests/test_report.py::test_summary", blocks=["summary"])]
    )
    data = change_helper(repo)
    assert "frozen-symbol" not in codes(data)


def test_blocks_symbols_with_a_qualified_method_name(tmp_path: Path) -> None:
    repo = make(
        tmp_path, [freeze("FRZ-2", "tests/test_report.py::test_summary", blocks=["Service.step"])]
    )
    repo.patch({"src/app/util.py": UTIL.replace("return 1", "return 2")})
    data = repo.analyze()
    assert items(data, "frozen-symbol") == {"app.util:Service.step"}


def test_ledger_is_read_from_the_base_commit(tmp_path: Path) -> None:
    # the patch deletes the freeze that blocks its symbol: the base's ledger still judges it
    repo = make(
        tmp_path, [freeze("FRZ-1", "tests/test_report.py::test_summary", blocks=["helper"])]
    )
    data = change_helper(repo, **{"freeze_ledger.toml": None})
    assert "frozen-symbol" in codes(data)


def test_ledger_flag_names_the_ledger(tmp_path: Path) -> None:
    repo = make(tmp_path)
    repo.write(
        {
            "ops/freezes.toml": ledger(
                [freeze("FRZ-9", "tests/test_report.py::test_summary", blocks=["helper"])]
            )
        }
    )
    repo.commit("ledger", tag="base")
    repo.patch({"src/app/util.py": UTIL.replace("x * 2", "x * 3")})
    assert "frozen-symbol" not in codes(repo.analyze())
    assert "frozen-symbol" in codes(repo.analyze("--ledger", "ops/freezes.toml"))


# -- frozen-symbol: every referencing test is frozen --------------------------------------------


def test_all_referencing_tests_frozen(tmp_path: Path) -> None:
    repo = make(tmp_path, [freeze("FRZ-3", HELPER_TEST)])
    data = change_helper(repo)
    entry = symbol(data, "app.util", "helper")
    assert entry["tests"] == [HELPER_TEST]
    assert "app.util:helper" in items(data, "frozen-symbol")


def test_one_unfrozen_referencing_test_is_evidence(tmp_path: Path) -> None:
    repo = make(
        tmp_path,
        [freeze("FRZ-3", HELPER_TEST)],
        **{
            "tests/test_more.py": "from app.util import helper\n\n\ndef test_more():\n"
            "    assert helper(0) == 0\n"
        },
    )
    data = change_helper(repo)
    assert set(symbol(data, "app.util", "helper")["tests"]) == {
        HELPER_TEST,
        "tests/test_more.py::test_more",
    }
    assert "app.util:helper" not in items(data, "frozen-symbol")


def test_expired_freeze_of_the_only_test_does_not_count(tmp_path: Path) -> None:
    repo = make(tmp_path, [freeze("FRZ-3", HELPER_TEST, expires=EXPIRED)])
    data = change_helper(repo)
    assert "app.util:helper" not in items(data, "frozen-symbol")


def test_frozen_parametrized_test_counts(tmp_path: Path) -> None:
    repo = make(
        tmp_path,
        [freeze("FRZ-4", "tests/test_p.py::test_p")],
        **{
            "tests/test_util.py": "def test_nothing():\n    assert True\n",
            "tests/test_p.py": "import pytest\n\nfrom app.util import helper\n\n\n"
            "@pytest.mark.parametrize('n', [1, 2])\ndef test_p(n):\n    assert helper(n)\n",
        },
    )
    data = change_helper(repo)
    assert symbol(data, "app.util", "helper")["tests"] == ["tests/test_p.py::test_p"]
    assert "app.util:helper" in items(data, "frozen-symbol")


def test_symbol_without_tests_is_not_frozen_symbol(tmp_path: Path) -> None:
    # nothing references it: that is untested, not frozen
    repo = make(
        tmp_path,
        [freeze("FRZ-3", HELPER_TEST)],
        **{"tests/test_util.py": "def test_nothing():\n    assert True\n"},
    )
    data = change_helper(repo)
    assert "frozen-symbol" not in codes(data)


# -- candidate-only --------------------------------------------------------------------------------


def test_only_tests_the_patch_edited_is_candidate_only(tmp_path: Path) -> None:
    repo = make(tmp_path)
    data = change_helper(
        repo,
        **{
            "tests/test_util.py": "from app.util import helper\n\n\ndef test_helper():\n"
            "    assert helper(1) == 3\n"
        },
    )
    assert symbol(data, "app.util", "helper")["tests"] == [HELPER_TEST]
    assert items(data, "candidate-only") == {"app.util:helper"}
    assert symbol(data, "app.util", "helper")["candidate_only"] is True


def test_only_tests_the_patch_added_is_candidate_only(tmp_path: Path) -> None:
    repo = make(tmp_path, **{"tests/test_util.py": "def test_nothing():\n    assert True\n"})
    data = change_helper(
        repo,
        **{
            "tests/test_new.py": "from app.util import helper\n\n\ndef test_new():\n"
            "    assert helper(1) == 3\n"
        },
    )
    assert symbol(data, "app.util", "helper")["tests"] == ["tests/test_new.py::test_new"]
    assert items(data, "candidate-only") == {"app.util:helper"}


def test_inherited_test_as_well_is_not_candidate_only(tmp_path: Path) -> None:
    repo = make(
        tmp_path,
        **{
            "tests/test_more.py": "from app.util import helper\n\n\ndef test_more():\n"
            "    assert helper(0) == 0\n"
        },
    )
    data = change_helper(
        repo,
        **{
            "tests/test_util.py": "from app.util import helper\n\n\ndef test_helper():\n"
            "    assert helper(1) == 3\n"
        },
    )
    assert "candidate-only" not in codes(data)
    assert symbol(data, "app.util", "helper")["candidate_only"] is False


def test_inherited_tests_only_is_not_candidate_only(tmp_path: Path) -> None:
    data = change_helper(make(tmp_path))
    assert "candidate-only" not in codes(data)


def test_renamed_test_file_is_a_candidate(tmp_path: Path) -> None:
    # a test file moved by the patch (with an edit) is the patch's own test file
    repo = make(tmp_path)
    repo.mv("tests/test_util.py", "tests/test_helpers.py")
    data = change_helper(
        repo,
        **{
            "tests/test_helpers.py": "from app.util import helper\n\n\ndef test_helper():\n"
            "    assert helper(1) == 3\n"
        },
    )
    assert items(data, "candidate-only") == {"app.util:helper"}


def test_pure_rename_of_a_test_file_keeps_it_inherited(tmp_path: Path) -> None:
    # assumption: a test file moved without an edit still holds main's bytes: inherited
    repo = make(tmp_path)
    repo.mv("tests/test_util.py", "tests/unit/test_util.py")
    data = change_helper(repo)
    assert symbol(data, "app.util", "helper")["tests"] == ["tests/unit/test_util.py::test_helper"]
    assert "candidate-only" not in codes(data)


def test_freeze_of_a_test_method_node_id(tmp_path: Path) -> None:
    repo = make(
        tmp_path,
        [freeze("FRZ-5", "tests/test_util.py::TestHelper::test_helper")],
        **{
            "tests/test_util.py": "from app.util import helper\n\n\nclass TestHelper:\n"
            "    def test_helper(self):\n        assert helper(1) == 2\n"
        },
    )
    data = change_helper(repo)
    assert symbol(data, "app.util", "helper")["tests"] == [
        "tests/test_util.py::TestHelper::test_helper"
    ]
    assert "app.util:helper" in items(data, "frozen-symbol")


def test_seed_000_json_ledger_with_blocks_symbols(tmp_path: Path) -> None:
    # the seed's own shape: a JSON map keyed by node id
    import json

    seed = {
        "tests/test_report.py::test_summary": {
            "reason": "timezone database drift on CI image",
            "owner": "billing-oncall",
            "opened": "2026-11-28",
            "expires": "2026-12-10",
            "covers": ["src/app/report.py"],
            "blocks_symbols": ["helper"],
        }
    }
    repo = make(tmp_path, **{"ops/flake_freeze.json": json.dumps(seed, indent=2)})
    data = change_helper(repo)
    assert "frozen-symbol" not in codes(data)
    data = repo.analyze("--ledger", "ops/flake_freeze.json")
    assert items(data, "frozen-symbol") == {"app.util:helper"}


def test_unreadable_ledger_is_exit_2_naming_it(tmp_path: Path) -> None:
    repo = make(tmp_path, **{"freeze_ledger.toml": "[[freeze]\nid = 1\n"})
    repo.patch({"src/app/util.py": UTIL.replace("x * 2", "x * 3")})
    result = repo.run("--json")
    assert result.code == 2
    assert "freeze_ledger.toml" in result.stderr
