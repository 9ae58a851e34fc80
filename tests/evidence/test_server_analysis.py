"""The second process: a worker fetches a patch's base and head from the repository's git
remote (here local bare repositories) into its own mirror, analyzes it itself, and the report
judges that analysis; an uploaded analysis that disagrees is an analysis-mismatch."""

import copy
import datetime
import json
import os
import subprocess

import pytest
import time_machine
from django.urls import reverse

from evidence.demo.analysis import build_demo_repository
from evidence.mirror import MirrorError, mirror_fetch, mirror_path
from evidence.models import Patch, Report, ServerAnalysis
from evidence.server_analysis import server_analysis_run

TODAY = datetime.date(2026, 12, 1)
SECRET = "s3cret-read-token"


@pytest.fixture(scope="module")
def remote(tmp_path_factory):
    """The demo git repository and a bare clone of it, the repository's git remote."""
    root = tmp_path_factory.mktemp("work")
    demo = build_demo_repository(root, today=TODAY)
    bare = tmp_path_factory.mktemp("remote") / "shop.git"
    env = {**os.environ, "GIT_CONFIG_GLOBAL": os.devnull, "GIT_CONFIG_NOSYSTEM": "1"}
    subprocess.run(
        ["git", "clone", "-q", "--bare", "--mirror", str(root), str(bare)],  # noqa: S607
        check=True,
        env=env,
    )
    return demo, bare


@pytest.fixture
def wired(repository, remote, settings, tmp_path):
    demo, bare = remote
    settings.FREEZEDEBT_MIRROR_DIR = str(tmp_path / "mirrors")
    repository.git_url = str(bare)
    repository.git_credential = SECRET
    repository.save()
    with time_machine.travel(datetime.datetime(2026, 12, 1, 12, tzinfo=datetime.UTC), tick=False):
        yield demo


def declare(api_client, token, demo_patch, analysis, *, ref="PR-301", head_sha=None):
    payload = {
        "ref": ref,
        "base_sha": demo_patch.base_sha,
        "head_sha": head_sha or demo_patch.head_sha,
        "changed": demo_patch.changed,
    }
    if analysis is not None:
        payload["analysis"] = analysis
    response = api_client.post(
        "/api/v1/patches",
        json.dumps(payload),
        content_type="application/json",
        HTTP_AUTHORIZATION=f"Bearer {token}",
    )
    assert response.status_code == 201, response.content
    return Patch.objects.get(pk=response.json()["id"])


def problems(patch):
    return {p["code"]: p for p in Report.objects.get(patch=patch).body["problems"]}


pytestmark = pytest.mark.django_db(transaction=True)


def test_the_servers_analysis_agrees_with_an_honest_upload(api_client, evidence_token, wired):
    demo_patch = wired.patches[0]
    patch = declare(api_client, evidence_token, demo_patch, demo_patch.analysis)
    own = ServerAnalysis.objects.get(patch=patch)
    assert own.status == "done", own.error
    assert own.analysis["head"] == demo_patch.head_sha
    found = problems(patch)
    assert "analysis-mismatch" not in found
    assert found["untested-caller"]["items"] == ["shop.invoice:invoice_line"]
    section = Report.objects.get(patch=patch).body["analysis"]
    assert section["source"] == "server", section
    assert mirror_path(patch.repository).is_dir()


def test_an_upload_that_hides_findings_disagrees_and_is_not_believed(
    api_client, evidence_token, wired
):
    demo_patch = wired.patches[0]
    forged = copy.deepcopy(demo_patch.analysis)
    for symbol in forged["symbols"]:
        symbol["untested_callers"] = []
    forged["fixtures"]["mutated"] = []
    forged["problems"] = []
    patch = declare(api_client, evidence_token, demo_patch, forged)
    found = problems(patch)
    mismatch = found["analysis-mismatch"]
    assert mismatch["severity"] == "block"
    assert mismatch["items"] == [
        "the changed symbols, their callers or tests",
        "the fixture-lock findings",
    ]
    # The report judges the server's analysis, not the forged one.
    assert found["untested-caller"]["items"] == ["shop.invoice:invoice_line"]
    assert "tests/fixtures/prices.json" in found["fixture-lock"]["items"]


def test_without_an_upload_the_servers_analysis_is_judged(api_client, evidence_token, wired):
    demo_patch = wired.patches[1]
    patch = declare(api_client, evidence_token, demo_patch, None, ref="PR-302")
    report = Report.objects.get(patch=patch).body
    assert report["analysis"]["source"] == "server"
    assert report["analysis"]["class"] == "cosmetic"
    assert "analysis-mismatch" not in problems(patch)


def test_a_head_the_remote_does_not_have_fails_closed(api_client, evidence_token, wired):
    demo_patch = wired.patches[0]
    patch = declare(api_client, evidence_token, demo_patch, demo_patch.analysis, head_sha="ab" * 20)
    own = ServerAnalysis.objects.get(patch=patch)
    assert own.status == "failed"
    assert "abababab" in own.error
    mismatch = problems(patch)["analysis-mismatch"]
    assert "could not analyze the patch itself" in mismatch["message"]
    assert SECRET not in json.dumps(Report.objects.get(patch=patch).body)


