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
    assert "connection refused" not in response.content.decode()


def test_healthz_needs_no_login(client, db):
    assert client.get("/healthz").status_code == 200
