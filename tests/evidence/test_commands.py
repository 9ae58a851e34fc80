from io import StringIO

import pytest
from django.core.management import CommandError, call_command

from evidence import tokens
from evidence.models import Repository, UploadToken
from evidence.services import token_create


def _call(*args) -> str:
    out = StringIO()
    call_command(*args, stdout=out)
    return out.getvalue()


def _printed_token(output: str) -> str:
    return output.strip().splitlines()[-1]


def test_create_repository_prints_a_working_evidence_token_once(db):
    output = _call("create_repository", "web-shop")
    plain = _printed_token(output)
    token = tokens.verify(plain)
    assert token is not None
    assert token.scope == UploadToken.Scope.EVIDENCE
    assert token.repository.slug == "web-shop"
    assert output.count(plain) == 1


def test_create_repository_takes_default_branch_and_name(db):
    _call("create_repository", "web-shop", "--default-branch", "trunk", "--name", "Web Shop")
    repository = Repository.objects.get(slug="web-shop")
    assert (repository.default_branch, repository.name) == ("trunk", "Web Shop")


def test_create_repository_gives_the_repository_to_its_teams(db):
    from evidence.models import Team
    from evidence.teams import team_create

    team_create(name="Platform", slug="platform")
    output = _call("create_repository", "web-shop", "--team", "platform", "--team", "payments")
    repository = Repository.objects.get(slug="web-shop")
    assert sorted(repository.teams.values_list("slug", flat=True)) == ["payments", "platform"]
    assert Team.objects.get(slug="payments").name == "payments"
    assert "Created team payments; add its leads in the admin" in output
    assert "Team platform leads web-shop." in output
    assert tokens.verify(_printed_token(output)) is not None  # the token still comes last


def test_create_repository_with_a_bad_team_slug_stores_nothing(db):
    with pytest.raises(CommandError, match="slug"):
        _call("create_repository", "web-shop", "--team", "Not A Slug!")
    assert not Repository.objects.exists()
    assert not UploadToken.objects.exists()


def test_create_repository_refuses_a_bad_slug_and_stores_nothing(db):
    with pytest.raises(CommandError, match="slug"):
        _call("create_repository", "Web Shop")
    assert not Repository.objects.exists()
    assert not UploadToken.objects.exists()


def test_create_repository_refuses_a_taken_slug(db):
    _call("create_repository", "web-shop")
    with pytest.raises(CommandError, match="slug"):
        _call("create_repository", "web-shop")
    assert UploadToken.objects.count() == 1


def test_create_token_prints_a_token_of_the_asked_scope(repository):
    plain = _printed_token(_call("create_token", "acme-shop", "--scope", "ledger", "--name", "gha"))
    token = tokens.verify(plain)
    assert token is not None
    assert (token.scope, token.name, token.repository) == ("ledger", "gha", repository)


def test_create_token_for_an_unknown_repository_fails(db):
    with pytest.raises(CommandError, match="No repository"):
        _call("create_token", "nowhere", "--scope", "evidence")


def test_create_token_refuses_an_unknown_scope(repository):
    with pytest.raises(CommandError, match="invalid choice"):
        _call("create_token", "acme-shop", "--scope", "admin")
    assert not UploadToken.objects.exists()


@pytest.mark.parametrize("form", ["display", "whole"])
def test_revoke_token_revokes_by_prefix_or_whole_token(repository, form):
    token, plain = token_create(repository=repository, scope="evidence")
    output = _call("revoke_token", token.display_prefix if form == "display" else plain)
    token.refresh_from_db()
    assert token.revoked_at is not None
    assert tokens.verify(plain) is None
    assert token.display_prefix in output
    assert plain not in output


def test_revoke_token_of_an_unknown_prefix_fails(db):
    with pytest.raises(CommandError, match="No token"):
        _call("revoke_token", "fdk_zzzzzzzz")
