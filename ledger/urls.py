from django.urls import path

from ledger import views

app_name = "ledger"

urlpatterns = [
    path("freezes/action/<str:token>/", views.freeze_action, name="freeze-action"),
    path("owners/", views.owner_list, name="owner-list"),
    path("owners/new/", views.owner_create, name="owner-create"),
    path("owners/<int:pk>/edit/", views.owner_update, name="owner-update"),
    path("owners/<int:pk>/delete/", views.owner_delete, name="owner-delete"),
]
