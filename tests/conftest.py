import pytest
from django.core.cache import cache
from rest_framework.test import APIClient

from evidence.models import Repository, UploadToken
from evidence.services import repository_create, token_create
from tests.factories import UserFactory


@pytest.fixture(autouse=True)
def _fresh_cache():
    # The upload throttle counts in the cache; no test may inherit another's count.
    cache.clear()
    yield
    cache.clear()


@pytest.fixture
def api_client() -> APIClient:
    return APIClient()


@pytest.fixture
def repository(db) -> Repository:
    return repository_create(slug="acme-shop", name="Acme Shop")


@pytest.fixture
def evidence_token(repository) -> str:
    _, plain = token_create(repository=repository, scope=UploadToken.Scope.EVIDENCE, name="ci")
    return plain


@pytest.fixture
def ledger_token(repository) -> str:
    _, plain = token_create(repository=repository, scope=UploadToken.Scope.LEDGER, name="main")
    return plain


@pytest.fixture
def staff(db):
    """Staff see every repository."""
    return UserFactory(username="staff", is_staff=True, is_superuser=True)


@pytest.fixture
def outsider(db):
    """A logged-in user with no team: sees nothing."""
    return UserFactory(username="outsider")
