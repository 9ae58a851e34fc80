import copy
import datetime
import json

import pytest

from evidence.models import Patch, Report
from evidence.services import token_create
from tests.evidence.analyses import demo_repository, minimal_analysis
from tests.evidence.stored_runs import store_run
from tests.factories import PatchFactory, RepositoryFactory, UserFactory

PATCHES_URL = "/api/v1/patches"
BASE_SHA, HEAD_SHA = "b" * 40, "e" * 40
PASSING = {"tests/test_a.py::test_x": "passed"}


def bearer(token: str) -> dict[str, str]:
    return {"HTTP_AUTHORIZATION": f"Bearer {token}"}


def declare(api_client, token, **fields):
    payload = {"ref": "PR-7", "base_sha": BASE_SHA, "head_sha": HEAD_SHA, **fields}
    # Encoded here, ASCII-only as CI clients send it: a lone surrogate travels as "\ud800".
    body = json.dumps(payload)
    return api_client.post(PATCHES_URL, body, content_type="application/json", **bearer(token))


def error(response) -> dict:
    body = response.json()
    assert set(body["error"]) == {"code", "message", "details"}
    return body["error"]


@pytest.fixture
def committed(django_capture_on_commit_callbacks):
    """Run what the request schedules after commit (the test's own transaction never commits)."""

    def run(call):
        with django_capture_on_commit_callbacks(execute=True):
            return call()

    return run


@pytest.fixture
def other_token(db):
    _, plain = token_create(repository=RepositoryFactory(slug="elsewhere"), scope="evidence")
    return plain


# --- POST /api/v1/patches -------------------------------------------------------------------


def test_new_patch_is_201_with_its_report_url_and_pending_report(
    api_client, evidence_token, committed
):
    response = committed(
        lambda: declare(
            api_client,
            evidence_token,
            title="Round half-even",
            url="https://git.example.com/shop/pull/7",
            author="ana",
            changed=["M\tsrc/pricing/rounding.py", "R090\tsrc/old.py\tsrc/new.py"],
        )
    )
    assert response.status_code == 201
    patch = Patch.objects.get()
    assert response.json() == {
        "id": patch.pk,
        "report_url": f"/api/v1/patches/{patch.pk}/report",
        "page_url": f"/r/{patch.repository.slug}/patches/{patch.pk}/",
        "status": "pending",
    }
    assert (patch.title, patch.author, patch.label) == ("Round half-even", "ana", "")
    assert patch.changed == [
        {"status": "R", "path": "src/new.py", "old_path": "src/old.py"},
        {"status": "M", "path": "src/pricing/rounding.py"},
    ]
    # Computed on commit: pending (no runs yet), never pass.
    assert Report.objects.get(patch=patch).verdict == "pending"


# Real commits: the report task runs when the request's transaction commits, before the answer.
@pytest.mark.django_db(transaction=True)
def test_patch_with_both_runs_in_is_ready_in_the_answer(api_client, repository, evidence_token):
    store_run(repository, BASE_SHA, PASSING)
    store_run(repository, HEAD_SHA, PASSING)
    response = declare(api_client, evidence_token)
    assert response.status_code == 201
    assert response.json()["status"] == "ready"
    assert Report.objects.get().verdict == "pass"


def test_declaring_the_same_patch_again_is_200_with_the_same_id(
    api_client, evidence_token, committed
):
    first = committed(lambda: declare(api_client, evidence_token, changed=["M\tsrc/a.py"]))
    again = committed(lambda: declare(api_client, evidence_token, changed=["M\tsrc/a.py"]))
    assert again.status_code == 200
    assert again.json()["id"] == first.json()["id"]
    assert Patch.objects.count() == 1


def test_declaring_again_with_other_details_updates_and_recomputes(
    api_client, repository, evidence_token, committed
):
    store_run(repository, BASE_SHA, PASSING)
    store_run(repository, HEAD_SHA, PASSING)
    committed(lambda: declare(api_client, evidence_token, changed=["M\tsrc/a.py"]))
    assert Report.objects.get().verdict == "pass"

    response = committed(
        lambda: declare(
            api_client,
            evidence_token,
            title="now with the ledger",
            changed=["M\tfreeze_ledger.toml"],
        )
    )
    assert response.status_code == 200
    patch = Patch.objects.get()
    assert patch.title == "now with the ledger"
    assert patch.changed == [{"status": "M", "path": "freeze_ledger.toml"}]
    report = Report.objects.get()
    assert report.verdict == "block"
    assert [p["code"] for p in report.body["problems"]] == ["ledger-in-patch"]


