from django import forms
from django.contrib import admin, messages
from django.db import models
from django.db.models import Count, QuerySet
from django.db.models.functions import Length
from django.http import HttpRequest
from django.utils import timezone

from evidence.models import (
    Patch,
    PersonalToken,
    Report,
    Repository,
    Run,
    RunOutcomes,
    ServerAnalysis,
    Team,
    TestName,
    UploadToken,
)


class UploadTokenInline(admin.TabularInline):
    model = UploadToken
    fields = readonly_fields = (
        "display_prefix",
        "name",
        "scope",
        "created_at",
        "last_used_at",
        "revoked_at",
    )
    extra = 0
    can_delete = False
    show_change_link = True

    def has_add_permission(self, request: HttpRequest, obj=None) -> bool:
        return False


class RepositoryForm(forms.ModelForm):
    """The git credential is written, never shown back: an empty field keeps the stored one."""

    new_git_credential = forms.CharField(
        label="Git credential",
        required=False,
        strip=True,
        widget=forms.PasswordInput(render_value=False, attrs={"autocomplete": "off"}),
        help_text="A read-only token for the git URL (sent as HTTP basic auth). Leave empty to "
        "keep the stored one; it is never shown.",
    )
    clear_git_credential = forms.BooleanField(label="Remove the stored credential", required=False)

    class Meta:
        model = Repository
        fields = ["slug", "name", "default_branch", "git_url"]

    def save(self, commit: bool = True) -> Repository:
        repository = super().save(commit=False)
        if self.cleaned_data.get("clear_git_credential"):
            repository.git_credential = ""
        elif self.cleaned_data.get("new_git_credential"):
            repository.git_credential = self.cleaned_data["new_git_credential"]
        if commit:
            repository.save()
        return repository


@admin.register(Team)
class TeamAdmin(admin.ModelAdmin):
    list_display = ["name", "slug", "member_count", "repository_count"]
    search_fields = ["name", "slug", "members__username", "repositories__slug"]
    prepopulated_fields = {"slug": ["name"]}
    filter_horizontal = ["members", "repositories"]

    def get_queryset(self, request):
        return (
            super()
            .get_queryset(request)
            .annotate(
                _members=Count("members", distinct=True),
                _repositories=Count("repositories", distinct=True),
            )
        )

    @admin.display(description="members", ordering="_members")
    def member_count(self, team: Team) -> int:
        return team._members  # type: ignore[attr-defined]  # annotated by get_queryset

    @admin.display(description="repositories", ordering="_repositories")
    def repository_count(self, team: Team) -> int:
        return team._repositories  # type: ignore[attr-defined]  # annotated by get_queryset


@admin.register(Repository)
class RepositoryAdmin(admin.ModelAdmin):
    form = RepositoryForm
    fields = [
        "slug",
        "name",
        "default_branch",
        "git_url",
        "has_git_credential",
        "new_git_credential",
        "clear_git_credential",
        "created_at",
        "updated_at",
    ]
    list_display = ["slug", "name", "default_branch", "created_at"]
    search_fields = ["slug", "name"]
    readonly_fields = ["has_git_credential", "created_at", "updated_at"]
    inlines = [UploadTokenInline]

    @admin.display(description="credential stored", boolean=True)
    def has_git_credential(self, repository: Repository) -> bool:
        return bool(repository.git_credential)


@admin.register(ServerAnalysis)
class ServerAnalysisAdmin(admin.ModelAdmin):
    list_display = ["patch", "status", "seconds", "updated_at"]
    list_filter = ["status"]
    raw_id_fields = ["patch"]
    readonly_fields = ["patch", "status", "analysis", "error", "seconds", "created_at"]

    def has_add_permission(self, request: HttpRequest) -> bool:
        return False


@admin.register(UploadToken)
class UploadTokenAdmin(admin.ModelAdmin):
    # Tokens are created by `create_token`, which shows the secret once (an admin form has no
    # good place to do that). The digest is of no use to a person, so it never leaves the table.
    list_display = ["display_prefix", "repository", "scope", "name", "last_used_at", "revoked_at"]
    list_filter = ["scope", ("revoked_at", admin.EmptyFieldListFilter)]
    list_select_related = ["repository"]
    search_fields = ["prefix", "name", "repository__slug"]
    fields = [
        "repository",
        "display_prefix",
        "name",
        "scope",
        "created_at",
        "last_used_at",
        "revoked_at",
    ]
    readonly_fields = [
        "repository",
        "display_prefix",
        "scope",
        "created_at",
        "last_used_at",
        "revoked_at",
    ]
    actions = ["revoke"]

    def has_add_permission(self, request: HttpRequest) -> bool:
        return False

    @admin.display(description="token")
    def display_prefix(self, token: UploadToken) -> str:
        return f"{token.display_prefix}…"

    @admin.action(description="Revoke selected tokens")
    def revoke(self, request: HttpRequest, queryset: QuerySet[UploadToken]) -> None:
        count = queryset.filter(revoked_at__isnull=True).update(revoked_at=timezone.now())
        self.message_user(request, f"Revoked {count} token(s).", messages.SUCCESS)


