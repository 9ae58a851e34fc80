"""OpenAPI description of the upload-token authentication (drf-spectacular extension)."""

from drf_spectacular.extensions import OpenApiAuthenticationExtension


class UploadTokenScheme(OpenApiAuthenticationExtension):
    target_class = "evidence.authentication.UploadTokenAuthentication"
    name = "uploadToken"

    def get_security_definition(self, auto_schema):
        return {
            "type": "http",
            "scheme": "bearer",
            "description": "An upload token (fdk_…) of the repository, with the needed scope.",
        }