def test_while_the_servers_analysis_runs_the_report_is_pending(
    api_client, evidence_token, wired, monkeypatch, client, staff
):
    # The broker takes the task but no worker has run it yet.
    monkeypatch.setattr("evidence.server_analysis._send", lambda patch_id: None)
    demo_patch = wired.patches[0]
    patch = declare(api_client, evidence_token, demo_patch, demo_patch.analysis)
    report = Report.objects.get(patch=patch)
    assert (report.status, report.verdict) == ("pending", "pending")
    assert report.body["analysis"]["status"] == "pending"
    client.force_login(staff)
    url = reverse("dashboards:patch", args=[patch.repository.slug, patch.pk])
    assert 'id="analysis-pending"' in client.get(url).content.decode()
    server_analysis_run(patch_id=patch.pk)
    assert Report.objects.get(patch=patch).body["analysis"]["source"] == "server"
    page = client.get(url).content.decode()
    assert "Analyzed by the server from the repository's git remote" in page
    assert 'id="caller-map-table"' in page


def test_the_mirror_is_bounded_in_size_and_removed_when_over(repository, wired, settings):
    demo_patch = wired.patches[0]
    settings.FREEZEDEBT_MIRROR_MAX_BYTES = 1000
    with pytest.raises(MirrorError, match="grew over 1000 bytes"):
        mirror_fetch(repository, (demo_patch.base_sha, demo_patch.head_sha))
    assert not mirror_path(repository).exists()


def test_a_second_fetch_of_known_commits_reads_nothing_from_the_remote(repository, wired):
    demo_patch = wired.patches[0]
    shas = (demo_patch.base_sha, demo_patch.head_sha)
    mirror_fetch(repository, shas)
    repository.git_url = "/nonexistent/remote.git"  # unreachable now: not needed
    assert mirror_fetch(repository, shas) == mirror_path(repository)


def test_an_unreadable_remote_is_an_error_without_the_secret(repository, wired, settings):
    repository.git_url = f"https://user:{SECRET}@127.0.0.1:9/none.git"
    settings.FREEZEDEBT_MIRROR_TIMEOUT = 20
    with pytest.raises(MirrorError) as exc:
        mirror_fetch(repository, ("a" * 40,))
    assert SECRET not in str(exc.value)


@pytest.mark.parametrize(
    "url",
    ["ext::sh -c touch% /tmp/pwned", "-uhelp", "relative/path.git", "https://x\n--upload-pack=x"],
)
def test_git_urls_that_could_run_commands_are_refused(repository, url):
    from django.core.exceptions import ValidationError

    repository.git_url = url
    with pytest.raises(ValidationError):
        repository.full_clean()


def test_the_admin_never_shows_the_credential(admin_client, repository):
    repository.git_credential = SECRET
    repository.save()
    page = admin_client.get(f"/admin/evidence/repository/{repository.pk}/change/")
    assert page.status_code == 200
    assert SECRET not in page.content.decode()
    # Saving without a new one keeps it; a new one replaces it.
    form = {
        "slug": repository.slug,
        "name": repository.name,
        "default_branch": "main",
        "git_url": "https://git.example.com/shop.git",
        "new_git_credential": "",
        "tokens-TOTAL_FORMS": "0",
        "tokens-INITIAL_FORMS": "0",
    }
    saved = admin_client.post(f"/admin/evidence/repository/{repository.pk}/change/", form)
    assert saved.status_code == 302, saved.content.decode()[-3000:]
    repository.refresh_from_db()
    assert (repository.git_url, repository.git_credential) == (
        "https://git.example.com/shop.git",
        SECRET,
    )

    form["new_git_credential"] = "another-token"
    admin_client.post(f"/admin/evidence/repository/{repository.pk}/change/", form)
    repository.refresh_from_db()
    assert repository.git_credential == "another-token"
    form["new_git_credential"], form["clear_git_credential"] = "", "on"
    admin_client.post(f"/admin/evidence/repository/{repository.pk}/change/", form)
    repository.refresh_from_db()
    assert repository.git_credential == ""


def test_an_analyzer_crash_is_stored_as_failed_then_raised(
    api_client, evidence_token, wired, monkeypatch
):
    monkeypatch.setattr("evidence.server_analysis._send", lambda patch_id: None)
    demo_patch = wired.patches[0]
    patch = declare(api_client, evidence_token, demo_patch, demo_patch.analysis)

    def crash(mirror, base, head):
        raise RuntimeError("boom")

    monkeypatch.setattr("evidence.server_analysis.analyze_mirror", crash)
    with pytest.raises(RuntimeError):
        server_analysis_run(patch_id=patch.pk)
    own = ServerAnalysis.objects.get(patch=patch)
    assert (own.status, own.error) == ("failed", "the analysis crashed (RuntimeError)")
    # Recomputed with the failure (still pending here for want of runs, never waiting on it).
    assert Report.objects.get(patch=patch).body["analysis"]["status"] != "pending"
    assert "analysis-mismatch" in problems(patch)


def test_the_analysis_runs_in_a_process_of_its_own_bounded_in_time(wired, settings, repository):
    from evidence.server_analysis import AnalysisError, analyze_mirror

    demo_patch = wired.patches[0]
    mirror = mirror_fetch(repository, (demo_patch.base_sha, demo_patch.head_sha))
    analysis = analyze_mirror(mirror, demo_patch.base_sha, demo_patch.head_sha)
    assert analysis["head"] == demo_patch.head_sha
    # An unknown commit is the command's error, said as such.
    with pytest.raises(AnalysisError):
        analyze_mirror(mirror, demo_patch.base_sha, "cd" * 20)