@admin.register(Run)
class RunAdmin(admin.ModelAdmin):
    list_display = [
        "__str__",
        "repository",
        "branch",
        "status",
        "passed",
        "failed",
        "skipped",
        "xfail",
        "created_at",
    ]
    list_filter = ["status"]
    list_select_related = ["repository"]
    search_fields = ["sha", "label", "repository__slug"]
    # The raw body can be tens of MiB; the admin shows its size, never its bytes.
    exclude = ["raw"]
    readonly_fields = [
        "content_sha256",
        "content_type",
        "raw_size",
        "created_at",
        "updated_at",
        "parsed_at",
    ]
    raw_id_fields = ["repository"]
    show_full_result_count = False


@admin.register(TestName)
class TestNameAdmin(admin.ModelAdmin):
    list_display = ["nodeid", "repository"]
    list_select_related = ["repository"]
    search_fields = ["nodeid"]
    raw_id_fields = ["repository"]
    show_full_result_count = False


class ReportInline(admin.StackedInline):
    # Computed by the service from the runs, ledger and policy: shown, never edited here (the
    # patch list would then disagree with the report body).
    model = Report
    extra = 0
    fields = ["status", "verdict", "codes", "body", "computed_at", "created_at"]
    readonly_fields = ["status", "verdict", "codes", "body", "computed_at", "created_at"]
    can_delete = False

    def has_add_permission(self, request, obj=None) -> bool:
        return False


@admin.register(Patch)
class PatchAdmin(admin.ModelAdmin):
    list_display = ["ref", "repository", "title", "author", "ledger_changed", "created_at"]
    list_select_related = ["repository"]
    search_fields = ["ref", "title", "author", "base_sha", "head_sha"]
    raw_id_fields = ["repository"]
    readonly_fields = ["created_at", "updated_at"]
    inlines = [ReportInline]
    # Pull-request links are https; say so rather than rely on the form's changing default.
    formfield_overrides = {models.URLField: {"assume_scheme": "https"}}


@admin.register(Report)
class ReportAdmin(admin.ModelAdmin):
    list_display = ["patch", "status", "verdict", "computed_at"]
    list_filter = ["status", "verdict"]
    list_select_related = ["patch"]
    raw_id_fields = ["patch"]
    readonly_fields = ["created_at", "updated_at", "computed_at"]

    # Computed by the service (see ReportInline).
    def has_add_permission(self, request) -> bool:
        return False

    def has_change_permission(self, request, obj=None) -> bool:
        return False


@admin.register(PersonalToken)
class PersonalTokenAdmin(admin.ModelAdmin):
    # Like upload tokens: created by `create_personal_token`, which shows the secret once; the
    # admin lists them, shows their last use, and revokes them. The digest never leaves the table.
    list_display = ["display_prefix", "user", "name", "created_at", "last_used_at", "revoked_at"]
    list_filter = [("revoked_at", admin.EmptyFieldListFilter)]
    list_select_related = ["user"]
    search_fields = ["prefix", "name", "user__username", "user__email"]
    fields = ["user", "display_prefix", "name", "created_at", "last_used_at", "revoked_at"]
    readonly_fields = ["user", "display_prefix", "created_at", "last_used_at", "revoked_at"]
    actions = ["revoke"]

    def has_add_permission(self, request: HttpRequest) -> bool:
        return False

    @admin.display(description="token")
    def display_prefix(self, token: PersonalToken) -> str:
        return f"{token.display_prefix}…"

    @admin.action(description="Revoke selected tokens")
    def revoke(self, request: HttpRequest, queryset: QuerySet[PersonalToken]) -> None:
        count = queryset.filter(revoked_at__isnull=True).update(revoked_at=timezone.now())
        self.message_user(request, f"Revoked {count} token(s).", messages.SUCCESS)


@admin.register(RunOutcomes)
class RunOutcomesAdmin(admin.ModelAdmin):
    # Written by the ingest with the run's results and read by reports: nothing to edit, and a
    # value of several MiB that the pages never load, only measure.
    list_display = ["run", "packed_bytes"]
    list_select_related = ["run"]
    raw_id_fields = ["run"]
    fields = ["run", "packed_bytes"]
    readonly_fields = ["run", "packed_bytes"]
    show_full_result_count = False

    def get_queryset(self, request: HttpRequest) -> QuerySet[RunOutcomes]:
        return super().get_queryset(request).defer("packed").annotate(size=Length("packed"))

    def has_add_permission(self, request: HttpRequest) -> bool:
        return False

    def has_change_permission(self, request: HttpRequest, obj: RunOutcomes | None = None) -> bool:
        return False

    @admin.display(description="packed size (bytes)")
    def packed_bytes(self, outcomes: RunOutcomes) -> int:
        return outcomes.size  # type: ignore[attr-defined]  # the queryset's annotation
