"""The server's report equals ``freezedebt-ci delta --json`` for the same input (SPEC 3).

Everything goes through the API the way CI sends it: the ledger is synced with a ledger token,
the runs are uploaded and ingested, the patch is declared with its name-status lines. These
tests commit for real, so the report tasks run when the uploads commit, as in production.
"""

import datetime
import json
import textwrap

import pytest
import time_machine
from django.db import connection

from evidence.models import Report
from freezedebt_ci.cli import main as cli
from ledger.services import policy_update

pytestmark = pytest.mark.django_db(transaction=True)

NOON = datetime.datetime(2026, 11, 30, 12, tzinfo=datetime.UTC)
TODAY = "2026-11-30"
BASE_SHA, HEAD_SHA, LEDGER_SHA = "ba5e" * 10, "4ead" * 10, "1ed9" * 10


def record(nodeid, outcome, *, when="call", xfail=False, **extras):
    return {"nodeid": nodeid, "when": when, "outcome": outcome, "xfail": xfail, **extras}


BASE_EVIDENCE = {
    "format": "freezedebt-evidence/1",
    "exit": 0,
    "meta": {"python": "3.11.7", "image_digest": "sha256:aaa", "sha": BASE_SHA},
    "records": [
        record("tests/test_pricing.py::test_half_even", "passed", duration=0.01),
        record("tests/test_pricing.py::test_rounding_boundary", "passed"),
        record("tests/test_pricing.py::test_big_amounts", "passed"),
        record("tests/test_net.py::test_fetch", "skipped", when="setup"),
        record("tests/test_net.py::test_retry", "passed"),
        record("tests/test_tax.py::test_vat", "passed"),
        record("tests/test_tax.py::test_legacy", "skipped", xfail=True),
        record("tests/test_old.py::test_gone", "passed"),
        # A rerun: the last record decides.
        record("tests/test_flaky.py::test_sometimes", "failed", longrepr="Timeout"),
        record("tests/test_flaky.py::test_sometimes", "passed"),
    ],
}
HEAD_EVIDENCE = {
    "exit": 1,
    "meta": {"python": "3.12.1", "image_digest": "sha256:bbb", "sha": HEAD_SHA},
    "records": [
        record("tests/test_pricing.py::test_half_even", "passed"),
        record("tests/test_pricing.py::test_half_up", "passed"),
        record("tests/test_pricing.py::test_rounding_boundary", "skipped", when="setup"),
        record(
            "tests/test_pricing.py::test_big_amounts",
            "failed",
            longrepr="E   AssertionError: assert 1000.01 == 1000.0",
        ),
        record("tests/test_net.py::test_fetch", "skipped", when="setup"),
        record("tests/test_net.py::test_retry", "passed"),
        record("tests/test_tax.py::test_vat", "passed"),
        record("tests/test_tax.py::test_vat", "passed", when="teardown"),
        record("tests/test_tax.py::test_legacy", "skipped", xfail=True),
        record("tests/test_tax.py::test_new_rate", "skipped"),
        record("tests/test_tax.py::test_strict", "passed", xfail=True),
        record("tests/test_flaky.py::test_sometimes", "passed"),
    ],
}
# An earlier attempt of the base commit: superseded by the next one, so it must not count.
BASE_FIRST_ATTEMPT = {
    "exit": 1,
    "records": [record("tests/test_flaky.py::test_sometimes", "failed")],
}

