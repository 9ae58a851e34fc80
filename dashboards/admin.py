from django.contrib import admin

from dashboards.models import DebtSnapshot


@admin.register(DebtSnapshot)
class DebtSnapshotAdmin(admin.ModelAdmin):
    """Read-only: snapshots are computed by snapshot_debt, never typed in."""

    list_display = ["repository", "day", "active", "expiring", "expired", "skipped", "patches"]
    list_filter = ["repository"]
    date_hierarchy = "day"
    list_select_related = ["repository"]

    def has_add_permission(self, request) -> bool:
        return False

    def has_change_permission(self, request, obj=None) -> bool:
        return False
