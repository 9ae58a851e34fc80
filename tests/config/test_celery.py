from config.celery import app


def test_celery_app_reads_django_settings():
    assert app.conf.task_serializer == "json"
    assert app.conf.accept_content == ["json"]
    assert app.conf.task_acks_late is True
    assert app.conf.task_reject_on_worker_lost is True
    assert app.conf.task_always_eager is True  # test settings, no live worker asked for


def test_beat_schedule_is_code_with_expiring_entries():
    schedule = app.conf.beat_schedule
    assert {entry["task"] for entry in schedule.values()} == {
        "evidence.tasks.sweep_received_runs",
        "ledger.tasks.send_freeze_reminders",
        "dashboards.tasks.snapshot_debt",
    }
    sweep = schedule["sweep-received-runs"]
    assert sweep["options"]["expires"] < sweep["schedule"]
