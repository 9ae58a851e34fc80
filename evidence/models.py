"""Repositories, the teams that lead them, their upload tokens, and the evidence CI sends:
runs, per-test results, patches and their reports."""

import hashlib
import re
from typing import Any

from django.conf import settings
from django.core.exceptions import ValidationError
from django.core.validators import RegexValidator
from django.db import models
from django.db.models import Q
from django.utils import timezone


class TimeStamped(models.Model):
    # A default rather than auto_now_add, so demo data and imports can set real past times.
    created_at = models.DateTimeField(default=timezone.now, editable=False)
    updated_at = models.DateTimeField(auto_now=True)

    class Meta:
        abstract = True


SLUG_PATTERN = r"^[a-z0-9][a-z0-9_-]*\Z"
validate_repository_slug = RegexValidator(
    SLUG_PATTERN,
    "Use lowercase letters, digits, hyphens and underscores, starting with a letter or digit.",
    code="invalid_slug",
)


def validate_git_url(value: str) -> None:
    """https://, http://, ssh://, git:// or file:// URLs, scp-like ``user@host:path``, or an
    absolute path; never a transport that runs a command (``ext::``) or an option."""
    if not value:
        return
    allowed = ("https://", "http://", "ssh://", "git://", "file://", "/")
    scp_like = re.fullmatch(r"[A-Za-z0-9._-]+@[A-Za-z0-9.-]+:[^\s]+", value) is not None
    if (
        value.startswith("-")
        or "::" in value
        or any(c in value for c in "\n\r\x00")
        or not (value.startswith(allowed) or scp_like)
    ):
        raise ValidationError(
            "Expected an https://, ssh://, git:// or file:// URL, user@host:path, or an "
            "absolute path."
        )


class Repository(TimeStamped):
    slug = models.CharField(max_length=100, validators=[validate_repository_slug])
    name = models.CharField(max_length=200)
    default_branch = models.CharField(max_length=200, default="main")
    # A remote the workers may read (https://, ssh:// or a path): then a worker analyzes each
    # patch itself, in its own mirror, and the report judges that analysis (SPEC 5.7).
    git_url = models.CharField(
        max_length=2000, blank=True, default="", validators=[validate_git_url]
    )
    # Read-only credential for git_url (a token sent as HTTP basic auth). A secret: never
    # shown back by a page, the admin or the API.
    git_credential = models.TextField(blank=True, default="")

    class Meta:
        ordering = ["slug"]
        verbose_name_plural = "repositories"
        constraints = [
            # URLs, commands and tokens name a repository by its slug.
            models.UniqueConstraint(fields=["slug"], name="repository_unique_slug"),
            # The slug appears in URLs; keep it to the validated alphabet whatever wrote it.
            # ("$" may match before a final newline in some regex engines, hence the second test.)
            models.CheckConstraint(
                condition=Q(slug__regex=r"^[a-z0-9][a-z0-9_-]*$") & ~Q(slug__contains="\n"),
                name="repository_slug_format",
            ),
        ]

    def __str__(self) -> str:
        return self.slug


class Team(TimeStamped):
    """A group of leads owning repositories: its members see them and get their digests."""

    name = models.CharField(max_length=200)
    slug = models.SlugField(max_length=100)
    members = models.ManyToManyField(
        settings.AUTH_USER_MODEL, related_name="freezedebt_teams", blank=True
    )
    repositories = models.ManyToManyField(Repository, related_name="teams", blank=True)

    class Meta:
        # The table kept its name when the model moved here from the dashboards app.
        db_table = "dashboards_team"
        ordering = ["slug"]
        constraints = [
            # Admin links and the demo name a team by its slug.
            models.UniqueConstraint(fields=["slug"], name="team_unique_slug"),
        ]

    def __str__(self) -> str:
        return self.name


# Every token text starts with this marker, so a leaked token is recognisable by scanners.
TOKEN_MARKER = "fdk"  # noqa: S105 - a public marker, not a secret


class UploadTokenQuerySet(models.QuerySet["UploadToken"]):
    def live(self) -> "UploadTokenQuerySet":
        return self.filter(revoked_at__isnull=True)


