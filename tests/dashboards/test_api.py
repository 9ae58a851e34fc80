"""GET /api/v1/debt: the daily debt snapshots, for people (session or personal token), limited
to the repositories they may see."""

import datetime
import json

import pytest
import time_machine
from rest_framework.renderers import JSONRenderer
from rest_framework.test import APIClient

from dashboards import selectors
from dashboards.api import DebtApi
from dashboards.models import DebtSnapshot
from evidence.models import UploadToken
from evidence.personal_tokens import personal_token_create
from evidence.services import token_create
from evidence.teams import team_create
from tests.factories import RepositoryFactory, UserFactory

URL = "/api/v1/debt"
TODAY = datetime.date(2026, 11, 30)
NOW = datetime.datetime(2026, 11, 30, 12, tzinfo=datetime.UTC)


def day(offset: int) -> datetime.date:
    return TODAY - datetime.timedelta(days=offset)


@pytest.fixture
def world(db):
    """billing (the member's team) and search (another team's), with a few days each."""
    billing = RepositoryFactory(slug="billing")
    search = RepositoryFactory(slug="search")
    for offset in (0, 1, 100):
        DebtSnapshot.objects.create(
            repository=billing, day=day(offset), active=offset + 1, patches=4, blocked=1, passed=3
        )
    DebtSnapshot.objects.create(repository=search, day=day(0), active=7, median_net_delta=2.5)
    member = UserFactory(username="pat")
    team_create(name="Payments", slug="payments", members=[member], repositories=[billing])
    team_create(name="Search", slug="search", repositories=[search])
    return {"billing": billing, "search": search, "member": member}


def client_for(user=None, *, token: str | None = None) -> APIClient:
    client = APIClient()
    if user is not None:
        client.force_login(user)
    if token is not None:
        client.credentials(HTTP_AUTHORIZATION=f"Bearer {token}")
    return client


def rows(response) -> list[tuple[str, str]]:
    assert response.status_code == 200, response.content
    return [(row["date"], row["repository"]) for row in response.json()["results"]]


def error_code(response) -> str:
    return response.json()["error"]["code"]


pytestmark = pytest.mark.usefixtures("_today")


@pytest.fixture
def _today():
    with time_machine.travel(NOW, tick=False):
        yield


# --- who may read what ------------------------------------------------------------------------


def test_anonymous_is_401(world):
    response = APIClient().get(URL)
    assert response.status_code == 401
    assert error_code(response) == "not_authenticated"
    assert APIClient().get(URL, {"repository": "billing"}).status_code == 401


def test_a_member_sees_the_own_teams_repository_only(world):
    client = client_for(world["member"])
    assert rows(client.get(URL)) == [
        (day(1).isoformat(), "billing"),
        (TODAY.isoformat(), "billing"),
    ]
    assert rows(client.get(URL, {"repository": "billing"})) == rows(client.get(URL))


def test_a_member_asking_for_another_teams_repository_gets_404(world):
    response = client_for(world["member"]).get(URL, {"repository": "search"})
    assert response.status_code == 404
    assert error_code(response) == "not_found"


def test_an_unknown_repository_is_404_like_an_invisible_one(world, staff):
    response = client_for(staff).get(URL, {"repository": "nope"})
    assert response.status_code == 404


def test_an_outsider_sees_nothing(world, outsider):
    client = client_for(outsider)
    assert rows(client.get(URL)) == []
    assert client.get(URL).json()["count"] == 0
    assert client.get(URL, {"repository": "billing"}).status_code == 404


def test_staff_see_every_repository(world, staff):
    client = client_for(staff)
    # An empty repository parameter is no filter, as on the other list endpoints.
    assert rows(client.get(URL, {"repository": ""})) == rows(client.get(URL))
    assert rows(client.get(URL)) == [
        (day(1).isoformat(), "billing"),
        (TODAY.isoformat(), "billing"),
        (TODAY.isoformat(), "search"),
    ]


