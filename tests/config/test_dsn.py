import pytest
from django.core.exceptions import ImproperlyConfigured

from config.dsn import parse_cache_url, parse_database_url, parse_email_url


def test_sqlite_url_with_three_slashes_is_relative():
    assert parse_database_url("sqlite:///db.sqlite3") == {
        "ENGINE": "django.db.backends.sqlite3",
        "NAME": "db.sqlite3",
    }


def test_sqlite_url_with_four_slashes_is_absolute():
    assert parse_database_url("sqlite:////srv/data/db.sqlite3")["NAME"] == "/srv/data/db.sqlite3"


@pytest.mark.parametrize("url", ["sqlite://", "sqlite:///:memory:"])
def test_sqlite_url_without_path_is_in_memory(url):
    assert parse_database_url(url)["NAME"] == ":memory:"


def test_sqlite_url_with_a_host_is_refused():
    with pytest.raises(ImproperlyConfigured, match="no host"):
        parse_database_url("sqlite://localhost/db.sqlite3")


@pytest.mark.parametrize("scheme", ["postgres", "postgresql", "pgsql"])
def test_postgres_url_fills_every_connection_field(scheme):
    config = parse_database_url(f"{scheme}://fd%40user:p%3Ass@db.internal:6543/freeze%20debt")
    assert config == {
        "ENGINE": "config.postgresql",
        "NAME": "freeze debt",
        "USER": "fd@user",
        "PASSWORD": "p:ss",
        "HOST": "db.internal",
        "PORT": "6543",
        "OPTIONS": {"server_side_binding": True, "prepare_threshold": 5},
    }


def test_postgres_url_without_credentials_or_port_leaves_them_empty():
    config = parse_database_url("postgres://127.0.0.1/freezedebt")
    assert (config["USER"], config["PASSWORD"], config["PORT"]) == ("", "", "")


def test_postgres_query_parameters_become_options():
    config = parse_database_url("postgres://u@h/db?sslmode=require&connect_timeout=5")
    assert config["OPTIONS"] == {
        "sslmode": "require",
        "connect_timeout": "5",
        "server_side_binding": True,
        "prepare_threshold": 5,
    }


@pytest.mark.parametrize(
    ("query", "options"),
    [
        ("prepare_threshold=none", {"server_side_binding": True, "prepare_threshold": None}),
        ("prepare_threshold=0", {"server_side_binding": True, "prepare_threshold": 0}),
        ("server_side_binding=false", {"server_side_binding": False, "prepare_threshold": 5}),
    ],
)
def test_postgres_statement_preparation_can_be_turned_off(query, options):
    # Behind a pooler that loses prepared statements between transactions.
    assert parse_database_url(f"postgres://u@h/db?{query}")["OPTIONS"] == options


@pytest.mark.parametrize(
    ("query", "message"),
    [
        ("prepare_threshold=often", "neither a count nor 'none'"),
        ("server_side_binding=maybe", "not a boolean"),
    ],
)
def test_postgres_typed_options_refuse_other_values(query, message):
    with pytest.raises(ImproperlyConfigured, match=message):
        parse_database_url(f"postgres://u@h/db?{query}")


def test_postgres_percent_encoded_host_is_a_socket_directory():
    config = parse_database_url("postgres://u@%2Fvar%2Frun%2Fpostgresql/db")
    assert config["HOST"] == "/var/run/postgresql"


def test_postgres_url_without_database_name_is_refused():
    with pytest.raises(ImproperlyConfigured, match="no database name"):
        parse_database_url("postgres://user:pw@host:5432/")


def test_invalid_port_is_refused_without_echoing_the_password():
    with pytest.raises(ImproperlyConfigured, match="invalid port") as raised:
        parse_database_url("postgres://user:hunter2@host:notaport/db")
    assert "hunter2" not in str(raised.value)


@pytest.mark.parametrize("url", ["mysql://u@h/db", "db.sqlite3", ""])
def test_unknown_database_scheme_is_refused(url):
    with pytest.raises(ImproperlyConfigured, match="unsupported scheme"):
        parse_database_url(url)


def test_smtp_url_with_starttls():
    assert parse_email_url("smtp+tls://mailer:pa%24s@smtp.example.com:2525") == {
        "EMAIL_BACKEND": "django.core.mail.backends.smtp.EmailBackend",
        "EMAIL_HOST": "smtp.example.com",
        "EMAIL_PORT": 2525,
        "EMAIL_HOST_USER": "mailer",
        "EMAIL_HOST_PASSWORD": "pa$s",
        "EMAIL_USE_TLS": True,
        "EMAIL_USE_SSL": False,
    }


@pytest.mark.parametrize(
    ("url", "port", "tls", "ssl"),
    [
        ("smtp://smtp.example.com", 25, False, False),
        ("smtp://smtp.example.com?tls=true", 587, True, False),
        ("smtps://smtp.example.com", 465, False, True),
    ],
)
def test_smtp_default_ports_follow_the_security_mode(url, port, tls, ssl):
    config = parse_email_url(url)
    assert (config["EMAIL_PORT"], config["EMAIL_USE_TLS"], config["EMAIL_USE_SSL"]) == (
        port,
        tls,
        ssl,
    )


def test_smtp_with_both_tls_modes_is_refused():
    with pytest.raises(ImproperlyConfigured, match="STARTTLS"):
        parse_email_url("smtps://smtp.example.com?tls=true")


@pytest.mark.parametrize(
    ("url", "backend"),
    [
        ("console://", "console"),
        ("locmem://", "locmem"),
        ("dummy://", "dummy"),
        ("file:///var/mail/freezedebt", "filebased"),
    ],
)
def test_non_smtp_email_backends(url, backend):
    assert (
        parse_email_url(url)["EMAIL_BACKEND"] == f"django.core.mail.backends.{backend}.EmailBackend"
    )


def test_file_email_url_sets_the_directory():
    assert parse_email_url("file:///var/mail/fd")["EMAIL_FILE_PATH"] == "/var/mail/fd"


def test_unknown_email_scheme_is_refused():
    with pytest.raises(ImproperlyConfigured, match="EMAIL_URL"):
        parse_email_url("sendgrid://key@api")


def test_cache_urls():
    assert parse_cache_url("locmem://")["BACKEND"].endswith("LocMemCache")
    redis = parse_cache_url("redis://127.0.0.1:6379/2")
    assert redis == {
        "BACKEND": "django.core.cache.backends.redis.RedisCache",
        "LOCATION": "redis://127.0.0.1:6379/2",
        "OPTIONS": {"socket_connect_timeout": 1, "socket_timeout": 1},
    }
    with pytest.raises(ImproperlyConfigured, match="CACHE_URL"):
        parse_cache_url("memcached://127.0.0.1")
