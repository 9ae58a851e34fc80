"""Parsers for the connection URLs the settings accept (DATABASE_URL, EMAIL_URL, CACHE_URL).

Kept tiny on purpose: only the schemes this service supports are understood, and anything else
is an ``ImproperlyConfigured`` naming the variable, so a typo fails at start-up, not at first use.
"""

from typing import Any
from urllib.parse import parse_qsl, unquote, urlsplit

from django.core.exceptions import ImproperlyConfigured

_POSTGRES_SCHEMES = frozenset({"postgres", "postgresql", "pgsql"})


def _split(url: str, variable: str):
    parts = urlsplit(url)
    try:
        parts.port  # noqa: B018 - urlsplit validates the port lazily
    except ValueError as error:
        raise ImproperlyConfigured(f"{variable}: invalid port in {_redact(url)}") from error
    return parts


def _redact(url: str) -> str:
    parts = urlsplit(url)
    if parts.password is None:
        return url
    netloc = parts.netloc.replace(f":{parts.password}@", ":***@", 1)
    return parts._replace(netloc=netloc).geturl()


def _flag(value: str, variable: str) -> bool:
    word = value.strip().lower()
    if word in {"true", "1", "yes"}:
        return True
    if word in {"false", "0", "no"}:
        return False
    raise ImproperlyConfigured(f"{variable}: {value!r} is not a boolean.")


# PostgreSQL connections bind parameters on the server, and prepare a statement the fifth time a
# connection runs it: the dashboards run the same few queries on every page, and not planning
# them anew saves 8-15 % of a page's CPU (bench/bench_pages.py). Behind a pooler that cannot
# keep prepared statements (PgBouncer in transaction mode before 1.21), set
# ?prepare_threshold=none in DATABASE_URL.
POSTGRES_DEFAULT_OPTIONS: dict[str, Any] = {"server_side_binding": True, "prepare_threshold": 5}


def _postgres_options(query: list[tuple[str, str]]) -> dict[str, Any]:
    """libpq parameters from the URL's query as they are; Django's own two typed."""
    options = dict(POSTGRES_DEFAULT_OPTIONS)
    for key, value in query:
        if key == "server_side_binding":
            options[key] = _flag(value, f"DATABASE_URL: {key}")
        elif key == "prepare_threshold":
            if value.strip().lower() == "none":
                options[key] = None
            elif value.strip().isdigit():
                options[key] = int(value)
            else:
                raise ImproperlyConfigured(
                    f"DATABASE_URL: prepare_threshold={value!r} is neither a count nor 'none'."
                )
        else:
            options[key] = value
    return options


def parse_database_url(url: str) -> dict[str, Any]:
    """Turn ``sqlite:///relative.db``, ``sqlite:////abs/path.db`` or
    ``postgres://user:pass@host:port/name?sslmode=require`` into a Django DATABASES entry."""
    parts = _split(url, "DATABASE_URL")
    if parts.scheme == "sqlite":
        if parts.netloc:
            raise ImproperlyConfigured(
                "DATABASE_URL: a SQLite URL has no host; use sqlite:///relative or sqlite:////abs."
            )
        # The first slash separates the (empty) host from the path, as in file URLs.
        path = unquote(parts.path[1:]) if parts.path.startswith("/") else unquote(parts.path)
        return {"ENGINE": "django.db.backends.sqlite3", "NAME": path or ":memory:"}
    if parts.scheme in _POSTGRES_SCHEMES:
        name = unquote(parts.path.lstrip("/"))
        if not name:
            raise ImproperlyConfigured(f"DATABASE_URL: no database name in {_redact(url)}")
        return {
            "ENGINE": "config.postgresql",
            "NAME": name,
            "USER": unquote(parts.username or ""),
            "PASSWORD": unquote(parts.password or ""),
            # A percent-encoded host such as %2Fvar%2Frun%2Fpostgresql is a Unix socket directory.
            "HOST": unquote(parts.hostname or ""),
            "PORT": str(parts.port or ""),
            "OPTIONS": _postgres_options(parse_qsl(parts.query)),
        }
    raise ImproperlyConfigured(
        f"DATABASE_URL: unsupported scheme {parts.scheme!r}; use sqlite:// or postgres://."
    )


def parse_email_url(url: str) -> dict[str, Any]:
    """Turn an EMAIL_URL into Django e-mail settings.

    ``smtp://user:pass@host:587?tls=true``, ``smtp+tls://…`` (STARTTLS), ``smtps://…``
    (implicit TLS), ``console://``, ``file:///path/to/dir``, ``locmem://``, ``dummy://``.
    """
    parts = _split(url, "EMAIL_URL")
    scheme = parts.scheme
    simple = {
        "console": "django.core.mail.backends.console.EmailBackend",
        "locmem": "django.core.mail.backends.locmem.EmailBackend",
        "dummy": "django.core.mail.backends.dummy.EmailBackend",
    }
    if scheme in simple:
        return {"EMAIL_BACKEND": simple[scheme]}
    if scheme == "file":
        if not parts.path:
            raise ImproperlyConfigured("EMAIL_URL: file:// needs a directory path.")
        return {
            "EMAIL_BACKEND": "django.core.mail.backends.filebased.EmailBackend",
            "EMAIL_FILE_PATH": unquote(parts.path),
        }
    if scheme in {"smtp", "smtp+tls", "smtps"}:
        if not parts.hostname:
            raise ImproperlyConfigured(f"EMAIL_URL: no host in {_redact(url)}")
        query = dict(parse_qsl(parts.query))
        use_ssl = scheme == "smtps" or _flag(query.get("ssl", "false"), "EMAIL_URL")
        use_tls = scheme == "smtp+tls" or _flag(query.get("tls", "false"), "EMAIL_URL")
        if use_ssl and use_tls:
            raise ImproperlyConfigured("EMAIL_URL: choose STARTTLS (tls) or implicit TLS (ssl).")
        return {
            "EMAIL_BACKEND": "django.core.mail.backends.smtp.EmailBackend",
            "EMAIL_HOST": unquote(parts.hostname),
            "EMAIL_PORT": parts.port or (465 if use_ssl else 587 if use_tls else 25),
            "EMAIL_HOST_USER": unquote(parts.username or ""),
            "EMAIL_HOST_PASSWORD": unquote(parts.password or ""),
            "EMAIL_USE_TLS": use_tls,
            "EMAIL_USE_SSL": use_ssl,
        }
    raise ImproperlyConfigured(f"EMAIL_URL: unsupported scheme {scheme!r}.")


def parse_cache_url(url: str) -> dict[str, Any]:
    """Turn ``locmem://``, ``dummy://`` or ``redis://host:port/db`` into a CACHES entry.

    The upload throttle counts in this cache, so several web processes need a shared one (Redis).
    """
    parts = _split(url, "CACHE_URL")
    if parts.scheme == "locmem":
        return {
            "BACKEND": "django.core.cache.backends.locmem.LocMemCache",
            "LOCATION": parts.netloc or "freezedebt",
        }
    if parts.scheme == "dummy":
        return {"BACKEND": "django.core.cache.backends.dummy.DummyCache"}
    if parts.scheme in {"redis", "rediss"}:
        return {
            "BACKEND": "django.core.cache.backends.redis.RedisCache",
            "LOCATION": url,
            # An unreachable cache must fail fast: requests go on without it (config.cache).
            "OPTIONS": {"socket_connect_timeout": 1, "socket_timeout": 1},
        }
    raise ImproperlyConfigured(f"CACHE_URL: unsupported scheme {parts.scheme!r}.")