class UploadToken(models.Model):
    """A CI credential for one repository. Only a SHA-256 digest of the token is stored."""

    class Scope(models.TextChoices):
        EVIDENCE = "evidence", "evidence (runs, patches, analysis)"
        LEDGER = "ledger", "ledger (sync from the default branch)"

    repository = models.ForeignKey(Repository, on_delete=models.CASCADE, related_name="tokens")
    name = models.CharField(max_length=100, blank=True)
    scope = models.CharField(max_length=16, choices=Scope.choices)
    prefix = models.CharField(max_length=16, editable=False)
    digest = models.CharField(max_length=64, editable=False)
    created_at = models.DateTimeField(default=timezone.now, editable=False)
    last_used_at = models.DateTimeField(null=True, blank=True, editable=False)
    revoked_at = models.DateTimeField(null=True, blank=True)

    objects = UploadTokenQuerySet.as_manager()

    class Meta:
        ordering = ["repository", "-created_at"]
        constraints = [
            # Authentication finds the token by its prefix before comparing digests.
            models.UniqueConstraint(fields=["prefix"], name="uploadtoken_unique_prefix"),
            # A scope outside the known ones would grant nothing or, worse, something unplanned.
            models.CheckConstraint(
                condition=Q(scope__in=["evidence", "ledger"]), name="uploadtoken_known_scope"
            ),
        ]

    def __str__(self) -> str:
        return f"{self.display_prefix} ({self.repository_id}, {self.scope})"

    @property
    def display_prefix(self) -> str:
        """The recognisable start of the token text, safe to show and log."""
        return f"{TOKEN_MARKER}_{self.prefix}"

    @property
    def is_live(self) -> bool:
        return self.revoked_at is None


class RunQuerySet(models.QuerySet["Run"]):
    def latest_attempt(self, *, repository: Repository, sha: str, label: str = "") -> "Run | None":
        """The run reports use for a commit and label: its highest attempt."""
        return self.filter(repository=repository, sha=sha, label=label).order_by("-attempt").first()

    def awaiting_parse(self, *, received_before) -> "RunQuerySet":
        """Runs accepted but not yet parsed, e.g. because the broker was down."""
        return self.filter(status=Run.Status.RECEIVED, created_at__lt=received_before)


class _RunsWithoutUpload(models.Manager["Run"]):
    """Runs without their stored upload, which may be tens of MiB: the manager Django uses
    behind the scenes (deletion cascades, related access, ``refresh_from_db``)."""

    def get_queryset(self) -> models.QuerySet["Run"]:
        return super().get_queryset().defer("raw")


class Run(TimeStamped):
    class Status(models.TextChoices):
        RECEIVED = "received"
        READY = "ready"
        REJECTED = "rejected"

    repository = models.ForeignKey(Repository, on_delete=models.CASCADE, related_name="runs")
    sha = models.CharField(max_length=64)
    branch = models.CharField(max_length=255, blank=True, default="")
    label = models.CharField(max_length=100, blank=True, default="")
    attempt = models.PositiveIntegerField(default=1)
    content_sha256 = models.CharField(max_length=64)
    content_type = models.CharField(max_length=100)
    # The request body as received (after any Content-Encoding), stored gzip-compressed.
    raw = models.BinaryField()
    raw_size = models.BigIntegerField(help_text="Size of the uncompressed body in bytes.")
    status = models.CharField(max_length=16, choices=Status.choices, default=Status.RECEIVED)
    reasons = models.JSONField(default=list, blank=True)
    exit_code = models.IntegerField(null=True, blank=True)
    meta = models.JSONField(default=dict, blank=True)
    passed = models.PositiveIntegerField(default=0)
    failed = models.PositiveIntegerField(default=0)
    skipped = models.PositiveIntegerField(default=0)
    xfail = models.PositiveIntegerField(default=0)
    parsed_at = models.DateTimeField(null=True, blank=True)
    # Parse attempts begun (evidence.ingest): bounded, so no run stays received for ever.
    ingest_attempts = models.PositiveSmallIntegerField(default=0)

    objects = RunQuerySet.as_manager()
    # Deleting a repository loads its runs whole (the pre_delete lock in evidence.signals
    # needs instances): without their uploads.
    without_upload = _RunsWithoutUpload()

    class Meta:
        base_manager_name = "without_upload"
        ordering = ["-created_at"]
        constraints = [
            # Repeated uploads of one attempt store one run (200 same content, 409 other);
            # its index also answers "latest attempt of (repository, sha, label)".
            models.UniqueConstraint(
                fields=["repository", "sha", "label", "attempt"], name="run_unique_attempt"
            ),
            # Attempts count from 1; "latest attempt" ordering relies on it.
            models.CheckConstraint(condition=Q(attempt__gte=1), name="run_attempt_positive"),
            models.CheckConstraint(
                condition=Q(status__in=["received", "ready", "rejected"]), name="run_known_status"
            ),
            # A run leaves "received" only by being parsed; the time says when.
            models.CheckConstraint(
                condition=Q(status="received") | Q(parsed_at__isnull=False),
                name="run_parsed_has_parsed_at",
            ),
        ]
        indexes = [
            # The periodic sweep looks only at runs still waiting to be parsed.
            models.Index(
                fields=["created_at"], condition=Q(status="received"), name="run_received_idx"
            ),
            # Repository pages list recent runs of a branch (the default branch for skip debt).
            models.Index(fields=["repository", "branch", "-created_at"], name="run_branch_idx"),
            # A freeze's page shows the frozen test in the repository's latest parsed runs.
            models.Index(
                fields=["repository", "-created_at", "-id"],
                condition=Q(status="ready"),
                name="run_ready_recent_idx",
            ),
        ]

    def __str__(self) -> str:
        label = f" [{self.label}]" if self.label else ""
        return f"{self.repository_id}@{self.sha[:12]}{label} #{self.attempt}"


