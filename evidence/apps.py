from django.apps import AppConfig


class EvidenceConfig(AppConfig):
    name = "evidence"
    verbose_name = "Evidence"

    def ready(self) -> None:
        # schema registers the OpenAPI description of the token authentications;
        # reports registers the report task, which lives beside its service rather than in the
        # tasks module Celery discovers; signals makes deleting a run wait for its ingest.
        from evidence import reports, schema, signals  # noqa: F401
