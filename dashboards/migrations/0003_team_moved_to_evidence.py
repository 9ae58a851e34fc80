# Team now lives in the evidence app (evidence/0013_team), on the same table.

from django.db import migrations


class Migration(migrations.Migration):
    dependencies = [
        ("dashboards", "0002_debttotal"),
        ("evidence", "0013_team"),
    ]

    operations = [
        migrations.SeparateDatabaseAndState(
            state_operations=[migrations.DeleteModel(name="Team")],
            database_operations=[],
        ),
    ]