LEDGER = textwrap.dedent("""
    [[freeze]]
    id = "FRZ-014"
    test = "tests/test_pricing.py::test_rounding_boundary"
    covers = ["src/pricing/**"]
    owner = "team-pricing"
    opened = 2026-11-24
    expires = 2026-12-04
    reason = "Timeout against the sandbox tax service"
    class = "timeout"
    compensating_check = "tests/test_pricing.py::test_big_amounts"

    [[freeze]]
    id = "FRZ-020"
    test = "tests/test_net.py::test_fetch"
    covers = ["src/net/**"]
    owner = "ana@example.com"
    opened = 2026-11-25
    expires = 2026-12-02
    reason = "Connection reset by the payments sandbox"
    class = "network-dependent"
    compensating_check = "tests/test_net.py::test_retry"

    [[freeze]]
    id = "FRZ-001"
    test = "tests/test_docs.py::test_build"
    covers = ["docs/**"]
    owner = "team-docs"
    opened = 2026-11-10
    expires = 2026-11-20
    reason = "Timeout in the docs build"

    [[freeze]]
    id = "FRZ-030"
    test = "tests/test_prices.py::test_table"
    covers = ["tests/fixtures/**"]
    owner = "team-pricing"
    opened = 2026-11-25
    expires = 2026-12-20
    reason = "AssertionError: assert 3 == 4"
    class = "assertion"

    [[freeze]]
    id = "FRZ-040"
    test = "tests/test_tax.py::test_lookup"
    covers = ["src/tax/**"]
    owner = "team-tax"
    opened = 2026-11-28
    expires = 2026-12-05
    reason = "Rate limit from the VAT lookup service"
    class = "network-dependent"
    allowed_in_merge = true
    """)

CHANGED = [
    "M\tsrc/pricing/rounding.py",
    "R087\tsrc/net/old_client.py\tsrc/net/client.py",
    "M\tsrc/tax/vat.py",
    "A\ttests/fixtures/prices.json",
    "D\tdocs/guide.md",
]

LEAD_POLICY = {
    "severities": {
        "lost-tests": "warn",
        "environment-drift": "off",
        "fixture-touched": "block",
        "expired-freeze": "warn",
    },
    "max_freeze_days": 30,
    "fixture_paths": ["tests/fixtures/**", "tests/data/**"],
    "ledger_path": "ops/freezes.toml",
}


def bearer(token):
    return {"HTTP_AUTHORIZATION": f"Bearer {token}"}


def upload(api_client, token, sha, evidence, *, attempt=1):
    response = api_client.post(
        f"/api/v1/runs?sha={sha}&branch=main&attempt={attempt}",
        json.dumps(evidence).encode(),
        content_type="application/json",
        **bearer(token),
    )
    assert response.status_code == 202, response.content
    assert response.json()["status"] == "ready"


def offline_report(tmp_path, capsys, *, changed, policy=None):
    """What ``freezedebt-ci delta --json`` prints for the same files."""
    files = {
        "base.json": json.dumps(BASE_EVIDENCE),
        "head.json": json.dumps(HEAD_EVIDENCE),
        "freeze_ledger.toml": LEDGER,
        "changed.txt": "\n".join(changed) + "\n",
    }
    for name, text in files.items():
        (tmp_path / name).write_text(text, encoding="utf-8")
    argv = [
        "delta",
        str(tmp_path / "base.json"),
        str(tmp_path / "head.json"),
        "--ledger",
        str(tmp_path / "freeze_ledger.toml"),
        "--changed",
        str(tmp_path / "changed.txt"),
        "--today",
        TODAY,
        "--json",
    ]
    if policy is not None:
        (tmp_path / "policy.json").write_text(json.dumps(policy), encoding="utf-8")
        argv += ["--policy", str(tmp_path / "policy.json")]
    capsys.readouterr()
    code = cli(argv)
    printed = capsys.readouterr()
    assert code in (0, 1), printed.err
    return json.loads(printed.out)


@pytest.fixture
def frozen_today():
    with time_machine.travel(NOON, tick=False):
        yield


