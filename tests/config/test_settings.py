"""Settings modules are evaluated at import, so each case runs in a fresh interpreter."""

import json
import os
import subprocess
import sys
from pathlib import Path

import pytest
from django.conf import settings

BASE_DIR = Path(__file__).resolve().parents[2]

# Variables the settings read; none may leak in from the environment running the suite.
_SETTINGS_VARIABLES = (
    "DJANGO_SETTINGS_MODULE",
    "SECRET_KEY",
    "ALLOWED_HOSTS",
    "DATABASE_URL",
    "CACHE_URL",
    "CELERY_BROKER_URL",
    "EMAIL_URL",
    "EMAIL_HOST",
    "DEBUG",
    "SECURE_SSL_REDIRECT",
    "SECURE_HSTS_SECONDS",
    "CELERY_TASK_ALWAYS_EAGER",
    "SITE_URL",
    "FREEZEDEBT_ADDR",
)

PRODUCTION_ENV = {
    "DJANGO_SETTINGS_MODULE": "config.settings.production",
    "SECRET_KEY": "x7!Qm2#vK9zP4rT8wY1nB6cF3hJ5dL0sA-uE_gR+oI*tZ&kM~Wq%Vx8@Nb",
    "ALLOWED_HOSTS": "freezedebt.example.com",
    "DATABASE_URL": "postgres://freezedebt:pw@db.internal:5432/freezedebt",
}


def _run(args: list[str], env: dict[str, str]) -> subprocess.CompletedProcess[str]:
    clean = {
        name: value
        for name, value in os.environ.items()
        if name not in _SETTINGS_VARIABLES and not name.endswith("_FILE")
    }
    return subprocess.run(
        [sys.executable, *args],
        cwd=BASE_DIR,
        env={**clean, **env},
        capture_output=True,
        text=True,
        timeout=120,
        check=False,
    )


def _settings_of(module: str, names: list[str], env: dict[str, str] | None = None) -> dict:
    code = (
        "import json, django; django.setup(); from django.conf import settings; "
        f"print(json.dumps({{n: getattr(settings, n) for n in {names!r}}}, default=str))"
    )
    result = _run(["-c", code], {"DJANGO_SETTINGS_MODULE": module, **(env or {})})
    assert result.returncode == 0, result.stderr
    return json.loads(result.stdout.strip().splitlines()[-1])


@pytest.mark.parametrize("missing", ["SECRET_KEY", "ALLOWED_HOSTS", "DATABASE_URL"])
def test_production_refuses_to_start_without_each_required_secret(missing):
    env = {name: value for name, value in PRODUCTION_ENV.items() if name != missing}
    result = _run(["manage.py", "check"], env)
    assert result.returncode != 0
    assert "ImproperlyConfigured" in result.stderr
    assert missing in result.stderr


def test_production_refuses_a_malformed_boolean():
    result = _run(["manage.py", "check"], {**PRODUCTION_ENV, "SECURE_SSL_REDIRECT": "sure"})
    assert result.returncode != 0
    assert "SECURE_SSL_REDIRECT='sure' is not a boolean" in result.stderr


def test_check_deploy_is_clean_with_production_settings():
    result = _run(["manage.py", "check", "--deploy", "--fail-level", "WARNING"], PRODUCTION_ENV)
    assert result.returncode == 0, result.stdout + result.stderr
    assert "System check identified no issues (0 silenced)." in result.stdout


def test_production_reads_the_secret_key_from_a_file(tmp_path):
    key_file = tmp_path / "secret_key"
    key_file.write_text(PRODUCTION_ENV["SECRET_KEY"] + "\n")
    env = {name: value for name, value in PRODUCTION_ENV.items() if name != "SECRET_KEY"}
    env["SECRET_KEY_FILE"] = str(key_file)
    values = _settings_of("config.settings.production", ["SECRET_KEY", "DEBUG"], env)
    assert values == {"SECRET_KEY": PRODUCTION_ENV["SECRET_KEY"], "DEBUG": False}


def test_production_uses_the_database_and_broker_from_the_environment():
    env = {**PRODUCTION_ENV, "CELERY_BROKER_URL": "redis://queue.internal:6379/3"}
    values = _settings_of(
        "config.settings.production",
        ["DATABASES", "CELERY_BROKER_URL", "CELERY_TASK_ALWAYS_EAGER", "SESSION_COOKIE_SECURE"],
        env,
    )
    database = values["DATABASES"]["default"]
    assert database["ENGINE"] == "config.postgresql"
    assert (database["HOST"], database["NAME"]) == ("db.internal", "freezedebt")
    assert values["CELERY_BROKER_URL"] == "redis://queue.internal:6379/3"
    assert values["CELERY_TASK_ALWAYS_EAGER"] is False
    assert values["SESSION_COOKIE_SECURE"] is True


