"""Ledger endpoints: the protected branch's CI syncs the ledger file; people read freezes."""

from typing import Any

from django.conf import settings
from django.utils import timezone
from drf_spectacular.utils import OpenApiParameter, extend_schema, extend_schema_serializer
from rest_framework import serializers, status
from rest_framework.exceptions import NotFound, ValidationError
from rest_framework.parsers import BaseParser
from rest_framework.request import Request
from rest_framework.response import Response
from rest_framework.views import APIView

from config.api import error_responses
from config.exceptions import Conflict
from config.fields import ShaField, StrictQuerySerializer
from config.pagination import Pages
from config.parsers import read_bounded
from evidence import visibility
from evidence.api import NON_EMPTY_TEXT
from evidence.authentication import (
    READ_AUTHENTICATION,
    UPLOAD_AUTHENTICATION,
    token_repository,
)
from evidence.permissions import HasLedgerScope, IsSignedInUser
from evidence.reports import rules_policy
from evidence.throttles import UploadTokenRateThrottle
from freezedebt_ci.errors import InputError
from freezedebt_ci.hygiene import freeze_problems
from freezedebt_ci.ledger import Freeze as LedgerFreeze
from freezedebt_ci.policy import DEFAULT_LEDGER_PATH
from ledger.governance import GovernanceConflict, governance_sync
from ledger.models import GovernanceFile, Policy
from ledger.selectors import freezes_visible_to
from ledger.sync import LedgerConflict, ledger_sync


class LedgerFileParser(BaseParser):
    """The ledger file as raw bytes, refused with 413 above FREEZEDEBT_MAX_LEDGER_BYTES."""

    media_type = "application/toml"

    def parse(self, stream: Any, media_type: str | None = None, parser_context: Any = None) -> Any:
        return read_bounded(stream, parser_context, settings.FREEZEDEBT_MAX_LEDGER_BYTES)


class JSONLedgerFileParser(LedgerFileParser):
    media_type = "application/json"


class TextLedgerFileParser(LedgerFileParser):
    media_type = "text/plain"


class LedgerApi(APIView):
    """Sync the ledger file of a default-branch commit (``ledger`` scope only)."""

    authentication_classes = UPLOAD_AUTHENTICATION
    permission_classes = [HasLedgerScope]
    throttle_classes = [UploadTokenRateThrottle]
    parser_classes = [LedgerFileParser, JSONLedgerFileParser, TextLedgerFileParser]

    @extend_schema_serializer(component_name="LedgerSyncQuery")
    class QuerySerializer(StrictQuerySerializer):
        sha = ShaField(help_text="The commit the ledger file is from (7 to 64 hex digits).")

    @extend_schema_serializer(component_name="LedgerSync")
    class OutputSerializer(serializers.Serializer):
        version = serializers.IntegerField(help_text="The stored ledger version's id.")
        events = serializers.ListField(
            child=serializers.DictField(),
            help_text="opened / renewed / retired / edited, with silent and chain; "
            "empty when the version was stored already.",
        )
        invalid = serializers.ListField(
            child=serializers.DictField(),
            help_text="Each invalid freeze of the version under the repository's policy: "
            "{freeze, problems}. The version is stored all the same (it is the default "
            "branch's); reports block on these as invalid-freeze.",
        )
        expired = serializers.ListField(
            child=serializers.DictField(),
            help_text="Each freeze of the version whose expiry is past: {freeze, expires}.",
        )

    @extend_schema(
        operation_id="ledger_sync",
        summary="Sync the freeze ledger from the default branch",
        parameters=[QuerySerializer],
        request={
            "application/toml": NON_EMPTY_TEXT,
            # Both JSON shapes: a map keyed by node id, or a list of freeze objects.
            "application/json": {
                "oneOf": [
                    {"type": "object", "additionalProperties": {}},
                    {"type": "array", "items": {"type": "object", "additionalProperties": {}}},
                ]
            },
            "text/plain": NON_EMPTY_TEXT,
        },
        responses={
            200: OutputSerializer,
            201: OutputSerializer,
            **error_responses(400, 401, 403, 409, 413, 415, 429, 503),
        },
    )
    def put(self, request: Request) -> Response:
        query = self.QuerySerializer(data=request.query_params)
        query.is_valid(raise_exception=True)
        raw = self._text(request.data)
        repository = token_repository(request)
        path = (
            Policy.objects.filter(repository=repository)
            .values_list("ledger_path", flat=True)
            .first()
        ) or DEFAULT_LEDGER_PATH
        try:
            synced = ledger_sync(
                repository=repository, sha=query.validated_data["sha"], raw=raw, path=path
            )
        except InputError as exc:
            raise ValidationError({"ledger": [p.as_dict() for p in exc.problems]}) from None
        except LedgerConflict as exc:
            raise Conflict(str(exc)) from None
        freezes = [LedgerFreeze.from_dict(item) for item in synced.version.freezes]
        policy = rules_policy(repository)
        today = timezone.localdate()
        body = {
            "version": synced.version.pk,
            "events": [event.as_dict() for event in synced.events],
            "invalid": [
                {"freeze": freeze.id, "problems": problems}
                for freeze in freezes
                if (problems := freeze_problems(freeze, policy))
            ],
            "expired": [
                {"freeze": freeze.id, "expires": freeze.expires.isoformat()}
                for freeze in freezes
                if freeze.is_expired(today) and freeze.expires is not None
            ],
        }
        return Response(
            self.OutputSerializer(body).data,
            status=status.HTTP_201_CREATED if synced.created else status.HTTP_200_OK,
        )

    @staticmethod
    def _text(data: Any) -> str:
        body = data if isinstance(data, bytes) else b""
        try:
            text = body.decode("utf-8-sig")
        except UnicodeDecodeError as exc:
            raise ValidationError(
                {"ledger": [{"path": f"byte {exc.start}", "message": "is not valid UTF-8"}]}
            ) from None
        if not text.strip():
            # An empty body is far likelier a broken pipeline than a ledger with no freezes,
            # and it would retire every freeze at once.
            raise ValidationError(
                {"ledger": [{"path": "", "message": "the body is empty; send the ledger file"}]}
            )
        if "\x00" in text:
            raise ValidationError(
                {"ledger": [{"path": "", "message": "contains the NUL character"}]}
            )
        return text


