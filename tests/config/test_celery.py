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


def test_the_sweep_recovers_a_lost_run_within_two_periods_and_its_task_lives_long_enough():
    """A killed worker's run is swept again after FREEZEDEBT_SWEEP_SECONDS (received that long)
    at the next sweep: within two periods, not at Redis's visibility timeout. The sweep's task
    lives most of a period, so a busy worker still runs it (with a 5 s period, "period minus
    5 s" left it 0 s), and the visibility timeout stays far above both."""
    from django.conf import settings

    from evidence.ingest import REQUEUE_AFTER

    period = settings.FREEZEDEBT_SWEEP_SECONDS
    sweep = app.conf.beat_schedule["sweep-received-runs"]
    assert sweep["schedule"] == period
    assert REQUEUE_AFTER.total_seconds() == period
    assert period / 2 <= sweep["options"]["expires"] < period
    assert app.conf.broker_transport_options["visibility_timeout"] >= 10 * period
