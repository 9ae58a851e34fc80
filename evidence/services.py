"""Writes for repositories and upload tokens."""

from django.db import IntegrityError, transaction
from django.utils import timezone

from evidence import tokens
from evidence.models import Repository, UploadToken
from ledger.services import policy_create_default

# 36**8 prefixes make a clash rare; a few fresh draws make it practically impossible.
_PREFIX_ATTEMPTS = 5


@transaction.atomic
def repository_create(
    *, slug: str, name: str | None = None, default_branch: str = "main"
) -> Repository:
    """Create a repository with its default policy.

    Raises ValidationError on a malformed or taken slug.
    """
    repository = Repository(slug=slug, name=name or slug, default_branch=default_branch)
    repository.full_clean()
    repository.save()
    policy_create_default(repository=repository)
    return repository


def token_create(*, repository: Repository, scope: str, name: str = "") -> tuple[UploadToken, str]:
    """Create an upload token; returns the row and the plain token, which is never stored."""
    if scope not in UploadToken.Scope.values:
        raise ValueError(f"Unknown scope {scope!r}; use one of {UploadToken.Scope.values}.")
    for attempt in range(1, _PREFIX_ATTEMPTS + 1):
        new = tokens.generate()
        try:
            # A savepoint, so a prefix clash does not spoil a surrounding transaction.
            with transaction.atomic():
                token = UploadToken.objects.create(
                    repository=repository,
                    scope=scope,
                    name=name,
                    prefix=new.prefix,
                    digest=new.digest,
                )
        except IntegrityError:
            if attempt == _PREFIX_ATTEMPTS:
                raise
        else:
            return token, new.plain
    raise AssertionError("unreachable: the last attempt returns or raises")


def token_revoke(*, prefix: str) -> UploadToken:
    """Revoke the token named by its prefix (bare, ``fdk_…``, or the whole token).

    Idempotent: revoking a revoked token keeps the first revocation time.
    Raises UploadToken.DoesNotExist when no token has that prefix.
    """
    lookup = tokens.parse_prefix(prefix)
    if lookup is None:
        raise UploadToken.DoesNotExist(f"{prefix!r} does not name a token.")
    UploadToken.objects.filter(prefix=lookup, revoked_at__isnull=True).update(
        revoked_at=timezone.now()
    )
    return UploadToken.objects.select_related("repository").get(prefix=lookup)
