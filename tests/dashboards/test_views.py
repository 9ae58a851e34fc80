from django.urls import reverse

from tests.factories import RepositoryFactory


def test_overview_needs_a_login(client, db):
    response = client.get(reverse("dashboards:index"))
    assert response.status_code == 302
    assert response["Location"].startswith(reverse("login"))


def test_staff_see_every_repository_on_the_overview(client, staff):
    RepositoryFactory(slug="billing")
    RepositoryFactory(slug="search")
    client.force_login(staff)
    page = client.get(reverse("dashboards:index")).content.decode()
    assert "billing" in page
    assert "search" in page


def test_outsiders_see_no_repository(client, outsider):
    RepositoryFactory(slug="billing")
    client.force_login(outsider)
    response = client.get(reverse("dashboards:index"))
    assert response.status_code == 200
    assert "billing" not in response.content.decode()
    assert "No repositories you can see yet." in response.content.decode()


def test_login_page_renders_with_csrf(client, db):
    response = client.get(reverse("login"))
    assert response.status_code == 200
    assert "csrfmiddlewaretoken" in response.content.decode()
