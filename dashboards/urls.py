from django.urls import path

from dashboards import views

app_name = "dashboards"

urlpatterns = [
    path("", views.index, name="index"),
    path("export/<slug:name>.csv", views.export, name="export"),
    path("r/<str:slug>/", views.repository, name="repository"),
    path("r/<str:slug>/policy/", views.policy_edit, name="policy-edit"),
    path("r/<str:slug>/export/<slug:name>.csv", views.repository_export, name="repository-export"),
    path("r/<str:slug>/patches/<int:patch_id>/", views.patch, name="patch"),
    # A freeze id may be a node id (the ledger's map form): slashes and all.
    path("r/<str:slug>/freezes/<path:freeze_id>/", views.freeze, name="freeze"),
]
