"""The freeze ledger of each repository: synced versions, the freezes they hold, the events
derived between versions, and the repository's policy with its audit trail."""

import datetime
import re

from django.conf import settings
from django.core.exceptions import NON_FIELD_ERRORS, ValidationError
from django.core.validators import MinValueValidator
from django.db import models
from django.db.models import Q
from django.urls import reverse
from django.utils import timezone

from evidence.models import Repository, TimeStamped
from freezedebt_ci.errors import InputError
from freezedebt_ci.policy import Policy as RulesPolicy

PROBLEM_CODE_PATTERN = re.compile(r"[a-z]+(?:-[a-z]+)*")


class Severity(models.TextChoices):
    BLOCK = "block"
    WARN = "warn"
    OFF = "off"


def default_fixture_paths() -> list[str]:
    return ["tests/fixtures/**", "tests/factories/**", "**/conftest.py"]


def validate_severities(value: object) -> None:
    """``{problem-code: block|warn|off}``; codes not listed keep their default severity."""
    if not isinstance(value, dict):
        raise ValidationError("Severities must be an object of problem code to severity.")
    for code, severity in value.items():
        if not isinstance(code, str) or not PROBLEM_CODE_PATTERN.fullmatch(code):
            raise ValidationError(f"{code!r} is not a problem code.")
        if severity not in Severity.values:
            raise ValidationError(f"{code}: severity must be one of {', '.join(Severity.values)}.")


def validate_path_patterns(value: object) -> None:
    """A list of repo-relative path patterns (``dir/**``, ``**/name``, or exact paths)."""
    if not isinstance(value, list):
        raise ValidationError("Fixture paths must be a list of path patterns.")
    for pattern in value:
        if not isinstance(pattern, str) or not pattern.strip():
            raise ValidationError("Each fixture path must be a non-empty string.")
        if pattern.startswith("/"):
            raise ValidationError(f"{pattern!r}: paths are relative to the repository root.")


class LedgerVersionQuerySet(models.QuerySet["LedgerVersion"]):
    def latest_for(self, repository: Repository) -> "LedgerVersion | None":
        return self.filter(repository=repository).order_by("-created_at", "-pk").first()


class LedgerVersion(models.Model):
    """The ledger file as synced at one commit of the default branch; never changed after."""

    repository = models.ForeignKey(
        Repository, on_delete=models.CASCADE, related_name="ledger_versions"
    )
    sha = models.CharField(max_length=64)
    path = models.CharField(max_length=500)
    raw = models.TextField()
    # The freezes as the shared rules normalized them (section 4.3), in ledger order.
    freezes = models.JSONField(default=list, blank=True)
    created_at = models.DateTimeField(default=timezone.now, editable=False)

    objects = LedgerVersionQuerySet.as_manager()

    class Meta:
        ordering = ["-created_at"]
        constraints = [
            # Pushing the ledger of one commit twice stores it once and derives no new events.
            models.UniqueConstraint(fields=["repository", "sha"], name="ledgerversion_unique_sha"),
        ]
        indexes = [
            models.Index(fields=["repository", "-created_at"], name="ledgerversion_recent_idx"),
        ]

    def __str__(self) -> str:
        return f"{self.repository_id} ledger @ {self.sha[:12]}"


class GovernanceFileQuerySet(models.QuerySet["GovernanceFile"]):
    def for_base(self, repository: Repository, kind: str, sha: str) -> "GovernanceFile | None":
        """The version synced at commit ``sha``, else the latest one."""
        versions = self.filter(repository=repository, kind=kind)
        return versions.filter(sha=sha).first() or versions.order_by("-created_at", "-pk").first()


class GovernanceFile(models.Model):
    """A governance file other than the ledger (the fixture lock, the oracle map) as synced at
    one commit of the default branch, with a ``ledger``-scoped token; never changed after."""

    class Kind(models.TextChoices):
        FIXTURE_LOCK = "fixture_lock", "fixture lock"
        ORACLE_MAP = "oracle_map", "oracle map"

    repository = models.ForeignKey(
        Repository, on_delete=models.CASCADE, related_name="governance_files"
    )
    kind = models.CharField(max_length=20, choices=Kind.choices)
    sha = models.CharField(max_length=64)
    path = models.CharField(max_length=500)
    raw = models.TextField()
    # Of the bytes as sent: what an analysis of a commit holding this file records.
    sha256 = models.CharField(max_length=64)
    created_at = models.DateTimeField(default=timezone.now, editable=False)

    objects = GovernanceFileQuerySet.as_manager()

    class Meta:
        ordering = ["-created_at"]
        constraints = [
            # Pushing a commit's file twice stores it once; another content for it is a conflict.
            models.UniqueConstraint(
                fields=["repository", "kind", "sha"], name="governancefile_unique_sha"
            ),
        ]
        indexes = [
            models.Index(
                fields=["repository", "kind", "-created_at"], name="governancefile_recent_idx"
            ),
        ]

    def __str__(self) -> str:
        return f"{self.repository_id} {self.kind} @ {self.sha[:12]}"


