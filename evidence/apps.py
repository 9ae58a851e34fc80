from django.apps import AppConfig


class EvidenceConfig(AppConfig):
    name = "evidence"
    verbose_name = "Evidence"

    def ready(self) -> None:
        # Both register something when imported: schema the OpenAPI description of the token
        # authentications, signals a handler that makes deleting a run wait for its ingest.
        from evidence import schema, signals  # noqa: F401
