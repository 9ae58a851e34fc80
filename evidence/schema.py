"""OpenAPI description of the token authentications (drf-spectacular extensions)."""

from drf_spectacular.extensions import OpenApiAuthenticationExtension
from rest_framework.permissions import SAFE_METHODS

from evidence.permissions import IsSignedInUser


class UploadTokenScheme(OpenApiAuthenticationExtension):
    target_class = "evidence.authentication.UploadTokenAuthentication"
    name = "uploadToken"

    def get_security_requirement(self, auto_schema):
        # Views for people recognise an upload token only to refuse it with 403.
        if any(isinstance(p, IsSignedInUser) for p in auto_schema.view.get_permissions()):
            return None
        return super().get_security_requirement(auto_schema)

    def get_security_definition(self, auto_schema):
        return {
            "type": "http",
            "scheme": "bearer",
            "description": "An upload token (fdk_…) of the repository, with the needed scope.",
        }


class PersonalTokenScheme(OpenApiAuthenticationExtension):
    target_class = "evidence.authentication.PersonalTokenAuthentication"
    name = "personalToken"

    def get_security_requirement(self, auto_schema):
        # Upload views list the class after the upload token's only to refuse personal tokens
        # with 403, and a personal token never writes: neither accepts one, so say nothing.
        first = auto_schema.view.authentication_classes[0]
        if auto_schema.method not in SAFE_METHODS or first is not self.target_class:
            return None
        return super().get_security_requirement(auto_schema)

    def get_security_definition(self, auto_schema):
        return {
            "type": "http",
            "scheme": "bearer",
            "description": (
                "A personal token (fdp_…): reads as its user, limited to the repositories "
                "that user may see. Never accepted where an upload token is required."
            ),
        }