class FreezeQuerySet(models.QuerySet["Freeze"]):
    def current(self) -> "FreezeQuerySet":
        """Freezes in the repository's latest ledger (not retired)."""
        return self.filter(current=True)

    def active_on(self, day: datetime.date) -> "FreezeQuerySet":
        """Current freezes still in force on ``day`` (active through their expiry, inclusive)."""
        return self.current().filter(expires__gte=day)

    def expired_on(self, day: datetime.date) -> "FreezeQuerySet":
        """Current freezes that expired before ``day``: still in the ledger, no longer valid."""
        return self.current().filter(expires__lt=day)


class Freeze(TimeStamped):
    """One freeze id of a repository as of the latest ledger that held it."""

    repository = models.ForeignKey(Repository, on_delete=models.CASCADE, related_name="freezes")
    freeze_id = models.CharField(max_length=200)
    nodeid = models.TextField()
    covers = models.JSONField(default=list)
    owner = models.CharField(max_length=254)
    opened = models.DateField(null=True, blank=True)
    # Null when the ledger's entry lacks its expiry: an invalid-freeze, neither active nor
    # expired (as the shared rules see it), but still part of the ledger and its history.
    expires = models.DateField(null=True, blank=True)
    reason = models.TextField()
    compensating_check = models.TextField(blank=True, default="")
    # Free text: a ledger may hold an unknown or forbidden class, which is an invalid-freeze.
    freeze_class = models.CharField(max_length=64, blank=True, default="")
    signature = models.CharField(max_length=64, blank=True, default="")
    blocks_symbols = models.JSONField(default=list, blank=True)
    allowed_in_merge = models.BooleanField(default=False)
    version = models.PositiveIntegerField(default=1)
    renewals = models.PositiveIntegerField(default=0)
    current = models.BooleanField(default=True)
    # RESTRICT: ledger history is never deleted from under a freeze, except with its repository.
    first_version = models.ForeignKey(
        LedgerVersion, on_delete=models.RESTRICT, related_name="opened_freezes"
    )
    last_version = models.ForeignKey(LedgerVersion, on_delete=models.RESTRICT, related_name="+")

    objects = FreezeQuerySet.as_manager()

    class Meta:
        ordering = ["repository", "expires", "freeze_id"]
        constraints = [
            # Events, acknowledgements and reminders refer to a freeze by its ledger id.
            models.UniqueConstraint(
                fields=["repository", "freeze_id"], name="freeze_unique_id_per_repository"
            ),
            # Signed links name a freeze version; versions count from 1.
            models.CheckConstraint(condition=Q(version__gte=1), name="freeze_version_positive"),
        ]
        indexes = [
            # Dashboards and reminders filter current freezes by expiry.
            models.Index(
                fields=["repository", "expires"],
                condition=Q(current=True),
                name="freeze_current_expiry_idx",
            ),
        ]

    def __str__(self) -> str:
        return self.freeze_id

    def get_absolute_url(self) -> str:
        return reverse("dashboards:freeze", args=[self.repository.slug, self.freeze_id])

    def page_url(self) -> str:
        """The freeze page on the public base URL, for e-mails (SITE_URL)."""
        return settings.SITE_URL + self.get_absolute_url()


