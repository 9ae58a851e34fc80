"""Ledger endpoints under /api/v1/ (namespace "api")."""

from django.urls import path

from ledger.api import FreezesApi, GovernanceApi, LedgerApi

urlpatterns = [
    path("ledger", LedgerApi.as_view(), name="ledger"),
    path("governance/<str:kind>", GovernanceApi.as_view(), name="governance"),
    path("freezes", FreezesApi.as_view(), name="freezes"),
]
