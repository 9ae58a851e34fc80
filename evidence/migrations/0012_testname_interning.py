import django.db.models.deletion
from django.db import migrations, models


def digest_bytewise(apps, schema_editor):
    """On PostgreSQL, collate the node id digests "C": the unique index compares hex digits
    bytewise, not through the locale (rebuilds the index; a table of a few million names takes
    seconds)."""
    if schema_editor.connection.vendor != "postgresql":
        return
    schema_editor.execute(
        'ALTER TABLE evidence_testname ALTER COLUMN nodeid_sha256 TYPE varchar(64) COLLATE "C"'
    )


def digest_by_locale(apps, schema_editor):
    if schema_editor.connection.vendor != "postgresql":
        return
    schema_editor.execute(
        "ALTER TABLE evidence_testname ALTER COLUMN nodeid_sha256 TYPE varchar(64) "
        'COLLATE "default"'
    )


class Migration(migrations.Migration):
    dependencies = [
        ("evidence", "0011_repository_git_remote_server_analysis"),
    ]

    operations = [
        # The unique constraint (repository, digest) leads with the repository: it serves the
        # lookups by repository, and interning maintains one index fewer.
        migrations.AlterField(
            model_name="testname",
            name="repository",
            field=models.ForeignKey(
                db_index=False,
                on_delete=django.db.models.deletion.CASCADE,
                related_name="+",
                to="evidence.repository",
            ),
        ),
        migrations.RunPython(digest_bytewise, digest_by_locale, elidable=False),
    ]
