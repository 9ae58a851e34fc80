import pytest
from django.core.exceptions import ValidationError
from django.db import IntegrityError

from evidence import services, tokens
from evidence.models import Repository, UploadToken
from evidence.services import repository_create, token_create, token_revoke
from ledger.models import Policy


def test_repository_create_defaults_name_and_branch(db):
    repository = repository_create(slug="billing")
    assert (repository.name, repository.default_branch) == ("billing", "main")


def test_repository_create_gives_the_repository_its_default_policy(db):
    repository = repository_create(slug="billing", default_branch="trunk")
    policy = Policy.objects.get(repository=repository)
    assert policy.max_freeze_days == 14
    assert policy.ledger_path == "freeze_ledger.toml"
    assert repository.default_branch == "trunk"


@pytest.mark.parametrize("slug", ["Billing", "bill ing", "-billing", "billing/api", "", "é"])
def test_repository_create_refuses_a_malformed_slug(db, slug):
    with pytest.raises(ValidationError) as raised:
        repository_create(slug=slug)
    assert "slug" in raised.value.message_dict
    assert not Repository.objects.exists()


def test_repository_create_refuses_a_taken_slug(db):
    repository_create(slug="billing")
    with pytest.raises(ValidationError):
        repository_create(slug="billing")
    assert Repository.objects.count() == 1


def test_token_create_refuses_an_unknown_scope(repository):
    with pytest.raises(ValueError, match="admin"):
        token_create(repository=repository, scope="admin")


def test_token_create_draws_again_when_a_prefix_is_taken(repository, monkeypatch):
    taken, _ = token_create(repository=repository, scope="evidence")
    clash = tokens.NewToken(prefix=taken.prefix, plain="fdk_clash", digest="0" * 64)
    draws = iter([clash, tokens.generate()])
    monkeypatch.setattr(services.tokens, "generate", lambda: next(draws))
    token, plain = token_create(repository=repository, scope="evidence")
    assert token.prefix != taken.prefix
    assert tokens.verify(plain) == token


def test_token_create_gives_up_after_repeated_clashes(repository, monkeypatch):
    taken, _ = token_create(repository=repository, scope="evidence")
    clash = tokens.NewToken(prefix=taken.prefix, plain="fdk_clash", digest="0" * 64)
    monkeypatch.setattr(services.tokens, "generate", lambda: clash)
    with pytest.raises(IntegrityError):
        token_create(repository=repository, scope="evidence")
    assert UploadToken.objects.count() == 1


@pytest.mark.parametrize("form", ["prefix", "display", "whole"])
def test_token_revoke_accepts_prefix_display_form_or_whole_token(repository, form):
    token, plain = token_create(repository=repository, scope="evidence")
    name = {"prefix": token.prefix, "display": token.display_prefix, "whole": plain}[form]
    revoked = token_revoke(prefix=name)
    assert revoked.pk == token.pk
    assert revoked.revoked_at is not None
    assert not revoked.is_live


def test_token_revoke_is_idempotent_and_keeps_the_first_time(repository):
    token, _ = token_create(repository=repository, scope="evidence")
    first = token_revoke(prefix=token.prefix).revoked_at
    again = token_revoke(prefix=token.prefix).revoked_at
    assert again == first


@pytest.mark.parametrize("name", ["zzzzzzzz", "not a token"])
def test_token_revoke_of_an_unknown_token_raises(db, name):
    with pytest.raises(UploadToken.DoesNotExist):
        token_revoke(prefix=name)