class TestName(models.Model):
    """A node id the repository tracks test by test (one its ledger freezes or froze), stored
    once and referenced by every result of that test (``evidence.results``). Runs stored before
    tracking began name every test of their run."""

    __test__ = False  # not a pytest test class, whatever its name says

    # No index of its own: the unique constraint below leads with it. No foreign key
    # constraint in the database either, as for TestResult: Django's cascade removes names
    # with their repository.
    repository = models.ForeignKey(
        Repository,
        on_delete=models.CASCADE,
        related_name="+",
        db_index=False,
        db_constraint=False,
    )
    nodeid = models.TextField()
    # A B-tree entry cannot hold a node id of several KiB on PostgreSQL, so uniqueness and
    # lookups go through this fixed-size digest of the node id. On PostgreSQL it is collated
    # "C" (migration 0012): hex digits compare bytewise, several times faster than a locale.
    nodeid_sha256 = models.CharField(max_length=64, editable=False)

    class Meta:
        constraints = [
            # Interning: one row per node id per repository, so results refer to it by key.
            models.UniqueConstraint(
                fields=["repository", "nodeid_sha256"], name="testname_unique_nodeid"
            ),
        ]

    def __str__(self) -> str:
        return self.nodeid

    def save(self, *args, **kwargs) -> None:
        self.nodeid_sha256 = self.digest(self.nodeid)
        super().save(*args, **kwargs)

    @staticmethod
    def digest(nodeid: str) -> str:
        return hashlib.sha256(nodeid.encode("utf-8")).hexdigest()

    @classmethod
    def build(cls, *, repository: Repository, nodeid: str) -> "TestName":
        """An unsaved instance with its digest filled, for bulk_create."""
        return cls(repository=repository, nodeid=nodeid, nodeid_sha256=cls.digest(nodeid))


class TestResult(models.Model):
    """The bucket of one tracked test in one run (section 5: exactly one bucket per node id);
    every bucket of a run is in its RunOutcomes."""

    __test__ = False

    class Bucket(models.IntegerChoices):
        PASSED = 1, "passed"
        FAILED = 2, "failed"
        SKIPPED = 3, "skipped"
        XFAIL = 4, "xfail"

    # The primary key is (run, test): one result per test and run, and the only index. Results
    # are read by run, or by test within a few runs, so no index on test alone.
    pk = models.CompositePrimaryKey("run", "test")
    # No foreign key constraints in the database either (PostgreSQL checks each one by locking
    # the referenced row at commit): results are written only by the ingest, holding its run's
    # row lock, and by a ledger sync for ready runs; Django's cascade removes them with their
    # run or test name.
    run = models.ForeignKey(
        Run,
        on_delete=models.CASCADE,
        related_name="results",
        db_index=False,
        db_constraint=False,
    )
    test = models.ForeignKey(
        TestName,
        on_delete=models.CASCADE,
        related_name="results",
        db_index=False,
        db_constraint=False,
    )
    bucket = models.PositiveSmallIntegerField(choices=Bucket.choices)
    duration = models.FloatField(null=True, blank=True)
    signature = models.CharField(max_length=64, blank=True, default="")
    freeze = models.CharField(max_length=100, blank=True, default="")

    class Meta:
        constraints = [
            models.CheckConstraint(
                condition=Q(bucket__in=[1, 2, 3, 4]), name="testresult_known_bucket"
            ),
        ]

    def __str__(self) -> str:
        return f"{self.test_id} in run {self.run_id}: {self.get_bucket_display()}"