def test_declaring_again_unchanged_keeps_a_ready_report(
    api_client, repository, evidence_token, committed, django_capture_on_commit_callbacks
):
    store_run(repository, BASE_SHA, PASSING)
    store_run(repository, HEAD_SHA, PASSING)
    committed(lambda: declare(api_client, evidence_token))
    with django_capture_on_commit_callbacks() as callbacks:
        declare(api_client, evidence_token)
    assert callbacks == []


@pytest.mark.django_db(transaction=True)
def test_declaring_again_makes_up_for_a_report_never_computed(
    api_client, repository, evidence_token, monkeypatch
):
    store_run(repository, BASE_SHA, PASSING)
    store_run(repository, HEAD_SHA, PASSING)
    with monkeypatch.context() as lost:
        lost.setattr("evidence.reports.enqueue_report", lambda patch_id: None)
        lost.setattr("evidence.patches.enqueue_report", lambda patch_id: None)
        assert declare(api_client, evidence_token).json()["status"] == "pending"
    assert not Report.objects.exists()
    assert declare(api_client, evidence_token).json()["status"] == "ready"


@pytest.mark.django_db(transaction=True)
def test_broker_outage_leaves_the_patch_declared_and_pending(
    api_client, repository, evidence_token, monkeypatch
):
    from kombu.exceptions import OperationalError

    def broker_down(*args, **kwargs):
        raise OperationalError("connection refused")

    store_run(repository, BASE_SHA, PASSING)
    store_run(repository, HEAD_SHA, PASSING)
    monkeypatch.setattr("evidence.tasks.compute_patch_report.delay", broker_down)
    response = declare(api_client, evidence_token)
    assert response.status_code == 201
    assert response.json()["status"] == "pending"
    assert Patch.objects.count() == 1


def test_other_base_or_head_is_another_patch_revision(api_client, evidence_token):
    declare(api_client, evidence_token)
    response = declare(api_client, evidence_token, head_sha="f" * 40)
    assert response.status_code == 201
    assert Patch.objects.count() == 2


def test_shas_are_stored_lower_case_like_the_runs(api_client, evidence_token):
    declare(api_client, evidence_token, base_sha="ABCDEF1", head_sha="ABCDEF2")
    patch = Patch.objects.get()
    assert (patch.base_sha, patch.head_sha) == ("abcdef1", "abcdef2")


def test_label_and_ledger_changed_and_analysis_are_stored(api_client, evidence_token):
    analysis = minimal_analysis(class_="local")
    analysis["class"] = analysis.pop("class_")
    declare(api_client, evidence_token, label="py311", ledger_changed=True, analysis=analysis)
    patch = Patch.objects.get()
    assert (patch.label, patch.ledger_changed, patch.analysis) == ("py311", True, analysis)


@pytest.mark.parametrize(
    "changed",
    [
        [{"status": "M", "path": "src/a.py"}, {"status": "R100", "old_path": "b", "path": "c"}],
        "M\tsrc/a.py\nR100\tb\tc\n",
        ["M\tsrc/a.py", {"status": "R", "path": "c", "old_path": "b"}],
    ],
)
def test_changed_paths_come_as_lines_objects_or_text(api_client, evidence_token, changed):
    assert declare(api_client, evidence_token, changed=changed).status_code == 201
    assert Patch.objects.get().changed == [
        {"status": "R", "path": "c", "old_path": "b"},
        {"status": "M", "path": "src/a.py"},
    ]


def test_bad_changed_paths_are_400_with_where_and_nothing_stored(api_client, evidence_token):
    response = declare(
        api_client,
        evidence_token,
        changed=[{"status": "X", "path": "src/a.py"}, {"status": "R", "path": "c"}, 7],
    )
    assert response.status_code == 400
    problems = error(response)["details"]["changed"]
    assert [p["path"] for p in problems] == ["$[0].status", "$[1].old_path", "$[2]"]
    assert all(p["message"] for p in problems)
    assert not Patch.objects.exists()


def test_paths_leaving_the_repository_are_refused(api_client, evidence_token):
    response = declare(api_client, evidence_token, changed=["M\t../etc/passwd"])
    assert response.status_code == 400
    assert error(response)["details"]["changed"][0]["path"] == "line 1"


@pytest.mark.parametrize(
    ("field", "value"),
    [
        ("ref", ""),
        ("base_sha", "not-a-sha"),
        ("head_sha", "e" * 65),
        ("analysis", [1, 2]),
        ("analysis", {"note": "a\u0000b"}),
        # Lone surrogates: JSON can spell them, PostgreSQL cannot store them.
        ("analysis", {"note": "a\ud800b"}),
        ("analysis", {"key\udfff": 1}),
        ("changed", ["M\tsrc/a\ud800.py"]),
        ("changed", ["M\tsrc/a\u0000.py"]),
        ("changed", {"path": "src/a.py"}),
        ("url", "not a url"),
        ("title", "x" * 501),
    ],
)
def test_invalid_fields_are_400_and_store_nothing(api_client, evidence_token, field, value):
    response = declare(api_client, evidence_token, **{field: value})
    assert response.status_code == 400
    assert field in error(response)["details"]
    assert not Patch.objects.exists()


