# Team moved here from the dashboards app: repositories, teams and who sees what live in one
# app. The table keeps its name, so only Django's state moves; no row is copied.

import django.utils.timezone
from django.conf import settings
from django.db import migrations, models


def move_content_type(apps, schema_editor):
    """Permissions and admin log entries of teams follow the model to its new app."""
    content_type = apps.get_model("contenttypes", "ContentType")
    if not content_type.objects.filter(app_label="evidence", model="team").exists():
        content_type.objects.filter(app_label="dashboards", model="team").update(
            app_label="evidence"
        )


def restore_content_type(apps, schema_editor):
    content_type = apps.get_model("contenttypes", "ContentType")
    if not content_type.objects.filter(app_label="dashboards", model="team").exists():
        content_type.objects.filter(app_label="evidence", model="team").update(
            app_label="dashboards"
        )


class Migration(migrations.Migration):
    dependencies = [
        ("contenttypes", "0002_remove_content_type_name"),
        ("dashboards", "0002_debttotal"),
        ("evidence", "0012_testname_interning"),
        migrations.swappable_dependency(settings.AUTH_USER_MODEL),
    ]

    operations = [
        migrations.SeparateDatabaseAndState(
            state_operations=[
                migrations.CreateModel(
                    name="Team",
                    fields=[
                        (
                            "id",
                            models.BigAutoField(
                                auto_created=True,
                                primary_key=True,
                                serialize=False,
                                verbose_name="ID",
                            ),
                        ),
                        (
                            "created_at",
                            models.DateTimeField(default=django.utils.timezone.now, editable=False),
                        ),
                        ("updated_at", models.DateTimeField(auto_now=True)),
                        ("name", models.CharField(max_length=200)),
                        ("slug", models.SlugField(max_length=100)),
                        (
                            "members",
                            models.ManyToManyField(
                                blank=True,
                                related_name="freezedebt_teams",
                                to=settings.AUTH_USER_MODEL,
                            ),
                        ),
                        (
                            "repositories",
                            models.ManyToManyField(
                                blank=True, related_name="teams", to="evidence.repository"
                            ),
                        ),
                    ],
                    options={
                        "db_table": "dashboards_team",
                        "ordering": ["slug"],
                        "constraints": [
                            models.UniqueConstraint(fields=("slug",), name="team_unique_slug")
                        ],
                    },
                ),
            ],
            database_operations=[],
        ),
        migrations.RunPython(move_content_type, restore_content_type),
    ]
