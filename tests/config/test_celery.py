from config.celery import app


def test_celery_app_reads_django_settings():
    assert app.conf.task_serializer == "json"
    assert app.conf.accept_content == ["json"]
    assert app.conf.task_acks_late is True
    assert app.conf.task_reject_on_worker_lost is True
    assert app.conf.task_always_eager is True  # test settings, no live worker asked for


def test_beat_schedule_is_code_with_expiring_entries():
    schedule = app.conf.beat_schedule
    # The sweep (no accepted run lost), reminders at least daily (the milestones are days),
    # and the daily debt snapshot.
    assert {e["task"] for e in schedule.values()} == {
        "evidence.tasks.sweep_received_runs",
        "ledger.tasks.send_freeze_reminders",
        "dashboards.tasks.snapshot_debt",
    }


def test_reminders_run_every_hour_and_never_pile_up():
    reminders = app.conf.beat_schedule["send-freeze-reminders"]
    assert reminders["task"] == "ledger.tasks.send_freeze_reminders"
    every = reminders["schedule"]
    assert every.hour == set(range(24))
    assert every.minute == {0}
    assert reminders["options"]["expires"] < 3600


def test_every_scheduled_task_is_registered():
    # A beat entry naming a task no worker knows would fail every period, silently.
    app.loader.import_default_modules()
    for entry in app.conf.beat_schedule.values():
        assert entry["task"] in app.tasks, entry["task"]


def test_sweep_expires_before_its_next_run():
    schedule = app.conf.beat_schedule
    sweep = schedule["sweep-received-runs"]
    assert sweep["options"]["expires"] < sweep["schedule"]
