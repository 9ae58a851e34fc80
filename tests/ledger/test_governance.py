"""The fixture lock and oracle map synced from the default branch (ledger-scoped tokens), and
an analysis that used other versions judged an analysis-mismatch."""

import copy
import datetime
import hashlib
import json

import pytest

from evidence.models import Patch, Report
from ledger.governance import governance_versions_for
from ledger.models import GovernanceFile
from tests.evidence.analyses import demo_repository

TODAY = datetime.date(2026, 12, 1)
LOCK = "# freezedebt-fixture-lock/1\n" + "ab" * 32 + "  tests/fixtures/prices.json\n"
ORACLE = '{"features": {"pricing": {"prod": ["src/pricing.py"], "oracle": ["tests/fixtures/**"]}}}'


def put(api_client, token, kind, body, *, sha="a" * 40, path=None):
    url = f"/api/v1/governance/{kind}?sha={sha}" + (f"&path={path}" if path else "")
    return api_client.put(
        url, body.encode(), content_type="text/plain", HTTP_AUTHORIZATION=f"Bearer {token}"
    )


def error(response) -> dict:
    return response.json()["error"]


@pytest.mark.parametrize(("kind", "body"), [("fixture-lock", LOCK), ("oracle-map", ORACLE)])
def test_ledger_token_syncs_a_governance_file_and_keeps_each_version(
    api_client, ledger_token, repository, kind, body
):
    first = put(api_client, ledger_token, kind, body)
    assert first.status_code == 201, first.content
    assert first.json()["sha256"] == hashlib.sha256(body.encode()).hexdigest()
    again = put(api_client, ledger_token, kind, body)
    assert (again.status_code, again.json()) == (200, first.json())
    old, new = ("pricing", "prices") if kind == "oracle-map" else ("ab", "cd")
    changed = body.replace(old, new)
    assert put(api_client, ledger_token, kind, changed, sha="b" * 40).status_code == 201
    versions = GovernanceFile.objects.filter(repository=repository).order_by("created_at", "pk")
    assert [v.sha for v in versions] == ["a" * 40, "b" * 40]
    assert versions[0].path == ("fixtures.lock" if kind == "fixture-lock" else "oracle_map.json")


def test_an_evidence_token_can_never_change_governance_files(api_client, evidence_token):
    response = put(api_client, evidence_token, "fixture-lock", LOCK)
    assert response.status_code == 403
    assert not GovernanceFile.objects.exists()


def test_another_file_for_the_same_commit_is_409(api_client, ledger_token):
    put(api_client, ledger_token, "fixture-lock", LOCK)
    response = put(api_client, ledger_token, "fixture-lock", LOCK.replace("ab", "ef"))
    assert response.status_code == 409
    assert GovernanceFile.objects.count() == 1


@pytest.mark.parametrize(
    ("kind", "body", "where"),
    [
        ("fixture-lock", "not a lock\n", "line 1"),
        ("fixture-lock", "# freezedebt-fixture-lock/1\nxyz  a.json\n", "line 2"),
        ("oracle-map", '{"features": {"a": {"prod": []}}}', "features.a.prod"),
        ("oracle-map", "{not json", ""),
    ],
)
def test_a_file_the_analysis_could_not_read_is_400_naming_where(
    api_client, ledger_token, kind, body, where
):
    response = put(api_client, ledger_token, kind, body)
    assert response.status_code == 400
    problems = error(response)["details"][kind]
    assert where in [p["path"] for p in problems] or any(where in p["path"] for p in problems)
    assert not GovernanceFile.objects.exists()


def test_unknown_kind_and_empty_body_are_refused(api_client, ledger_token):
    assert put(api_client, ledger_token, "ledger-two", LOCK).status_code == 404
    assert put(api_client, ledger_token, "oracle-map", "  \n").status_code == 400
    assert not GovernanceFile.objects.exists()


def test_the_version_for_a_base_is_the_one_synced_at_it_else_the_latest(
    api_client, ledger_token, repository
):
    put(api_client, ledger_token, "fixture-lock", LOCK, sha="a" * 40)
    other = LOCK.replace("ab", "cd")
    put(api_client, ledger_token, "fixture-lock", other, sha="b" * 40)
    digest = {text: hashlib.sha256(text.encode()).hexdigest() for text in (LOCK, other)}
    assert governance_versions_for(repository, "a" * 40) == {"fixture_lock": digest[LOCK]}
    assert governance_versions_for(repository, "c" * 40) == {"fixture_lock": digest[other]}


def test_an_analysis_that_used_another_lock_is_an_analysis_mismatch(
    api_client, ledger_token, evidence_token, django_capture_on_commit_callbacks
):
    """The patch's analysis read a lock the default branch never had (say, one the patch's
    own CI wrote): the report says so, and blocks."""
    demo = demo_repository(TODAY)
    patch = demo.patches[1]  # the cosmetic one: nothing else to find
    put(api_client, ledger_token, "oracle-map", demo.oracle_map, sha=demo.base_sha)
    put(api_client, ledger_token, "fixture-lock", demo.fixture_lock, sha=demo.base_sha)

    def declare(ref, analysis):
        with django_capture_on_commit_callbacks(execute=True):
            response = api_client.post(
                "/api/v1/patches",
                json.dumps(
                    {
                        "ref": ref,
                        "base_sha": patch.base_sha,
                        "head_sha": patch.head_sha,
                        "changed": patch.changed,
                        "analysis": analysis,
                    }
                ),
                content_type="application/json",
                HTTP_AUTHORIZATION=f"Bearer {evidence_token}",
            )
        assert response.status_code == 201, response.content
        report = Report.objects.get(patch=Patch.objects.get(ref=ref)).body
        return {p["code"]: p for p in report["problems"]}, report

    same, _ = declare("PR-1", patch.analysis)
    assert "analysis-mismatch" not in same
    tampered = copy.deepcopy(patch.analysis)
    tampered["governance"]["fixture_lock"]["sha256"] = "0" * 64
    problems, report = declare("PR-2", tampered)
    mismatch = problems["analysis-mismatch"]
    assert (mismatch["severity"], mismatch["items"]) == ("block", ["fixture_lock"])
    assert "000000000000 != expected" in mismatch["message"]
    rows = {row["kind"]: row for row in report["analysis"]["governance"]}
    assert rows["fixture_lock"]["matches"] is False
    assert rows["oracle_map"]["matches"] is True
