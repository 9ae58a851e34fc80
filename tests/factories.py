import datetime
import gzip
import hashlib

import factory
from django.contrib.auth import get_user_model

from evidence.models import Patch, Report, Repository, Run, TestName, TestResult, report_codes
from ledger.models import Freeze, FreezeEvent, LedgerVersion


class UserFactory(factory.django.DjangoModelFactory):
    class Meta:
        model = get_user_model()
        django_get_or_create = ["username"]

    username = factory.Sequence(lambda n: f"user{n}")
    email = factory.LazyAttribute(lambda user: f"{user.username}@example.com")
    password = factory.django.Password("correct horse battery staple")


class RepositoryFactory(factory.django.DjangoModelFactory):
    class Meta:
        model = Repository

    slug = factory.Sequence(lambda n: f"repo-{n}")
    name = factory.LazyAttribute(lambda repository: repository.slug.title())


def _body(run) -> bytes:
    return b'{"exit": 0, "records": []}'


class RunFactory(factory.django.DjangoModelFactory):
    class Meta:
        model = Run

    repository = factory.SubFactory(RepositoryFactory)
    sha = factory.Sequence(lambda n: hashlib.sha1(str(n).encode()).hexdigest())  # noqa: S324
    branch = "main"
    content_type = "application/json"
    raw = factory.LazyAttribute(lambda run: gzip.compress(_body(run)))
    raw_size = factory.LazyAttribute(lambda run: len(_body(run)))
    content_sha256 = factory.LazyAttribute(lambda run: hashlib.sha256(_body(run)).hexdigest())


class TestNameFactory(factory.django.DjangoModelFactory):
    __test__ = False  # a factory, not a pytest test class

    class Meta:
        model = TestName

    repository = factory.SubFactory(RepositoryFactory)
    nodeid = factory.Sequence(lambda n: f"tests/test_mod.py::test_{n}")


class TestResultFactory(factory.django.DjangoModelFactory):
    __test__ = False

    class Meta:
        model = TestResult

    run = factory.SubFactory(RunFactory)
    test = factory.SubFactory(TestNameFactory, repository=factory.SelfAttribute("..run.repository"))
    bucket = TestResult.Bucket.PASSED


class PatchFactory(factory.django.DjangoModelFactory):
    class Meta:
        model = Patch

    repository = factory.SubFactory(RepositoryFactory)
    ref = factory.Sequence(lambda n: f"PR-{n}")
    base_sha = factory.Sequence(lambda n: f"{n:040x}")
    head_sha = factory.Sequence(lambda n: f"{n + 1_000_000:040x}")


class ReportFactory(factory.django.DjangoModelFactory):
    class Meta:
        model = Report

    patch = factory.SubFactory(PatchFactory)
    body = factory.LazyFunction(dict)
    codes = factory.LazyAttribute(lambda report: report_codes(report.body))


class LedgerVersionFactory(factory.django.DjangoModelFactory):
    class Meta:
        model = LedgerVersion

    repository = factory.SubFactory(RepositoryFactory)
    sha = factory.Sequence(lambda n: f"{n + 5_000_000:040x}")
    path = "freeze_ledger.toml"
    raw = ""


class FreezeFactory(factory.django.DjangoModelFactory):
    class Meta:
        model = Freeze

    repository = factory.SubFactory(RepositoryFactory)
    freeze_id = factory.Sequence(lambda n: f"FRZ-{n:03d}")
    nodeid = factory.Sequence(lambda n: f"tests/test_net.py::test_fetch_{n}")
    covers = factory.LazyFunction(lambda: ["src/net/**"])
    owner = "team-payments"
    opened = datetime.date(2026, 11, 20)
    expires = datetime.date(2026, 11, 30)
    reason = "Connection reset by the sandbox payment gateway"
    first_version = factory.SubFactory(
        LedgerVersionFactory, repository=factory.SelfAttribute("..repository")
    )
    last_version = factory.SelfAttribute("first_version")


class FreezeEventFactory(factory.django.DjangoModelFactory):
    class Meta:
        model = FreezeEvent

    freeze = factory.SubFactory(FreezeFactory)
    repository = factory.SelfAttribute("freeze.repository")
    ledger_version = factory.SelfAttribute("freeze.first_version")
    kind = FreezeEvent.Kind.OPENED
    after = factory.LazyFunction(lambda: {"expires": "2026-11-30"})
