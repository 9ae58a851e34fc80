"""Ledger endpoints under /api/v1/ (namespace "api")."""

urlpatterns: list = []
