"""Who sees what, at the selector level: every page and export reads through these."""

import datetime

import pytest
from django.contrib.auth.models import AnonymousUser
from django.http import Http404

from dashboards import selectors
from dashboards.models import DebtSnapshot, DebtTotal
from evidence.authentication import TokenPrincipal
from evidence.models import UploadToken
from evidence.services import token_create
from evidence.teams import team_create
from tests.factories import (
    FreezeFactory,
    PatchFactory,
    ReportFactory,
    RepositoryFactory,
    UserFactory,
)

DAY = datetime.date(2026, 11, 20)
RANGE = {"start": DAY - datetime.timedelta(days=30), "end": DAY}


@pytest.fixture
def world(db):
    """Two repositories of two teams, each with a snapshot, a patch and a freeze."""
    objects = {}
    for slug in ("billing", "search"):
        repository = RepositoryFactory(slug=slug)
        DebtSnapshot.objects.create(repository=repository, day=DAY, active=1, patches=2, blocked=1)
        DebtTotal.objects.refresh(days=[DAY])  # as the snapshot job sums what it wrote
        objects[slug] = {
            "repository": repository,
            "patch": ReportFactory(patch=PatchFactory(repository=repository)).patch,
            "freeze": FreezeFactory(repository=repository, freeze_id=f"FRZ-{slug}"),
        }
    member = UserFactory(username="pat")
    team_create(
        name="Payments",
        slug="payments",
        members=[member],
        repositories=[objects["billing"]["repository"]],
    )
    team_create(name="Search", slug="search", repositories=[objects["search"]["repository"]])
    objects["member"] = member
    return objects


def persona(world, request, name):
    return {
        "staff": lambda: request.getfixturevalue("staff"),
        "member": lambda: world["member"],
        "outsider": lambda: request.getfixturevalue("outsider"),
        "anonymous": AnonymousUser,
        "inactive staff": lambda: UserFactory(username="gone", is_staff=True, is_active=False),
    }[name]()


SEES = {
    "staff": {"billing", "search"},
    "member": {"billing"},
    "outsider": set(),
    "anonymous": set(),
    "inactive staff": set(),
}


@pytest.mark.parametrize("who", sorted(SEES))
def test_overview_lists_only_visible_repositories(world, request, who):
    user = persona(world, request, who)
    rows = selectors.overview_rows(user=user, repositories=None, **RANGE)
    assert {row["slug"] for row in rows} == SEES[who]


@pytest.mark.parametrize("who", sorted(SEES))
def test_series_and_weekly_hold_only_visible_repositories(world, request, who):
    user = persona(world, request, who)
    series = selectors.debt_series(user=user, repositories=None, **RANGE)
    weekly = selectors.weekly_from_series(
        selectors.debt_series(user=user, repositories=None, **RANGE)
    )
    assert {row["repository"] for row in series} == SEES[who]
    assert {row["repository"] for row in weekly} == SEES[who]


@pytest.mark.parametrize("who", sorted(SEES))
def test_debt_totals_sum_only_visible_repositories(world, request, who):
    # Each repository has one snapshot: 1 active freeze, 2 patches, 1 blocked.
    user = persona(world, request, who)
    for repositories in (None, ["billing", "search"]):
        daily = selectors.debt_totals(user=user, repositories=repositories, **RANGE)["daily"]
        assert sum(row["active"] for row in daily) == len(SEES[who])
        assert sum(row["patches"] for row in daily) == 2 * len(SEES[who])


@pytest.mark.parametrize("who", sorted(SEES))
def test_asking_for_an_invisible_repository_by_filter_returns_nothing_of_it(world, request, who):
    user = persona(world, request, who)
    rows = selectors.overview_rows(user=user, repositories=["search"], **RANGE)
    series = selectors.debt_series(user=user, repositories=["search"], **RANGE)
    expected = {"search"} & SEES[who]
    assert {row["slug"] for row in rows} == expected
    assert {row["repository"] for row in series} == expected


def detail_calls(world, slug):
    patch, freeze = world[slug]["patch"], world[slug]["freeze"]
    return {
        "repository": lambda user: selectors.repository_detail(user=user, slug=slug),
        "patch": lambda user: selectors.patch_detail(
            user=user, repository_slug=slug, patch_id=patch.pk
        ),
        "freeze": lambda user: selectors.freeze_detail(
            user=user, repository_slug=slug, freeze_id=freeze.freeze_id
        ),
    }


@pytest.mark.parametrize("page", ["repository", "patch", "freeze"])
@pytest.mark.parametrize("who", sorted(SEES))
@pytest.mark.parametrize("slug", ["billing", "search"])
def test_detail_pages_are_404_outside_the_visible_repositories(world, request, who, slug, page):
    user = persona(world, request, who)
    call = detail_calls(world, slug)[page]
    if slug in SEES[who]:
        assert call(user)["repository"].slug == slug
    else:
        with pytest.raises(Http404):
            call(user)


def test_a_patch_or_freeze_of_another_repository_is_404_through_a_visible_one(world, staff):
    with pytest.raises(Http404):
        selectors.patch_detail(
            user=staff, repository_slug="billing", patch_id=world["search"]["patch"].pk
        )
    with pytest.raises(Http404):
        selectors.freeze_detail(user=staff, repository_slug="billing", freeze_id="FRZ-search")


def test_unknown_ids_are_404(world, staff):
    with pytest.raises(Http404):
        selectors.repository_detail(user=staff, slug="nope")
    with pytest.raises(Http404):
        selectors.patch_detail(user=staff, repository_slug="billing", patch_id=999_999)
    with pytest.raises(Http404):
        selectors.freeze_detail(user=staff, repository_slug="billing", freeze_id="FRZ-404")


def test_an_upload_token_sees_no_dashboard(world):
    token, _ = token_create(
        repository=world["billing"]["repository"], scope=UploadToken.Scope.EVIDENCE
    )
    principal = TokenPrincipal.from_token(token)
    assert selectors.overview_rows(user=principal, repositories=None, **RANGE) == []
    assert selectors.debt_totals(user=principal, repositories=None, **RANGE)["daily"] == []
    with pytest.raises(Http404):
        selectors.repository_detail(user=principal, slug="billing")