@pytest.mark.usefixtures("frozen_today")
@pytest.mark.parametrize(
    ("policy", "extra_changed"),
    [
        pytest.param(None, [], id="default-policy"),
        pytest.param(None, ["M\tfreeze_ledger.toml"], id="ledger-in-patch"),
        pytest.param(LEAD_POLICY, [], id="lead-policy"),
        pytest.param(LEAD_POLICY, ["M\tops/freezes.toml"], id="lead-policy-ledger-path"),
    ],
)
def test_server_report_equals_offline_delta(
    api_client, repository, evidence_token, ledger_token, tmp_path, capsys, policy, extra_changed
):
    changed = CHANGED + extra_changed
    if policy is not None:
        policy_update(repository=repository, user=None, **policy)
    synced = api_client.put(
        f"/api/v1/ledger?sha={LEDGER_SHA}",
        LEDGER.encode(),
        content_type="application/toml",
        **bearer(ledger_token),
    )
    assert synced.status_code == 201

    # Head first; the patch is declared while the base is missing: pending, never pass.
    upload(api_client, evidence_token, HEAD_SHA, HEAD_EVIDENCE)
    declared = api_client.post(
        "/api/v1/patches",
        {"ref": "PR-7", "base_sha": BASE_SHA, "head_sha": HEAD_SHA, "changed": changed},
        format="json",
        **bearer(evidence_token),
    )
    assert declared.status_code == 201
    assert declared.json()["status"] == "pending"
    report_url = declared.json()["report_url"]
    pending = api_client.get(report_url, **bearer(evidence_token)).json()
    assert (pending["status"], pending["verdict"]) == ("pending", "pending")
    if policy is None:
        assert "base-missing" in [p["code"] for p in pending["problems"]]

    # The base arrives last, in two attempts: the report follows the latest one.
    upload(api_client, evidence_token, BASE_SHA, BASE_FIRST_ATTEMPT, attempt=1)
    upload(api_client, evidence_token, BASE_SHA, BASE_EVIDENCE, attempt=2)
    server = api_client.get(report_url, **bearer(evidence_token)).json()

    offline = offline_report(tmp_path, capsys, changed=changed, policy=policy)
    assert server == offline
    assert server["status"] == "ready"
    assert server == Report.objects.get().body


@pytest.mark.usefixtures("frozen_today")
def test_parity_scenario_exercises_the_rules(tmp_path, capsys):
    """The shared input is rich enough to mean something: most problem codes appear."""
    offline = offline_report(tmp_path, capsys, changed=[*CHANGED, "M\tfreeze_ledger.toml"])
    assert offline["verdict"] == "block"
    assert {p["code"] for p in offline["problems"]} == {
        "environment-drift",
        "expired-freeze",
        "fixture-touched",
        "frozen-surface",
        "head-failed",
        "invalid-freeze",
        "ledger-in-patch",
        "lost-tests",
        "unaccounted-skip",
    }
    assert offline["new_xfails"] == ["tests/test_tax.py::test_strict"]
    hits = {hit["freeze"]: hit["compensated"] for hit in offline["frozen_surface_hits"]}
    assert hits == {"FRZ-014": False, "FRZ-020": True, "FRZ-030": False, "FRZ-040": False}


@pytest.mark.usefixtures("frozen_today")
def test_report_is_recomputed_when_the_missing_base_arrives(api_client, repository, evidence_token):
    upload(api_client, evidence_token, HEAD_SHA, HEAD_EVIDENCE)
    declared = api_client.post(
        "/api/v1/patches",
        {"ref": "PR-8", "base_sha": BASE_SHA, "head_sha": HEAD_SHA},
        format="json",
        **bearer(evidence_token),
    ).json()
    assert Report.objects.get(patch_id=declared["id"]).status == "pending"
    upload(api_client, evidence_token, BASE_SHA, BASE_EVIDENCE)
    report = Report.objects.get()
    assert (report.status, report.verdict) == ("ready", "block")


# --- with an analysis (SPEC 5.7): a real analysis of a real repository's patch ----------------


@pytest.fixture(scope="module")
def demo_repo():
    """The demo repository and the real analyses of its patches (built once, in a temp dir)."""
    from evidence.demo.analysis import demo_analyses

    return demo_analyses(today=datetime.date.fromisoformat(TODAY))


def canonical(report):
    return json.dumps(report, sort_keys=True, indent=2, ensure_ascii=False)


def offline_with_analysis(tmp_path, capsys, *, ledger, changed, analysis, extra=()):
    files = {
        "base.json": json.dumps(BASE_EVIDENCE),
        "head.json": json.dumps(HEAD_EVIDENCE),
        "freeze_ledger.toml": ledger,
        "changed.txt": "\n".join(changed) + "\n",
        "analysis.json": json.dumps(analysis),
    }
    for name, text in files.items():
        (tmp_path / name).write_text(text, encoding="utf-8")
    argv = [
        "delta",
        *(str(tmp_path / name) for name in ("base.json", "head.json")),
        *("--ledger", str(tmp_path / "freeze_ledger.toml")),
        *("--changed", str(tmp_path / "changed.txt")),
        *("--analysis", str(tmp_path / "analysis.json")),
        *("--today", TODAY, "--json"),
        *extra,
    ]
    capsys.readouterr()
    code = cli(argv)
    printed = capsys.readouterr()
    assert code in (0, 1), printed.err
    return printed.out