class FreezeEvent(models.Model):
    """What changed for one freeze between two synced ledger versions (section 5.4)."""

    class Kind(models.TextChoices):
        OPENED = "opened"
        RENEWED = "renewed"
        RETIRED = "retired"
        EDITED = "edited"

    repository = models.ForeignKey(
        Repository, on_delete=models.CASCADE, related_name="freeze_events"
    )
    freeze = models.ForeignKey(Freeze, on_delete=models.CASCADE, related_name="events")
    ledger_version = models.ForeignKey(
        LedgerVersion, on_delete=models.CASCADE, related_name="events"
    )
    kind = models.CharField(max_length=16, choices=Kind.choices)
    # A renewal whose reason did not change: flagged on the freeze's page.
    silent = models.BooleanField(default=False)
    # Renewals in this freeze's chain so far, this one included.
    chain = models.PositiveIntegerField(default=0)
    before = models.JSONField(null=True, blank=True)
    after = models.JSONField(null=True, blank=True)
    created_at = models.DateTimeField(default=timezone.now, editable=False)

    class Meta:
        ordering = ["-created_at", "-pk"]
        constraints = [
            # Re-deriving events for a version (a retried task) must not duplicate them.
            models.UniqueConstraint(
                fields=["freeze", "ledger_version", "kind"], name="freezeevent_unique_per_version"
            ),
            models.CheckConstraint(
                condition=Q(kind__in=["opened", "renewed", "retired", "edited"]),
                name="freezeevent_known_kind",
            ),
            # Only a renewal can be silent.
            models.CheckConstraint(
                condition=Q(silent=False) | Q(kind="renewed"), name="freezeevent_silent_is_renewal"
            ),
            # An opening has no before, a retirement no after, anything else both: pages diff them.
            models.CheckConstraint(
                condition=(
                    Q(kind="opened", before__isnull=True, after__isnull=False)
                    | Q(kind="retired", before__isnull=False, after__isnull=True)
                    | Q(kind__in=["renewed", "edited"], before__isnull=False, after__isnull=False)
                ),
                name="freezeevent_snapshots_match_kind",
            ),
        ]
        indexes = [
            models.Index(fields=["repository", "-created_at"], name="freezeevent_recent_idx"),
        ]

    def __str__(self) -> str:
        return f"{self.kind} (freeze #{self.freeze_id}, ledger version #{self.ledger_version_id})"


class Policy(TimeStamped):
    """How a repository's report problems count. Change it only through ``policy_update``."""

    repository = models.OneToOneField(Repository, on_delete=models.CASCADE, related_name="policy")
    # Overrides only: a problem code absent here keeps the default severity of the shared rules.
    severities = models.JSONField(default=dict, blank=True, validators=[validate_severities])
    max_freeze_days = models.PositiveIntegerField(default=14, validators=[MinValueValidator(1)])
    fixture_paths = models.JSONField(
        default=default_fixture_paths, blank=True, validators=[validate_path_patterns]
    )
    ledger_path = models.CharField(max_length=500, default="freeze_ledger.toml")
    # A patch declared without a (complete) analysis is an analysis-missing problem.
    require_analysis = models.BooleanField(default=False)

    class Meta:
        verbose_name_plural = "policies"
        constraints = [
            # A freeze of at most zero days could never be valid.
            models.CheckConstraint(
                condition=Q(max_freeze_days__gte=1), name="policy_max_freeze_days_positive"
            ),
            # The ledger-in-patch rule compares changed paths with this one.
            models.CheckConstraint(condition=~Q(ledger_path=""), name="policy_ledger_path_set"),
        ]

    def __str__(self) -> str:
        return f"policy of {self.repository_id}"

    def clean(self) -> None:
        """Refuse what the shared rules could not load (an unknown problem code, a path pattern
        they do not support): every report of the repository would fail on it. Field errors,
        as the admin and the dashboard's form show them."""
        try:
            settings_ = self.snapshot()
        except (TypeError, ValueError):
            return  # not even the right shape: the field validators say so
        try:
            RulesPolicy.from_mapping(settings_)
        except InputError as exc:
            errors: dict[str, list[str]] = {}
            for problem in exc.problems:
                field = re.split(r"[.\[]", problem.where, maxsplit=1)[0]
                errors.setdefault(field if field in settings_ else NON_FIELD_ERRORS, []).append(
                    str(problem)
                )
            raise ValidationError(errors, code="invalid") from None

    def snapshot(self) -> dict[str, object]:
        """The editable settings as plain data, as audit rows record them."""
        return {
            "severities": dict(self.severities),
            "max_freeze_days": self.max_freeze_days,
            "fixture_paths": list(self.fixture_paths),
            "ledger_path": self.ledger_path,
            "require_analysis": self.require_analysis,
        }


class PolicyChange(models.Model):
    """One audited change of a repository's policy (section 5.3: policy changes are audited)."""

    repository = models.ForeignKey(
        Repository, on_delete=models.CASCADE, related_name="policy_changes"
    )
    changed_by = models.ForeignKey(
        settings.AUTH_USER_MODEL, on_delete=models.SET_NULL, null=True, blank=True, related_name="+"
    )
    before = models.JSONField()
    after = models.JSONField()
    created_at = models.DateTimeField(default=timezone.now, editable=False)

    class Meta:
        ordering = ["-created_at", "-pk"]
        indexes = [
            models.Index(fields=["repository", "-created_at"], name="policychange_recent_idx"),
        ]

    def __str__(self) -> str:
        return f"policy change of {self.repository_id} at {self.created_at:%Y-%m-%d %H:%M}"


