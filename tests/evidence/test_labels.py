"""Job labels end to end: runs uploaded under a label, a patch declared with or without one,
and a CI matrix (several labels per sha) whose patch names the label it is judged on."""

import json

import pytest

from evidence.models import Patch, Report
from evidence.reports import patch_label, report_compute
from tests.evidence.stored_runs import store_run

BASE_SHA, HEAD_SHA = "b" * 40, "e" * 40
PASSING = {"tests/test_a.py::test_x": "passed", "tests/test_a.py::test_y": "passed"}
ONE_LOST = {"tests/test_a.py::test_x": "passed", "tests/test_a.py::test_y": "failed"}


def bearer(token):
    return {"HTTP_AUTHORIZATION": f"Bearer {token}"}


@pytest.fixture
def send(api_client, evidence_token, django_capture_on_commit_callbacks):
    """Upload runs and declare patches as the CI client does, running what commits enqueue."""

    class Send:
        def run(self, sha, outcomes, *, label=None, exit_code=0):
            records = [
                {"nodeid": nodeid, "when": "call", "outcome": bucket, "xfail": False}
                for nodeid, bucket in outcomes.items()
            ]
            query = f"sha={sha}" + (f"&label={label}" if label else "")
            with django_capture_on_commit_callbacks(execute=True):
                response = api_client.post(
                    f"/api/v1/runs?{query}",
                    json.dumps({"exit": exit_code, "records": records}).encode(),
                    content_type="application/json",
                    **bearer(evidence_token),
                )
            assert response.status_code == 202, response.content

        def patch(self, **fields):
            payload = {"ref": "PR-7", "base_sha": BASE_SHA, "head_sha": HEAD_SHA, **fields}
            with django_capture_on_commit_callbacks(execute=True):
                response = api_client.post(
                    "/api/v1/patches",
                    json.dumps(payload),
                    content_type="application/json",
                    **bearer(evidence_token),
                )
            assert response.status_code in (200, 201), response.content
            report = api_client.get(response.json()["report_url"], **bearer(evidence_token))
            return report.json()

    return Send()


def test_a_patch_without_a_label_uses_the_one_label_both_runs_share(send):
    send.run(BASE_SHA, PASSING, label="py311")
    send.run(HEAD_SHA, ONE_LOST, label="py311", exit_code=1)
    report = send.patch()
    assert report["status"] == "ready"
    assert report["lost"] == ["tests/test_a.py::test_y"]
    assert report["pending_reason"] is None
    assert Patch.objects.get().label == ""  # the patch keeps what was declared


def test_a_patch_declared_before_its_labelled_runs_is_computed_when_they_arrive(send):
    assert send.patch()["status"] == "pending"
    send.run(BASE_SHA, PASSING, label="py311")
    send.run(HEAD_SHA, PASSING, label="py311")
    report = Report.objects.get()
    assert (report.status, report.verdict) == ("ready", "pass")


def test_a_patch_with_a_label_compares_that_labels_runs(send):
    send.run(BASE_SHA, PASSING, label="py311")
    send.run(HEAD_SHA, PASSING, label="py311")
    send.run(BASE_SHA, PASSING, label="py312")
    send.run(HEAD_SHA, ONE_LOST, label="py312", exit_code=1)
    assert send.patch(label="py311")["verdict"] == "pass"
    # declared again with the other label: judged on the other job's runs
    report = send.patch(label="py312")
    assert (report["verdict"], report["lost"]) == ("block", ["tests/test_a.py::test_y"])


def test_a_matrix_patch_without_a_label_stays_pending_and_names_the_labels(send):
    for label in ("py311", "py312"):
        send.run(BASE_SHA, PASSING, label=label)
        send.run(HEAD_SHA, PASSING, label=label)
    report = send.patch()
    assert report["status"] == "pending"
    assert report["pending_reason"] == (
        f"no ready run of the base commit {BASE_SHA[:12]} and the head commit {HEAD_SHA[:12]} "
        "with no label yet; base runs exist with 'py311', 'py312'; "
        "head runs exist with 'py311', 'py312': "
        "declare the patch with --label LABEL (or FREEZEDEBT_LABEL) to compare those"
    )


def test_pending_names_the_label_the_missing_run_has_elsewhere(send):
    send.run(BASE_SHA, PASSING, label="py311")
    send.run(HEAD_SHA, PASSING)  # the head job forgot its label
    report = send.patch()
    assert report["status"] == "pending"
    assert report["pending_reason"] == (
        f"no ready run of the base commit {BASE_SHA[:12]} with no label yet; "
        "base runs exist with 'py311'"
        ": upload the base and head runs under one label (--label or FREEZEDEBT_LABEL)"
    )


def test_a_patch_whose_label_has_no_runs_says_which_labels_do(send):
    send.run(BASE_SHA, PASSING, label="py311")
    send.run(HEAD_SHA, PASSING, label="py311")
    report = send.patch(label="py39")
    assert report["pending_reason"] == (
        f"no ready run of the base commit {BASE_SHA[:12]} and the head commit {HEAD_SHA[:12]} "
        "with 'py39' yet; base runs exist with 'py311'; head runs exist with 'py311': "
        "declare the patch with --label py311 (or FREEZEDEBT_LABEL) to compare those"
    )


def test_unlabelled_runs_win_over_a_labelled_job_of_the_same_shas(repository):
    for label in ("", "py311"):
        store_run(repository, BASE_SHA, PASSING, label=label)
        store_run(repository, HEAD_SHA, PASSING, label=label)
    patch = Patch.objects.create(
        repository=repository, ref="PR-1", base_sha=BASE_SHA, head_sha=HEAD_SHA
    )
    assert patch_label(patch) == ""
    assert report_compute(patch_id=patch.pk).status == "ready"