@pytest.mark.usefixtures("frozen_today")
@pytest.mark.parametrize("ledger_of", ["repository", "other"])
def test_server_report_with_analysis_equals_offline_delta(
    api_client, evidence_token, ledger_token, tmp_path, capsys, demo_repo, ledger_of
):
    """Byte for byte: the server's stored report and ``delta --analysis`` print the same text.
    With the repository's own ledger the freeze blocks a changed symbol; with another ledger it
    does not, and the analysis used a ledger the server does not hold."""
    from freezedebt_ci.report import report_json

    patch = demo_repo.patches[0]
    ledger = demo_repo.ledger if ledger_of == "repository" else LEDGER
    synced = api_client.put(
        f"/api/v1/ledger?sha={LEDGER_SHA}",
        ledger.encode(),
        content_type="application/toml",
        **bearer(ledger_token),
    )
    assert synced.status_code == 201
    extra = []
    if ledger_of == "repository":
        # The default branch's lock and oracle map, on the server and given to delta.
        for kind, text in (
            ("fixture-lock", demo_repo.fixture_lock),
            ("oracle-map", demo_repo.oracle_map),
        ):
            pushed = api_client.put(
                f"/api/v1/governance/{kind}?sha={LEDGER_SHA}",
                text.encode(),
                content_type="text/plain",
                **bearer(ledger_token),
            )
            assert pushed.status_code == 201, pushed.content
            (tmp_path / kind).write_text(text, encoding="utf-8")
            extra += [f"--{kind}", str(tmp_path / kind)]
    upload(api_client, evidence_token, BASE_SHA, BASE_EVIDENCE)
    upload(api_client, evidence_token, HEAD_SHA, HEAD_EVIDENCE)
    declared = api_client.post(
        "/api/v1/patches",
        {
            "ref": "PR-301",
            "base_sha": BASE_SHA,
            "head_sha": HEAD_SHA,
            "changed": patch.changed,
            "analysis": patch.analysis,
        },
        format="json",
        **bearer(evidence_token),
    )
    assert declared.status_code == 201, declared.content
    server = api_client.get(declared.json()["report_url"], **bearer(evidence_token))
    offline = offline_with_analysis(
        tmp_path, capsys, ledger=ledger, changed=patch.changed, analysis=patch.analysis, extra=extra
    )
    # Byte for byte where the database keeps the stored JSON's key order (SQLite); jsonb
    # (PostgreSQL) orders keys its own way, so there the same bytes once keys are sorted.
    if connection.vendor == "postgresql":
        assert canonical(server.json()) == canonical(json.loads(offline))
        assert canonical(Report.objects.get().body) == canonical(json.loads(offline))
    else:
        assert report_json(server.json()) == offline
        assert report_json(Report.objects.get().body) == offline

    report = json.loads(offline)
    codes = {p["code"] for p in report["problems"]}
    assert {
        "untested-caller",
        "contract-change",
        "fixture-lock",
        "co-modified",
        "unlabeled-path",
        "candidate-only",
    } <= codes
    assert ("frozen-symbol" in codes) == (ledger_of == "repository")
    assert ("analysis-mismatch" in codes) == (ledger_of == "other")
    checked = {row["kind"] for row in report["analysis"]["governance"] if "expected" in row}
    assert checked == (
        {"ledger", "fixture_lock", "oracle_map"} if ledger_of == "repository" else {"ledger"}
    )
    section = report["analysis"]
    assert section["status"] == "complete"
    by_symbol = {entry["symbol"]: entry for entry in section["symbols"]}
    assert by_symbol["shop.pricing:round_price"]["untested_callers"] == [
        "shop.invoice:invoice_line"
    ]
