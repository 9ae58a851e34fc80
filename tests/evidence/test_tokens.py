import datetime
import hashlib
import re

import pytest
import time_machine
from django.db import connection
from django.utils import timezone

from evidence import tokens
from evidence.models import UploadToken
from evidence.services import token_create, token_revoke

TOKEN_SHAPE = re.compile(r"fdk_[a-z0-9]{8}_[A-Za-z0-9_-]{43}")


def test_generated_token_is_recognisable_and_carries_its_prefix():
    new = tokens.generate()
    assert TOKEN_SHAPE.fullmatch(new.plain)
    assert new.plain.startswith(f"fdk_{new.prefix}_")


def test_generated_tokens_differ():
    assert len({tokens.generate().plain for _ in range(50)}) == 50


def test_digest_is_the_sha256_of_the_whole_token():
    new = tokens.generate()
    assert new.digest == hashlib.sha256(new.plain.encode()).hexdigest()
    assert new.digest != new.plain


def test_token_is_stored_only_as_its_digest(repository):
    token, plain = token_create(repository=repository, scope="evidence")
    secret = plain.split("_", 2)[2]
    token.refresh_from_db()
    assert token.digest == tokens.hash_token(plain)
    assert token.digest != plain
    with connection.cursor() as cursor:
        cursor.execute("SELECT * FROM evidence_uploadtoken")
        stored = repr(cursor.fetchall())
    assert plain not in stored
    assert secret not in stored
    assert token.prefix in stored


def test_verify_accepts_the_token_it_issued(repository):
    token, plain = token_create(repository=repository, scope="evidence")
    assert tokens.verify(plain) == token


def test_verify_compares_digests_in_constant_time(repository, monkeypatch):
    _, plain = token_create(repository=repository, scope="evidence")
    calls = []
    real = tokens.hmac.compare_digest

    def spy(a, b):
        calls.append((a, b))
        return real(a, b)

    monkeypatch.setattr(tokens.hmac, "compare_digest", spy)
    assert tokens.verify(plain) is not None
    assert calls == [(tokens.hash_token(plain), tokens.hash_token(plain))]


def test_verify_refuses_a_wrong_secret_under_a_real_prefix(repository):
    _, plain = token_create(repository=repository, scope="evidence")
    forged = plain[:-4] + ("AAAA" if not plain.endswith("AAAA") else "BBBB")
    assert tokens.verify(forged) is None


def test_verify_refuses_a_revoked_token(repository):
    token, plain = token_create(repository=repository, scope="evidence")
    token_revoke(prefix=token.prefix)
    assert tokens.verify(plain) is None


@pytest.mark.parametrize(
    "text", ["", "fdk_", "fdk_short_secretsecretsecretsecret", "Bearer x", "ghp_" + "a" * 40]
)
def test_verify_refuses_text_that_is_not_a_token(db, text):
    assert tokens.verify(text) is None


@pytest.mark.parametrize(
    ("text", "prefix"),
    [
        ("ab12cd34", "ab12cd34"),
        ("fdk_ab12cd34", "ab12cd34"),
        ("fdk_ab12cd34_" + "x" * 43, "ab12cd34"),
        ("  fdk_ab12cd34\n", "ab12cd34"),
        ("fdk_AB12CD34", None),
        ("ab12cd3", None),
        ("other_ab12cd34", None),
    ],
)
def test_parse_prefix_accepts_prefix_display_form_or_whole_token(text, prefix):
    assert tokens.parse_prefix(text) == prefix


def test_first_use_is_recorded(repository):
    token, _ = token_create(repository=repository, scope="evidence")
    now = timezone.now()
    tokens.record_use(token, now=now)
    token.refresh_from_db()
    assert token.last_used_at == now


def test_use_within_a_minute_writes_nothing(repository, django_assert_num_queries):
    token, _ = token_create(repository=repository, scope="evidence")
    start = timezone.now()
    tokens.record_use(token, now=start)
    with django_assert_num_queries(0):
        tokens.record_use(token, now=start + datetime.timedelta(seconds=59))
    token.refresh_from_db()
    assert token.last_used_at == start


def test_use_after_a_minute_is_recorded_again(repository):
    token, _ = token_create(repository=repository, scope="evidence")
    start = timezone.now()
    tokens.record_use(token, now=start)
    later = start + datetime.timedelta(minutes=1, seconds=1)
    tokens.record_use(token, now=later)
    token.refresh_from_db()
    assert token.last_used_at == later


def test_a_stale_copy_does_not_overwrite_a_fresher_use(repository):
    token, _ = token_create(repository=repository, scope="evidence")
    start = timezone.now()
    stale_copy = UploadToken.objects.get(pk=token.pk)
    tokens.record_use(token, now=start)
    # Another request holding the row read before that write: it must not write again.
    tokens.record_use(stale_copy, now=start + datetime.timedelta(seconds=5))
    token.refresh_from_db()
    assert token.last_used_at == start


@time_machine.travel(datetime.datetime(2026, 11, 30, 9, 0, tzinfo=datetime.UTC), tick=False)
def test_record_use_defaults_to_the_current_time(repository):
    token, _ = token_create(repository=repository, scope="evidence")
    tokens.record_use(token)
    token.refresh_from_db()
    assert token.last_used_at == datetime.datetime(2026, 11, 30, 9, 0, tzinfo=datetime.UTC)
