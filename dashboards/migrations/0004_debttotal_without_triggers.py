# DebtTotal is written by the snapshot job (DebtTotal.objects.refresh) from now on: the triggers
# an earlier 0002 created on DebtSnapshot go, and every day is summed once.

from django.db import migrations
from django.db.models import Count, Sum

DROP = {
    "postgresql": ["DROP FUNCTION IF EXISTS dashboards_debttotal_apply() CASCADE"],
    "sqlite": [
        f"DROP TRIGGER IF EXISTS dashboards_debttotal_on_{event}"
        for event in ("insert", "update", "delete")
    ],
}


def forward(apps, schema_editor):
    for statement in DROP.get(schema_editor.connection.vendor, []):
        schema_editor.execute(statement)
    snapshot = apps.get_model("dashboards", "DebtSnapshot")
    total = apps.get_model("dashboards", "DebtTotal")
    figures = [field.name for field in total._meta.fields if field.name not in ("day", "snapshots")]
    total.objects.all().delete()
    sums = (
        snapshot.objects.order_by("day")
        .values("day")
        .annotate(snapshots=Count("pk"), **{name: Sum(name) for name in figures})
    )
    total.objects.bulk_create([total(**row) for row in sums], batch_size=1000)


class Migration(migrations.Migration):
    dependencies = [
        ("dashboards", "0003_team_moved_to_evidence"),
    ]

    operations = [
        # Backwards the totals stay as they are: 0002 no longer makes triggers.
        migrations.RunPython(forward, migrations.RunPython.noop),
    ]
