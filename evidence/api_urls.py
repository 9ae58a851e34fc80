"""Evidence endpoints under /api/v1/ (namespace "api")."""

from django.urls import path

from evidence.api import TokenApi

urlpatterns = [
    path("token", TokenApi.as_view(), name="token"),
]