# --- Owners, reminders and acknowledgements (section 8) -----------------------------------


class Owner(TimeStamped):
    """A person or team of the owner directory; a ledger ``owner`` handle names one."""

    handle = models.CharField(max_length=254)
    name = models.CharField(max_length=200, blank=True, default="")
    email = models.EmailField()
    is_team = models.BooleanField(default=False)

    class Meta:
        ordering = ["handle"]
        constraints = [
            # Resolving a ledger handle must find at most one owner.
            models.UniqueConstraint(fields=["handle"], name="owner_unique_handle"),
            models.CheckConstraint(condition=~Q(handle=""), name="owner_handle_set"),
        ]

    def __str__(self) -> str:
        return self.handle


class Claim(models.Model):
    """Work taken before it is done: the row is inserted (unique) before the e-mail goes out."""

    recipient = models.EmailField()
    claimed_at = models.DateTimeField(default=timezone.now)
    sent_at = models.DateTimeField(null=True, blank=True)
    # Set when the last attempt raised, so the next run (or the task's retry) may take it again.
    failed_at = models.DateTimeField(null=True, blank=True)
    attempts = models.PositiveIntegerField(default=1)

    class Meta:
        abstract = True


class ReminderClaim(Claim):
    """One owner reminder: at most one per freeze, freeze version and milestone."""

    freeze = models.ForeignKey(Freeze, on_delete=models.CASCADE, related_name="reminder_claims")
    freeze_version = models.PositiveIntegerField()
    # "d7", "d3", "d1", "d0" (expiry day) or "expired:YYYY-MM-DD" (daily while expired).
    milestone = models.CharField(max_length=32)

    class Meta:
        ordering = ["-claimed_at", "-pk"]
        constraints = [
            # send_freeze_reminders: any number of workers, retries or re-runs send it once.
            models.UniqueConstraint(
                fields=["freeze", "freeze_version", "milestone"],
                name="reminderclaim_once_per_milestone",
            ),
        ]

    def __str__(self) -> str:
        return f"{self.milestone} of freeze #{self.freeze_id} v{self.freeze_version}"


class DigestClaim(Claim):
    """One lead digest: at most one per recipient and day."""

    day = models.DateField()

    class Meta:
        ordering = ["-day", "recipient"]
        constraints = [
            # send_freeze_reminders runs hourly; a lead gets one digest a day.
            models.UniqueConstraint(fields=["recipient", "day"], name="digestclaim_once_per_day"),
        ]

    def __str__(self) -> str:
        return f"digest of {self.day} to {self.recipient}"


class FreezeAction(models.Model):
    """What an owner answered through a signed link; kept for good, with time and action."""

    class Action(models.TextChoices):
        ACKNOWLEDGE = "acknowledge", "acknowledged (I am on it)"
        RENEWAL = "renewal", "requested a renewal"
        FIXED = "fixed", "reported fixed"

    freeze = models.ForeignKey(Freeze, on_delete=models.CASCADE, related_name="actions")
    freeze_version = models.PositiveIntegerField()
    owner_email = models.EmailField()
    action = models.CharField(max_length=16, choices=Action.choices)
    # The proposed reason of a renewal request; leads see it. The freeze itself is unchanged.
    new_reason = models.TextField(blank=True, default="")
    nonce = models.CharField(max_length=64)
    created_at = models.DateTimeField(default=timezone.now, editable=False)

    class Meta:
        ordering = ["-created_at", "-pk"]
        constraints = [
            # A signed link acts once: its nonce is recorded with the action it took.
            models.UniqueConstraint(fields=["nonce"], name="freezeaction_link_used_once"),
            models.CheckConstraint(
                condition=Q(action__in=["acknowledge", "renewal", "fixed"]),
                name="freezeaction_known_action",
            ),
            # Only a renewal request carries a proposed reason, and it always does.
            models.CheckConstraint(
                condition=(Q(action="renewal") & ~Q(new_reason=""))
                | (~Q(action="renewal") & Q(new_reason="")),
                name="freezeaction_reason_only_on_renewal",
            ),
        ]
        indexes = [
            models.Index(fields=["freeze", "-created_at"], name="freezeaction_recent_idx"),
        ]

    def __str__(self) -> str:
        return f"{self.owner_email} {self.get_action_display()} #{self.freeze_id}"