def test_a_real_analysis_is_accepted_and_stored(api_client, evidence_token):
    analysis = demo_repository(datetime.date(2026, 12, 1)).patches[0].analysis
    assert declare(api_client, evidence_token, analysis=analysis).status_code == 201
    assert Patch.objects.get().analysis == analysis


def test_an_analysis_off_its_schema_is_400_with_the_path_of_each_error(api_client, evidence_token):
    analysis = copy.deepcopy(demo_repository(datetime.date(2026, 12, 1)).patches[0].analysis)
    analysis["symbols"][1]["kind"] = "lambda"
    analysis["files"][0]["class"] = "huge"
    del analysis["cone"]
    analysis["governance"]["fixture_lock"]["sha256"] = "not a digest"
    response = declare(api_client, evidence_token, analysis=analysis)
    assert response.status_code == 400
    problems = error(response)["details"]["analysis"]
    assert [p["path"] for p in problems] == [
        "$",
        "$.files[0].class",
        "$.governance.fixture_lock.sha256",
        "$.symbols[1].kind",
    ]
    assert "'cone' is a required property" in problems[0]["message"]
    assert "'lambda' is not one of" in problems[3]["message"]
    assert not Patch.objects.exists()


def test_an_analysis_of_another_format_is_refused(api_client, evidence_token):
    response = declare(
        api_client, evidence_token, analysis=minimal_analysis(format="freezedebt-analysis/2")
    )
    assert response.status_code == 400
    assert error(response)["details"]["analysis"][0]["path"] == "$.format"
    assert not Patch.objects.exists()


def test_errors_of_an_analysis_are_capped(api_client, evidence_token):
    bad = [{"path": "", "status": "?"} for _ in range(40)]
    response = declare(api_client, evidence_token, analysis=minimal_analysis(files=bad))
    problems = error(response)["details"]["analysis"]
    assert len(problems) == 51
    assert problems[-1]["message"].startswith("and ")


def test_an_analysis_over_the_size_cap_is_413_and_stores_nothing(
    api_client, evidence_token, settings
):
    settings.FREEZEDEBT_MAX_ANALYSIS_BYTES = 2000
    analysis = minimal_analysis(files=[], parse_errors=[{"path": "a.py", "error": "x" * 3000}])
    response = declare(api_client, evidence_token, analysis=analysis)
    assert response.status_code == 413
    assert "2000" in error(response)["message"]
    assert not Patch.objects.exists()


def test_required_fields_are_named(api_client, evidence_token):
    response = api_client.post(PATCHES_URL, {}, format="json", **bearer(evidence_token))
    assert response.status_code == 400
    assert set(error(response)["details"]) == {"ref", "base_sha", "head_sha"}


def test_ledger_token_cannot_declare_patches(api_client, ledger_token):
    response = declare(api_client, ledger_token)
    assert response.status_code == 403
    assert not Patch.objects.exists()


def test_declaring_needs_a_token(api_client, db):
    response = api_client.post(PATCHES_URL, {"ref": "PR-1"}, format="json")
    assert response.status_code == 401


def test_signed_in_users_do_not_declare_patches(client, staff):
    client.force_login(staff)
    response = client.post(
        PATCHES_URL,
        {"ref": "PR-1", "base_sha": BASE_SHA, "head_sha": HEAD_SHA},
        content_type="application/json",
    )
    assert response.status_code == 403
    assert not Patch.objects.exists()


# --- GET /api/v1/patches/{id}/report --------------------------------------------------------


def report_url(patch) -> str:
    return f"/api/v1/patches/{patch.pk}/report"


def test_report_before_computation_is_pending_with_every_key(
    api_client, repository, evidence_token
):
    patch = PatchFactory(repository=repository, changed=[{"status": "M", "path": "src/a.py"}])
    response = api_client.get(report_url(patch), **bearer(evidence_token))
    assert response.status_code == 200
    body = response.json()
    assert (body["status"], body["verdict"]) == ("pending", "pending")
    assert set(body) >= {
        "format",
        "today",
        "figures",
        "new_skips",
        "retired_skips",
        "lost",
        "new_xfails",
        "frozen_surface_hits",
        "expired_freezes",
        "per_file",
        "problems",
    }
    assert not Report.objects.exists()  # reading never writes


def test_report_is_served_exactly_as_stored(api_client, repository, evidence_token, committed):
    store_run(repository, BASE_SHA, PASSING)
    store_run(repository, HEAD_SHA, {"tests/test_a.py::test_x": "failed"}, exit_code=1)
    patch_id = committed(lambda: declare(api_client, evidence_token)).json()["id"]
    response = api_client.get(f"/api/v1/patches/{patch_id}/report", **bearer(evidence_token))
    assert response.status_code == 200
    assert response.json() == Report.objects.get().body
    assert response.json()["verdict"] == "block"


