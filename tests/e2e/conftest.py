"""The live service of the end-to-end tests: gunicorn, a Celery worker and beat on Redis,
PostgreSQL, and e-mail written to files (see ``live.py`` for when these tests run)."""

from __future__ import annotations

import os
import subprocess
import urllib.request

import pytest

from tests.e2e.live import (
    BIN,
    E2E_DATABASE,
    ROOT,
    celery_beat,
    celery_worker,
    free_port,
    run,
    wait_for,
)


@pytest.fixture
def live_service(tmp_path):
    import psycopg

    admin_url = os.environ["DATABASE_URL"]
    server_url = admin_url.rsplit("/", 1)[0]
    with psycopg.connect(f"{server_url}/postgres", autocommit=True) as conn:
        conn.execute(f"DROP DATABASE IF EXISTS {E2E_DATABASE} WITH (FORCE)")
        conn.execute(f"CREATE DATABASE {E2E_DATABASE}")
    database_url = f"{server_url}/{E2E_DATABASE}"
    port = free_port()
    url = f"http://127.0.0.1:{port}"
    mail_dir = tmp_path / "mail"
    mail_dir.mkdir()
    env = {
        **{k: v for k, v in os.environ.items() if not k.startswith("PYTEST_")},
        "DJANGO_SETTINGS_MODULE": "config.settings.local",
        "DATABASE_URL": database_url,
        "CELERY_TASK_ALWAYS_EAGER": "false",
        "DEBUG": "false",
        "SECRET_KEY": "e2e-secret-key-of-no-value-outside-this-test-run-0123456789",
        "ALLOWED_HOSTS": "127.0.0.1,localhost",
        # Every process writes its e-mail to files here, one file per message sent.
        "EMAIL_URL": f"file://{mail_dir}",
        # E-mailed links are absolute; they must lead back to this service.
        "SITE_URL": url,
        # The worker's git mirrors (the server's own analysis of patches).
        "FREEZEDEBT_MIRROR_DIR": str(tmp_path / "mirrors"),
    }
    manage = [BIN / "python", "manage.py"]
    run([*manage, "migrate", "--noinput"], env=env)
    evidence_token = run([*manage, "create_repository", "shop"], env=env).stdout.split()[-1]
    ledger_token = run(
        [*manage, "create_token", "shop", "--scope", "ledger"], env=env
    ).stdout.split()[-1]
    logs = {name: (tmp_path / f"{name}.log").open("w") for name in ("web", "worker", "beat")}
    commands = {
        "web": [
            BIN / "gunicorn",
            "config.wsgi:application",
            "--bind",
            f"127.0.0.1:{port}",
            "--workers",
            "2",
            "--access-logfile",
            "-",
        ],
        "worker": celery_worker(),
        "beat": celery_beat(tmp_path / "beat-schedule"),
    }
    processes = {
        key: subprocess.Popen(
            [str(a) for a in cmd], cwd=ROOT, env=env, stdout=logs[key], stderr=subprocess.STDOUT
        )
        for key, cmd in commands.items()
    }
    try:

        def healthy() -> bool:
            try:
                with urllib.request.urlopen(f"{url}/healthz", timeout=2) as answer:  # noqa: S310
                    return answer.status == 200
            except OSError:
                return False

        wait_for(healthy, timeout=60, what="the web server", interval=0.5)
        yield {
            "url": url,
            "env": env,
            "database_url": database_url,
            "mail_dir": mail_dir,
            "evidence_token": evidence_token,
            "ledger_token": ledger_token,
            "logs": tmp_path,
        }
    finally:
        for process in processes.values():
            process.terminate()
        for process in processes.values():
            try:
                process.wait(timeout=20)
            except subprocess.TimeoutExpired:
                process.kill()
        for handle in logs.values():
            handle.close()
