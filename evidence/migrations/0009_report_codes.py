from django.db import migrations, models

BATCH = 500


def codes_of(body):
    # As evidence.models.report_codes was when this migration was written.
    problems = body.get("problems") if isinstance(body, dict) else None
    if not isinstance(problems, list):
        return []
    return sorted({p.get("code", "") for p in problems if isinstance(p, dict)})


def fill_codes(apps, schema_editor):
    """The codes of every stored report, from its body, in batches."""
    Report = apps.get_model("evidence", "Report")
    batch = []
    for report in Report.objects.only("pk", "body").iterator(chunk_size=BATCH):
        report.codes = codes_of(report.body)
        if report.codes:
            batch.append(report)
        if len(batch) >= BATCH:
            Report.objects.bulk_update(batch, ["codes"])
            batch = []
    if batch:
        Report.objects.bulk_update(batch, ["codes"])


class Migration(migrations.Migration):
    dependencies = [
        ("evidence", "0008_run_ready_recent_idx"),
    ]

    operations = [
        migrations.AddField(
            model_name="report",
            name="codes",
            field=models.JSONField(blank=True, default=list),
        ),
        migrations.RunPython(fill_codes, migrations.RunPython.noop, elidable=True),
    ]