def test_evidence_token_of_another_repository_gets_404(api_client, repository, other_token):
    patch = PatchFactory(repository=repository)
    response = api_client.get(report_url(patch), **bearer(other_token))
    assert response.status_code == 404
    assert error(response)["code"] == "not_found"


def test_unknown_patch_is_the_same_404(api_client, other_token):
    response = api_client.get("/api/v1/patches/999999/report", **bearer(other_token))
    assert response.status_code == 404


def test_ledger_token_cannot_read_reports(api_client, repository, ledger_token):
    patch = PatchFactory(repository=repository)
    assert api_client.get(report_url(patch), **bearer(ledger_token)).status_code == 403


def test_staff_read_any_report(client, staff, repository):
    patch = PatchFactory(repository=repository)
    client.force_login(staff)
    assert client.get(report_url(patch)).json()["status"] == "pending"


def test_outsider_gets_404_for_a_report_they_cannot_see(client, outsider, repository):
    patch = PatchFactory(repository=repository)
    client.force_login(outsider)
    assert client.get(report_url(patch)).status_code == 404


def test_anonymous_gets_401_for_a_report(api_client, repository):
    patch = PatchFactory(repository=repository)
    assert api_client.get(report_url(patch)).status_code == 401


# --- GET /api/v1/patches, GET /api/v1/repositories ------------------------------------------


def test_staff_list_patches_newest_first_with_report_state(client, staff, repository):
    older = PatchFactory(repository=repository, ref="PR-1")
    newer = PatchFactory(repository=repository, ref="PR-2")
    Report.objects.create(patch=older, status="ready", verdict="block", body={})
    PatchFactory(ref="PR-9")  # another repository
    client.force_login(staff)
    response = client.get(PATCHES_URL, {"repository": repository.slug})
    assert response.status_code == 200
    body = response.json()
    assert body["count"] == 2
    assert [(p["id"], p["status"], p["verdict"]) for p in body["results"]] == [
        (newer.pk, "pending", "pending"),
        (older.pk, "ready", "block"),
    ]
    assert body["results"][1]["report_url"] == report_url(older)
    assert body["results"][1]["repository"] == repository.slug
    assert client.get(PATCHES_URL).json()["count"] == 3


def test_patch_list_is_paginated_in_bounded_queries(
    client, staff, repository, django_assert_max_num_queries
):
    for number in range(30):
        patch = PatchFactory(repository=repository, ref=f"PR-{number}")
        Report.objects.create(patch=patch, status="ready", verdict="pass", body={})
    client.force_login(staff)
    with django_assert_max_num_queries(6):
        page = client.get(PATCHES_URL, {"page_size": 10}).json()
    assert (page["count"], len(page["results"])) == (30, 10)
    assert page["next"]


def test_outsider_lists_no_patches_and_cannot_name_a_repository(client, outsider, repository):
    PatchFactory(repository=repository)
    client.force_login(outsider)
    assert client.get(PATCHES_URL).json()["count"] == 0
    assert client.get(PATCHES_URL, {"repository": repository.slug}).status_code == 404


def test_upload_tokens_cannot_list_patches(api_client, evidence_token):
    assert api_client.get(PATCHES_URL, **bearer(evidence_token)).status_code == 403


def test_repositories_are_listed_to_those_who_may_see_them(client, repository, staff):
    RepositoryFactory(slug="billing")
    client.force_login(staff)
    body = client.get("/api/v1/repositories").json()
    assert [r["slug"] for r in body["results"]] == ["acme-shop", "billing"]
    assert body["results"][0]["patches_url"] == "/api/v1/patches?repository=acme-shop"

    client.force_login(UserFactory(username="nobody"))
    assert client.get("/api/v1/repositories").json()["count"] == 0


def test_repositories_need_a_signed_in_user(api_client, client, evidence_token):
    assert api_client.get("/api/v1/repositories", **bearer(evidence_token)).status_code == 403
    anonymous = client.get("/api/v1/repositories")
    assert anonymous.status_code == 401
    assert anonymous["WWW-Authenticate"].startswith("Bearer")


def test_the_report_links_to_its_page_beside_the_body(api_client, evidence_token, committed):
    declared = committed(lambda: declare(api_client, evidence_token)).json()
    report = api_client.get(declared["report_url"], **bearer(evidence_token))
    assert report.status_code == 200
    assert report["Link"] == f'<{declared["page_url"]}>; rel="alternate"; type="text/html"'
    assert "page_url" not in report.json()  # the body is the rules' report, as delta prints it
