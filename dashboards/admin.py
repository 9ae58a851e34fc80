from django.contrib import admin

from dashboards.models import DebtSnapshot, Team


@admin.register(Team)
class TeamAdmin(admin.ModelAdmin):
    list_display = ["name", "slug", "member_count", "repository_count"]
    search_fields = ["name", "slug", "members__username", "repositories__slug"]
    prepopulated_fields = {"slug": ["name"]}
    filter_horizontal = ["members", "repositories"]

    def get_queryset(self, request):
        from django.db.models import Count

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
        return team._members

    @admin.display(description="repositories", ordering="_repositories")
    def repository_count(self, team: Team) -> int:
        return team._repositories


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
