from django.apps import AppConfig


class EvidenceConfig(AppConfig):
    name = "evidence"
    verbose_name = "Evidence"

    def ready(self) -> None:
        # Registers the OpenAPI description of the upload-token authentication.
        from evidence import schema  # noqa: F401