class RunOutcomes(models.Model):
    """The bucket of every node id of a ready run, packed into one compressed value (see
    ``evidence.run_outcomes.outcomes_pack``): what a report reads, one value rather than a row
    per test.

    Written by the ingest in the transaction that marks the run ready. A run without one (stored
    before it existed) is read from its stored upload. A table of its own, so that loading a
    run never loads it.
    """

    run = models.OneToOneField(
        Run, on_delete=models.CASCADE, primary_key=True, related_name="outcomes"
    )
    packed = models.BinaryField()

    class Meta:
        verbose_name_plural = "run outcomes"

    def __str__(self) -> str:
        return f"outcomes of run {self.run_id}"


class PatchQuerySet(models.QuerySet["Patch"]):
    def touching_run(self, run: Run) -> "PatchQuerySet":
        """Patches whose base or head is the run (its commit and label, or no label: such a
        patch may be judged on the run's, see evidence.reports.patch_label): their reports may
        now be computed."""
        return self.filter(repository=run.repository_id, label__in={run.label, ""}).filter(
            Q(base_sha=run.sha) | Q(head_sha=run.sha)
        )


class Patch(TimeStamped):
    repository = models.ForeignKey(Repository, on_delete=models.CASCADE, related_name="patches")
    ref = models.CharField(max_length=200)
    base_sha = models.CharField(max_length=64)
    head_sha = models.CharField(max_length=64)
    title = models.CharField(max_length=500, blank=True, default="")
    url = models.URLField(max_length=2000, blank=True, default="")
    author = models.CharField(max_length=200, blank=True, default="")
    # The run label whose runs the report compares (for one sha and label the latest attempt).
    label = models.CharField(max_length=100, blank=True, default="")
    changed = models.JSONField(default=list, blank=True)
    ledger_changed = models.BooleanField(default=False)
    analysis = models.JSONField(null=True, blank=True)

    objects = PatchQuerySet.as_manager()

    class Meta:
        ordering = ["-created_at"]
        verbose_name_plural = "patches"
        constraints = [
            # Declaring the same patch revision twice returns the existing one (200, not 201).
            models.UniqueConstraint(
                fields=["repository", "ref", "base_sha", "head_sha"], name="patch_unique_revision"
            ),
        ]
        indexes = [
            # An arriving run looks up the patches it completes, by base or by head.
            models.Index(fields=["repository", "base_sha"], name="patch_base_idx"),
            models.Index(fields=["repository", "head_sha"], name="patch_head_idx"),
            # Repository pages and the blocked share list recent patches.
            models.Index(fields=["repository", "-created_at"], name="patch_recent_idx"),
        ]

    def __str__(self) -> str:
        return f"{self.ref} ({self.base_sha[:8]}..{self.head_sha[:8]})"


