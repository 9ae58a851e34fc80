from django.contrib import admin

from ledger.models import (
    DigestClaim,
    Freeze,
    FreezeAction,
    FreezeEvent,
    GovernanceFile,
    LedgerVersion,
    Owner,
    Policy,
    PolicyChange,
    ReminderClaim,
)
from ledger.services import POLICY_FIELDS, policy_update


class ReadOnlyAdmin(admin.ModelAdmin):
    """Rows that only the service writes: versions, freezes and events come from the ledger
    file (an edit here would disagree with the reports and leave signed links valid), sends and
    answers are kept as they happened."""

    def has_add_permission(self, request, obj=None) -> bool:
        return False

    def has_change_permission(self, request, obj=None) -> bool:
        return False


@admin.register(LedgerVersion)
class LedgerVersionAdmin(ReadOnlyAdmin):
    list_display = ["__str__", "repository", "path", "created_at"]
    list_select_related = ["repository"]
    search_fields = ["sha", "repository__slug"]
    raw_id_fields = ["repository"]
    readonly_fields = ["created_at"]


@admin.register(GovernanceFile)
class GovernanceFileAdmin(ReadOnlyAdmin):
    list_display = ["__str__", "repository", "kind", "path", "sha256", "created_at"]
    list_filter = ["kind"]
    list_select_related = ["repository"]
    search_fields = ["sha", "sha256", "repository__slug"]
    raw_id_fields = ["repository"]
    readonly_fields = ["created_at"]


class FreezeEventInline(admin.TabularInline):
    model = FreezeEvent
    fields = readonly_fields = ("kind", "silent", "chain", "ledger_version", "created_at")
    extra = 0
    can_delete = False

    def has_add_permission(self, request, obj=None) -> bool:
        return False


@admin.register(Freeze)
class FreezeAdmin(ReadOnlyAdmin):
    list_display = ["freeze_id", "repository", "owner", "expires", "renewals", "current"]
    list_filter = ["current", "freeze_class", "allowed_in_merge"]
    list_select_related = ["repository"]
    search_fields = ["freeze_id", "nodeid", "owner", "repository__slug"]
    raw_id_fields = ["repository", "first_version", "last_version"]
    readonly_fields = ["created_at", "updated_at"]
    date_hierarchy = "expires"
    inlines = [FreezeEventInline]


@admin.register(FreezeEvent)
class FreezeEventAdmin(ReadOnlyAdmin):
    list_display = ["freeze", "kind", "silent", "chain", "repository", "created_at"]
    list_filter = ["kind", "silent"]
    list_select_related = ["freeze", "repository"]
    raw_id_fields = ["repository", "freeze", "ledger_version"]
    readonly_fields = ["created_at"]


@admin.register(Policy)
class PolicyAdmin(admin.ModelAdmin):
    list_display = ["repository", "max_freeze_days", "ledger_path", "updated_at"]
    list_select_related = ["repository"]
    fields = [
        "repository",
        "severities",
        "max_freeze_days",
        "fixture_paths",
        "ledger_path",
        "created_at",
        "updated_at",
    ]
    readonly_fields = ["repository", "created_at", "updated_at"]

    def has_add_permission(self, request) -> bool:
        # Every repository gets its policy when it is created.
        return False

    def save_model(self, request, obj: Policy, form, change: bool) -> None:
        # Through the service, so an edit made here is audited like any other.
        changes = {
            name: form.cleaned_data[name] for name in form.changed_data if name in POLICY_FIELDS
        }
        policy_update(repository=obj.repository, user=request.user, **changes)


@admin.register(PolicyChange)
class PolicyChangeAdmin(admin.ModelAdmin):
    list_display = ["repository", "changed_by", "created_at"]
    list_select_related = ["repository", "changed_by"]
    readonly_fields = ["repository", "changed_by", "before", "after", "created_at"]

    def has_add_permission(self, request) -> bool:
        return False

    def has_change_permission(self, request, obj=None) -> bool:
        return False

    def has_delete_permission(self, request, obj=None) -> bool:
        return False


@admin.register(Owner)
class OwnerAdmin(admin.ModelAdmin):
    list_display = ["handle", "name", "email", "is_team", "updated_at"]
    list_filter = ["is_team"]
    search_fields = ["handle", "name", "email"]
    readonly_fields = ["created_at", "updated_at"]


@admin.register(FreezeAction)
class FreezeActionAdmin(ReadOnlyAdmin):
    list_display = ["freeze", "freeze_version", "owner_email", "action", "created_at"]
    list_filter = ["action"]
    list_select_related = ["freeze"]
    search_fields = ["freeze__freeze_id", "owner_email", "new_reason"]

    def has_delete_permission(self, request, obj=None) -> bool:
        return False


@admin.register(ReminderClaim)
class ReminderClaimAdmin(ReadOnlyAdmin):
    list_display = ["freeze", "freeze_version", "milestone", "recipient", "sent_at", "attempts"]
    list_select_related = ["freeze"]
    search_fields = ["freeze__freeze_id", "recipient", "milestone"]


@admin.register(DigestClaim)
class DigestClaimAdmin(ReadOnlyAdmin):
    list_display = ["day", "recipient", "sent_at", "attempts"]
    search_fields = ["recipient"]