GOVERNANCE_KINDS = {
    "fixture-lock": GovernanceFile.Kind.FIXTURE_LOCK,
    "oracle-map": GovernanceFile.Kind.ORACLE_MAP,
}


class GovernanceApi(APIView):
    """Sync the fixture lock or the oracle map of a default-branch commit (``ledger`` scope
    only, like the ledger: an ``evidence`` token can never change what grades a patch)."""

    authentication_classes = UPLOAD_AUTHENTICATION
    permission_classes = [HasLedgerScope]
    throttle_classes = [UploadTokenRateThrottle]
    parser_classes = [LedgerFileParser, JSONLedgerFileParser, TextLedgerFileParser]

    @extend_schema_serializer(component_name="GovernanceSyncQuery")
    class QuerySerializer(StrictQuerySerializer):
        sha = ShaField(help_text="The commit the file is from.")
        path = serializers.CharField(
            max_length=500,
            required=False,
            default="",
            help_text="Its path in the repository (default fixtures.lock / oracle_map.json).",
        )

    @extend_schema_serializer(component_name="GovernanceSync")
    class OutputSerializer(serializers.Serializer):
        version = serializers.IntegerField(help_text="The stored version's id.")
        kind = serializers.CharField()
        sha256 = serializers.CharField(help_text="Of the file as sent.")

    @extend_schema(
        operation_id="governance_sync",
        summary="Sync the fixture lock or oracle map from the default branch",
        parameters=[QuerySerializer],
        request={
            "text/plain": NON_EMPTY_TEXT,
            "application/json": {"type": "object", "additionalProperties": {}},
            "application/toml": NON_EMPTY_TEXT,
        },
        responses={
            200: OutputSerializer,
            201: OutputSerializer,
            **error_responses(400, 401, 403, 404, 409, 413, 415, 429, 503),
        },
    )
    def put(self, request: Request, kind: str) -> Response:
        if kind not in GOVERNANCE_KINDS:
            raise NotFound(f"No governance file {kind!r}: fixture-lock or oracle-map.")
        query = self.QuerySerializer(data=request.query_params)
        query.is_valid(raise_exception=True)
        data = request.data if isinstance(request.data, bytes) else b""
        if not data.strip():
            raise ValidationError({kind: [{"path": "", "message": "the body is empty"}]})
        try:
            synced = governance_sync(
                repository=token_repository(request),
                kind=GOVERNANCE_KINDS[kind],
                sha=query.validated_data["sha"],
                data=data,
                path=query.validated_data["path"],
            )
        except InputError as exc:
            raise ValidationError({kind: [p.as_dict() for p in exc.problems]}) from None
        except GovernanceConflict as exc:
            raise Conflict(str(exc)) from None
        version = synced.version
        body = {"version": version.pk, "kind": version.kind, "sha256": version.sha256}
        return Response(
            self.OutputSerializer(body).data,
            status=status.HTTP_201_CREATED if synced.created else status.HTTP_200_OK,
        )


class FreezesApi(APIView):
    """Freezes of the repositories the person (session or personal token) may see."""

    authentication_classes = READ_AUTHENTICATION
    permission_classes = [IsSignedInUser]
    pagination_class = Pages

    @extend_schema_serializer(component_name="Freeze")
    class OutputSerializer(serializers.Serializer):
        repository = serializers.CharField(source="repository.slug")
        id = serializers.CharField(source="freeze_id")
        test = serializers.CharField(source="nodeid")
        covers = serializers.ListField(child=serializers.CharField())
        owner = serializers.CharField()
        opened = serializers.DateField(allow_null=True)
        expires = serializers.DateField(allow_null=True)
        reason = serializers.CharField()
        compensating_check = serializers.CharField()
        freeze_class = serializers.CharField()
        signature = serializers.CharField()
        blocks_symbols = serializers.ListField(child=serializers.CharField())
        allowed_in_merge = serializers.BooleanField()
        version = serializers.IntegerField()
        renewals = serializers.IntegerField()
        current = serializers.BooleanField()

    @extend_schema(
        operation_id="freezes_list",
        summary="List the freezes of the repositories you may see",
        parameters=[
            OpenApiParameter("repository", str, description="Only this repository (its slug)."),
            OpenApiParameter(
                "include_retired", bool, description="Also list retired freezes (default false)."
            ),
        ],
        responses={200: OutputSerializer(many=True), **error_responses(400, 401, 403, 404)},
    )
    def get(self, request: Request) -> Response:
        slug = request.query_params.get("repository")
        repository = visibility.repository(request.user, slug, tokens=True) if slug else None
        retired = request.query_params.get("include_retired", "false").lower()
        if retired not in ("true", "false"):
            raise ValidationError({"include_retired": ["Expected true or false."]})
        include_retired = retired == "true"
        freezes = freezes_visible_to(
            request.user, repository=repository, include_retired=include_retired
        )
        paginator = self.pagination_class()
        page = paginator.paginate_queryset(freezes, request, view=self)
        return paginator.get_paginated_response(self.OutputSerializer(page, many=True).data)