class Report(TimeStamped):
    class Status(models.TextChoices):
        PENDING = "pending"
        READY = "ready"

    class Verdict(models.TextChoices):
        PENDING = "pending"
        PASS = "pass"  # noqa: S105 - a verdict, not a password
        BLOCK = "block"

    patch = models.OneToOneField(Patch, on_delete=models.CASCADE, related_name="report")
    status = models.CharField(max_length=16, choices=Status.choices, default=Status.PENDING)
    verdict = models.CharField(max_length=16, choices=Verdict.choices, default=Verdict.PENDING)
    body = models.JSONField(default=dict, blank=True)
    # The codes of the body's problems (report_codes): what lists of patches show, read without
    # the body, which PostgreSQL would decompress whole to find them (megabytes for a large
    # suite, fifty times per page).
    codes = models.JSONField(default=list, blank=True)
    computed_at = models.DateTimeField(null=True, blank=True)

    class Meta:
        constraints = [
            # A pending report has no verdict yet, and a ready one always has pass or block:
            # CI must never read "pass" off a report still waiting for a run.
            models.CheckConstraint(
                condition=(
                    Q(status="pending", verdict="pending")
                    | Q(status="ready", verdict__in=["pass", "block"])
                ),
                name="report_pending_iff_verdict_pending",
            ),
        ]

    def __str__(self) -> str:
        return f"report of {self.patch_id}: {self.status}/{self.verdict}"

    @staticmethod
    def fields_of(body: dict[str, Any]) -> dict[str, Any]:
        """What a report stores of a computed body: its status, verdict and codes, and itself."""
        return {
            "status": body["status"],
            "verdict": body["verdict"],
            "codes": report_codes(body),
            "body": body,
        }


def report_codes(body: Any) -> list[str]:
    """The distinct codes of a report body's problems, sorted ("" for a problem without one)."""
    problems = body.get("problems") if isinstance(body, dict) else None
    if not isinstance(problems, list):
        return []
    return sorted({p.get("code", "") for p in problems if isinstance(p, dict)})


# Personal tokens carry their own marker, so neither kind of token can pass for the other and a
# leaked one says at a glance whether it opens a person's reads or a repository's uploads.
PERSONAL_TOKEN_MARKER = "fdp"  # noqa: S105 - a public marker, not a secret


class PersonalTokenQuerySet(models.QuerySet["PersonalToken"]):
    def live(self) -> "PersonalTokenQuerySet":
        return self.filter(revoked_at__isnull=True)


class PersonalToken(models.Model):
    """A person's API credential for the read endpoints; it acts as that user and sees what
    they see. Only a SHA-256 digest of the token is stored."""

    user = models.ForeignKey(
        settings.AUTH_USER_MODEL, on_delete=models.CASCADE, related_name="personal_tokens"
    )
    name = models.CharField(max_length=100, blank=True)
    prefix = models.CharField(max_length=16, editable=False)
    digest = models.CharField(max_length=64, editable=False)
    created_at = models.DateTimeField(default=timezone.now, editable=False)
    last_used_at = models.DateTimeField(null=True, blank=True, editable=False)
    revoked_at = models.DateTimeField(null=True, blank=True)

    objects = PersonalTokenQuerySet.as_manager()

    class Meta:
        ordering = ["user", "-created_at"]
        constraints = [
            # Authentication finds the token by its prefix before comparing digests.
            models.UniqueConstraint(fields=["prefix"], name="personaltoken_unique_prefix"),
        ]

    def __str__(self) -> str:
        return f"{self.display_prefix} ({self.user})"

    @property
    def display_prefix(self) -> str:
        """The recognisable start of the token text, safe to show and log."""
        return f"{PERSONAL_TOKEN_MARKER}_{self.prefix}"

    @property
    def is_live(self) -> bool:
        return self.revoked_at is None


class ServerAnalysis(TimeStamped):
    """The service's own analysis of a patch, made by a worker from the repository's git remote
    (a process the patch cannot edit). Replaced when the patch revision is analyzed again."""

    class Status(models.TextChoices):
        RUNNING = "running", "running"
        DONE = "done", "done"
        FAILED = "failed", "failed"

    patch = models.OneToOneField(Patch, on_delete=models.CASCADE, related_name="server_analysis")
    status = models.CharField(max_length=10, choices=Status.choices, default=Status.RUNNING)
    analysis = models.JSONField(null=True, blank=True)
    error = models.TextField(blank=True, default="")
    seconds = models.FloatField(null=True, blank=True)

    class Meta:
        verbose_name_plural = "server analyses"
        constraints = [
            # A finished analysis has its JSON; a failed one says why.
            models.CheckConstraint(
                condition=~Q(status="done") | Q(analysis__isnull=False),
                name="serveranalysis_done_has_analysis",
            ),
        ]

    def __str__(self) -> str:
        return f"server analysis of patch {self.patch_id} ({self.status})"
