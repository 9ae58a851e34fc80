from django.contrib import admin
from django.contrib.auth import views as auth_views
from django.urls import include, path

from config.logins import ThrottledAdminAuthenticationForm, ThrottledAuthenticationForm

# Both sign-in forms count failures and hold back guessing (config.logins).
admin.site.login_form = ThrottledAdminAuthenticationForm

urlpatterns = [
    path("", include("dashboards.urls")),
    path("", include("ledger.urls")),
    path(
        "accounts/login/",
        auth_views.LoginView.as_view(authentication_form=ThrottledAuthenticationForm),
        name="login",
    ),
    path("accounts/logout/", auth_views.LogoutView.as_view(), name="logout"),
    path("admin/", admin.site.urls),
    path("api/v1/", include("config.api_urls")),
]

handler404 = "config.api.page_not_found"
handler500 = "config.api.server_error"