def test_a_personal_token_reads_as_its_person(world):
    _, plain = personal_token_create(user=world["member"])
    client = client_for(token=plain)
    assert {repository for _, repository in rows(client.get(URL))} == {"billing"}
    assert client.get(URL, {"repository": "search"}).status_code == 404


def test_an_unknown_token_is_401(world):
    assert client_for(token="fdp_nope").get(URL).status_code == 401


def test_an_upload_token_is_refused(world):
    _, plain = token_create(
        repository=world["billing"], scope=UploadToken.Scope.EVIDENCE, name="ci"
    )
    response = client_for(token=plain).get(URL)
    assert response.status_code == 403
    assert error_code(response) == "permission_denied"


# --- what it answers --------------------------------------------------------------------------


def test_rows_carry_every_snapshot_figure(world, staff):
    response = client_for(staff).get(URL, {"repository": "search"})
    [row] = response.json()["results"]
    assert row == {
        "date": TODAY.isoformat(),
        "repository": "search",
        "active": 7,
        "expiring": 0,
        "expired": 0,
        "unacknowledged": 0,
        "freeze_days": 0,
        "skipped": 0,
        "xfail": 0,
        "patches": 0,
        "blocked": 0,
        "passed": 0,
        "new_skips": 0,
        "median_net_delta": 2.5,
        "earned": 0,
        "borrowed": 0,
    }


def test_rows_are_what_the_documented_serializer_makes_of_the_snapshots(world, staff):
    response = client_for(staff).get(URL, {"start": day(365).isoformat()})
    results = response.json()["results"]
    series = selectors.debt_series(user=staff, start=day(365), end=TODAY, repositories=None)
    documented = DebtApi.OutputSerializer(series, many=True).data
    assert len(results) == 4
    assert results == json.loads(JSONRenderer().render(documented))
    # Key for key, in the documented order.
    assert all(list(row) == list(DebtApi.OutputSerializer().fields) for row in results)


def test_the_range_defaults_to_90_days_up_to_today(world, staff):
    client = client_for(staff)
    dates = {date for date, _ in rows(client.get(URL, {"repository": "billing"}))}
    assert day(100).isoformat() not in dates
    everything = rows(client.get(URL, {"repository": "billing", "start": day(365).isoformat()}))
    assert [date for date, _ in everything] == [d.isoformat() for d in (day(100), day(1), TODAY)]


def test_start_and_end_are_inclusive(world, staff):
    response = client_for(staff).get(
        URL, {"repository": "billing", "start": day(1).isoformat(), "end": day(1).isoformat()}
    )
    assert rows(response) == [(day(1).isoformat(), "billing")]


@pytest.mark.parametrize(
    "query",
    [
        {"start": "yesterday"},
        {"end": "2026-13-01"},
        {"start": "2026-11-30T00:00:00"},
        {"start": "2026-11-30", "end": "2026-11-01"},
    ],
)
def test_bad_dates_are_400(world, staff, query):
    response = client_for(staff).get(URL, query)
    assert response.status_code == 400
    assert error_code(response) == "invalid"
    assert set(response.json()["error"]["details"]) & {"start", "end"}


def test_rows_are_paged(world, staff):
    client = client_for(staff)
    first = client.get(URL, {"page_size": 2})
    body = first.json()
    assert body["count"] == 3
    assert len(body["results"]) == 2
    assert body["next"]
    second = client.get(URL, {"page_size": 2, "page": 2}).json()
    assert [row["repository"] for row in second["results"]] == ["search"]


def test_the_endpoint_is_in_the_schema(db, staff):
    schema = client_for(staff).get("/api/v1/schema/", {"format": "json"}).json()
    operation = schema["paths"]["/api/v1/debt"]["get"]
    assert operation["operationId"] == "debt_list"
    assert {p["name"] for p in operation["parameters"]} >= {"repository", "start", "end", "page"}
    assert set(operation["responses"]) >= {"200", "400", "401", "404"}
