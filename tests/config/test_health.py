from django.db import OperationalError

from config import health


def test_healthz_answers_ok_when_the_database_answers(client, db):
    response = client.get("/healthz")
    assert response.status_code == 200
    assert response.json() == {"status": "ok", "database": "ok"}
    assert "no-cache" in response["Cache-Control"]


def test_healthz_answers_503_when_the_database_is_down(client, db, monkeypatch):
    class DownConnection:
        def cursor(self):
            raise OperationalError("connection refused")

    monkeypatch.setattr(health, "connection", DownConnection())
    response = client.get("/healthz")
    assert response.status_code == 503
    assert response.json()["error"]["code"] == "unavailable"
    assert response["Retry-After"] == "5"
    assert "connection refused" not in response.content.decode()


def test_healthz_needs_no_login(client, db):
    assert client.get("/healthz").status_code == 200


def test_healthz_answers_probes_that_call_by_address(client, db, settings):
    # A container's HEALTHCHECK or an orchestrator's probe names no public host.
    settings.ALLOWED_HOSTS = ["freezedebt.example.com"]
    assert client.get("/healthz", HTTP_HOST="10.0.0.5:8000").status_code == 200
    assert client.get("/healthz", HTTP_HOST="127.0.0.1:8000").status_code == 200
    # Everything else still refuses a host it does not serve.
    assert client.get("/accounts/login/", HTTP_HOST="10.0.0.5:8000").status_code == 400
    assert client.get("/accounts/login/", HTTP_HOST="freezedebt.example.com").status_code == 200


def test_healthz_is_not_redirected_to_https(client, db, settings):
    settings.SECURE_SSL_REDIRECT = True
    assert client.get("/healthz").status_code == 200
    assert client.get("/accounts/login/").status_code == 301
    assert client.post("/healthz").status_code == 405
