"""Ledger endpoints under /api/v1/ (namespace "api")."""

from django.urls import path

from ledger.api import FreezesApi, LedgerApi

urlpatterns = [
    path("ledger", LedgerApi.as_view(), name="ledger"),
    path("freezes", FreezesApi.as_view(), name="freezes"),
]
