"""Endpoints CI calls with an upload token."""

from drf_spectacular.utils import extend_schema, extend_schema_serializer
from rest_framework import serializers
from rest_framework.request import Request
from rest_framework.response import Response
from rest_framework.views import APIView

from config.api import error_responses
from evidence.authentication import UploadTokenAuthentication
from evidence.models import UploadToken
from evidence.permissions import HasScope
from evidence.throttles import UploadTokenRateThrottle


class TokenApi(APIView):
    """Which repository and scope the presented token grants: lets CI check its secret."""

    authentication_classes = [UploadTokenAuthentication]
    permission_classes = [HasScope(*UploadToken.Scope.values)]
    throttle_classes = [UploadTokenRateThrottle]

    @extend_schema_serializer(component_name="UploadTokenInfo")
    class OutputSerializer(serializers.Serializer):
        repository = serializers.CharField(help_text="Slug of the token's repository.")
        scope = serializers.ChoiceField(choices=UploadToken.Scope.choices)
        prefix = serializers.CharField(help_text="The token's recognisable, non-secret start.")
        name = serializers.CharField()

    @extend_schema(
        operation_id="token_retrieve",
        summary="Describe the presented upload token",
        responses={200: OutputSerializer, **error_responses(401, 403, 429)},
    )
    def get(self, request: Request) -> Response:
        token: UploadToken = request.auth
        data = {
            "repository": token.repository.slug,
            "scope": token.scope,
            "prefix": token.display_prefix,
            "name": token.name,
        }
        return Response(self.OutputSerializer(data).data)
