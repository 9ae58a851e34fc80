"""Dashboard endpoints under /api/v1/ (namespace "api")."""

from django.urls import path

from dashboards.api import DebtApi

urlpatterns = [
    path("debt", DebtApi.as_view(), name="debt"),
]
