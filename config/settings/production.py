"""Production / scale-out: PostgreSQL, Redis, gunicorn and Celery workers, all from the
environment. Refuses to start without the secrets it cannot safely invent."""

from django.core.exceptions import ImproperlyConfigured

from config.dsn import parse_database_url
from config.env import env_bool, env_int, env_is_set, env_list, env_str

from .base import *  # noqa: F403

DEBUG = False
SECRET_KEY = env_str("SECRET_KEY")
ALLOWED_HOSTS = env_list("ALLOWED_HOSTS")
if not ALLOWED_HOSTS:
    raise ImproperlyConfigured("ALLOWED_HOSTS must name at least one host.")

# E-mailed links must reach the service from outside: its public address, never the local
# default. Without SITE_URL it is the first allowed host over HTTPS.
if env_is_set("SITE_URL"):
    SITE_URL = env_str("SITE_URL").rstrip("/")
elif ALLOWED_HOSTS[0].startswith(".") or "*" in ALLOWED_HOSTS[0]:
    raise ImproperlyConfigured(
        f"SITE_URL must be set: the first of ALLOWED_HOSTS ({ALLOWED_HOSTS[0]!r}) names no "
        "single host to put in e-mailed links."
    )
else:
    SITE_URL = f"https://{ALLOWED_HOSTS[0]}"
if not SITE_URL.startswith(("https://", "http://")):
    raise ImproperlyConfigured(f"SITE_URL must start with https:// (got {SITE_URL!r}).")

DATABASES = {
    "default": {
        **parse_database_url(env_str("DATABASE_URL")),
        "CONN_MAX_AGE": env_int("DATABASE_CONN_MAX_AGE", default=60, min_value=0),
        "CONN_HEALTH_CHECKS": True,
    }
}
# Set CACHE_URL=redis://… when running several web processes: the per-token upload throttle
# counts in this cache, and a per-process cache would multiply the allowance.

# Behind a TLS-terminating proxy, trust its X-Forwarded-Proto header (only then).
if env_bool("TRUST_X_FORWARDED_PROTO", default=False):
    SECURE_PROXY_SSL_HEADER = ("HTTP_X_FORWARDED_PROTO", "https")

SECURE_SSL_REDIRECT = env_bool("SECURE_SSL_REDIRECT", default=True)
# /healthz is answered before this redirect (config.health): probes call plain HTTP.
SECURE_HSTS_SECONDS = env_int("SECURE_HSTS_SECONDS", default=31_536_000, min_value=0)
SECURE_HSTS_INCLUDE_SUBDOMAINS = env_bool("SECURE_HSTS_INCLUDE_SUBDOMAINS", default=True)
SECURE_HSTS_PRELOAD = env_bool("SECURE_HSTS_PRELOAD", default=True)
SECURE_CONTENT_TYPE_NOSNIFF = True
SESSION_COOKIE_SECURE = True
CSRF_COOKIE_SECURE = True
SESSION_COOKIE_HTTPONLY = True
X_FRAME_OPTIONS = "DENY"

STORAGES = {
    "default": {"BACKEND": "django.core.files.storage.FileSystemStorage"},
    "staticfiles": {"BACKEND": "whitenoise.storage.CompressedManifestStaticFilesStorage"},
}
