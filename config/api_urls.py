"""Everything under /api/v1/: the schema, its page, and each app's endpoints."""

from django.urls import include, path
from drf_spectacular.views import SpectacularAPIView

from config.api_docs import api_docs

app_name = "api"

urlpatterns = [
    path("schema/", SpectacularAPIView.as_view(), name="schema"),
    path("docs/", api_docs, name="docs"),
    path("", include("evidence.api_urls")),
    path("", include("ledger.api_urls")),
    path("", include("dashboards.api_urls")),
]
