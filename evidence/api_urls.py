"""Evidence endpoints under /api/v1/ (namespace "api")."""

from django.urls import path

from evidence.api import RunApi, RunsApi, TokenApi

urlpatterns = [
    path("token", TokenApi.as_view(), name="token"),
    path("runs", RunsApi.as_view(), name="runs"),
    path("runs/<int:run_id>", RunApi.as_view(), name="run-detail"),
]

# Patches, their reports, and the repository list (evidence/patch_api.py).
from evidence.patch_api import PatchesApi, PatchReportApi, RepositoriesApi  # noqa: E402

urlpatterns += [
    path("patches", PatchesApi.as_view(), name="patches"),
    path("patches/<int:patch_id>/report", PatchReportApi.as_view(), name="patch-report"),
    path("repositories", RepositoriesApi.as_view(), name="repositories"),
]