def test_local_settings_are_the_embedded_default():
    values = _settings_of(
        "config.settings.local",
        ["DEBUG", "DATABASES", "CELERY_TASK_ALWAYS_EAGER", "EMAIL_BACKEND"],
    )
    assert values["DEBUG"] is True
    assert values["DATABASES"]["default"]["ENGINE"] == "django.db.backends.sqlite3"
    assert values["DATABASES"]["default"]["NAME"] == str(BASE_DIR / "db.sqlite3")
    assert values["CELERY_TASK_ALWAYS_EAGER"] is True
    assert values["EMAIL_BACKEND"] == "django.core.mail.backends.console.EmailBackend"


def test_manage_py_defaults_to_local_settings():
    result = _run(["manage.py", "diffsettings", "--output", "unified"], {})
    assert result.returncode == 0, result.stderr
    assert "+ DEBUG = True" in result.stdout


def test_test_settings_run_tasks_eagerly_without_a_live_worker():
    values = _settings_of(
        "config.settings.test",
        ["CELERY_TASK_ALWAYS_EAGER"],
        {"CELERY_BROKER_URL": "redis://127.0.0.1:6379/9"},
    )
    assert values["CELERY_TASK_ALWAYS_EAGER"] is True


def test_test_settings_honour_database_url():
    values = _settings_of(
        "config.settings.test",
        ["DATABASES"],
        {"DATABASE_URL": "postgres://postgres@127.0.0.1:5432/freezedebt"},
    )
    assert values["DATABASES"]["default"]["ENGINE"] == "config.postgresql"


def test_upload_limits_have_the_documented_defaults():
    assert settings.FREEZEDEBT_MAX_UPLOAD_BYTES == 64 * 1024 * 1024
    assert settings.FREEZEDEBT_MAX_DECOMPRESSED_BYTES == 512 * 1024 * 1024
    assert settings.FREEZEDEBT_MAX_RECORDS == 2_000_000
    assert settings.FREEZEDEBT_MAX_NODEID_LENGTH == 4096
    assert settings.FREEZEDEBT_UPLOADS_PER_MINUTE >= 1


def test_upload_limits_are_read_from_the_environment():
    values = _settings_of(
        "config.settings.test",
        ["FREEZEDEBT_MAX_UPLOAD_BYTES", "FREEZEDEBT_MAX_RECORDS", "FREEZEDEBT_UPLOADS_PER_MINUTE"],
        {
            "FREEZEDEBT_MAX_UPLOAD_BYTES": "1_048_576",
            "FREEZEDEBT_MAX_RECORDS": "500",
            "FREEZEDEBT_UPLOADS_PER_MINUTE": "7",
        },
    )
    assert values == {
        "FREEZEDEBT_MAX_UPLOAD_BYTES": 1_048_576,
        "FREEZEDEBT_MAX_RECORDS": 500,
        "FREEZEDEBT_UPLOADS_PER_MINUTE": 7,
    }


def test_celery_is_configured_for_idempotent_json_tasks():
    assert settings.CELERY_TASK_SERIALIZER == "json"
    assert settings.CELERY_ACCEPT_CONTENT == ["json"]
    assert settings.CELERY_TASK_ACKS_LATE is True
    for entry in settings.CELERY_BEAT_SCHEDULE.values():
        assert entry["options"]["expires"] > 0


def test_e_mailed_links_use_the_public_address_never_localhost():
    production = _settings_of("config.settings.production", ["SITE_URL"], PRODUCTION_ENV)
    assert production == {"SITE_URL": "https://freezedebt.example.com"}
    given = {**PRODUCTION_ENV, "SITE_URL": "https://debt.example.org/"}
    assert _settings_of("config.settings.production", ["SITE_URL"], given) == {
        "SITE_URL": "https://debt.example.org"
    }
    local = _settings_of("config.settings.local", ["SITE_URL"], {"FREEZEDEBT_ADDR": "0.0.0.0:9000"})
    assert local == {"SITE_URL": "http://0.0.0.0:9000"}


@pytest.mark.parametrize(
    ("env", "message"),
    [
        ({"ALLOWED_HOSTS": ".example.com"}, "SITE_URL must be set"),
        ({"SITE_URL": "debt.example.org"}, "SITE_URL must start with https://"),
    ],
)
def test_production_refuses_a_site_url_it_cannot_link_with(env, message):
    result = _run(["manage.py", "check"], {**PRODUCTION_ENV, **env})
    assert result.returncode != 0
    assert message in result.stderr
