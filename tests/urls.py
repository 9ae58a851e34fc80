"""The real URLconf plus a few endpoints that exist only to exercise API plumbing."""

from django.urls import path
from rest_framework import serializers
from rest_framework.permissions import AllowAny
from rest_framework.response import Response
from rest_framework.views import APIView

from config.exceptions import Conflict
from config.urls import handler404, handler500
from config.urls import urlpatterns as real_urlpatterns
from evidence.authentication import UploadTokenAuthentication
from evidence.permissions import HasLedgerScope
from evidence.throttles import UploadTokenRateThrottle


class EchoApi(APIView):
    permission_classes = [AllowAny]
    authentication_classes = []

    class InputSerializer(serializers.Serializer):
        ref = serializers.CharField(max_length=10)
        count = serializers.IntegerField(min_value=0)

    def post(self, request):
        serializer = self.InputSerializer(data=request.data)
        serializer.is_valid(raise_exception=True)
        return Response(serializer.validated_data)


class ConflictApi(APIView):
    permission_classes = [AllowAny]
    authentication_classes = []

    def post(self, request):
        raise Conflict("Run 7 already holds other content for this attempt.")


class BoomApi(APIView):
    permission_classes = [AllowAny]
    authentication_classes = []

    def get(self, request):
        raise RuntimeError("unexpected")


class LedgerOnlyApi(APIView):
    authentication_classes = [UploadTokenAuthentication]
    permission_classes = [HasLedgerScope]
    throttle_classes = [UploadTokenRateThrottle]

    def put(self, request):
        return Response({"repository": request.user.repository.slug})


urlpatterns = [
    path("api/v1/test/echo", EchoApi.as_view()),
    path("api/v1/test/conflict", ConflictApi.as_view()),
    path("api/v1/test/boom", BoomApi.as_view()),
    path("api/v1/test/ledger-only", LedgerOnlyApi.as_view()),
    *real_urlpatterns,
]

__all__ = ["handler404", "handler500", "urlpatterns"]
