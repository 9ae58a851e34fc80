"""Endpoints CI calls with an upload token: the token check and the runs."""

from typing import cast

from django.conf import settings
from django.http import UnreadablePostError
from django.urls import reverse
from drf_spectacular.utils import (
    OpenApiResponse,
    extend_schema,
    extend_schema_field,
    extend_schema_serializer,
)
from rest_framework import exceptions, serializers, status
from rest_framework.request import Request
from rest_framework.response import Response
from rest_framework.views import APIView

from config.api import error_responses
from config.bodies import incomplete
from config.exceptions import Conflict, PayloadTooLarge
from config.fields import ShaField, StrictQuerySerializer
from evidence import selectors, uploads
from evidence.authentication import (
    READ_AUTHENTICATION,
    UPLOAD_AUTHENTICATION,
    token_repository,
)
from evidence.ingest import RunConflict, run_receive
from evidence.models import Run, UploadToken
from evidence.permissions import EvidenceTokenOrSignedInUser, HasAnyScope, HasEvidenceScope
from evidence.throttles import UploadTokenRateThrottle
from freezedebt_ci.evidence import meta_from_prefix, sha_conflict


class TokenApi(APIView):
    """Which repository and scope the presented token grants: lets CI check its secret."""

    authentication_classes = UPLOAD_AUTHENTICATION
    permission_classes = [HasAnyScope]
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
        token = cast(UploadToken, request.auth)  # what UploadTokenAuthentication sets
        data = {
            "repository": token.repository.slug,
            "scope": token.scope,
            "prefix": token.display_prefix,
            "name": token.name,
        }
        return Response(self.OutputSerializer(data).data)


# --- runs -----------------------------------------------------------------------------------

EVIDENCE_MEDIA_TYPES = ("application/json", "application/xml", "text/xml")
# A body sent as text: an empty one is refused.
NON_EMPTY_TEXT = {"type": "string", "minLength": 1}
_UTF8 = frozenset({"utf-8", "utf8"})


def run_url(run_id: int) -> str:
    return reverse("api:run-detail", kwargs={"run_id": run_id})


@extend_schema_serializer(component_name="RunState")
class RunStateSerializer(serializers.Serializer):
    id = serializers.IntegerField()
    status = serializers.ChoiceField(choices=Run.Status.choices)
    url = serializers.SerializerMethodField(help_text="Where to read the run's status.")
    reasons = serializers.ListField(
        child=serializers.DictField(child=serializers.CharField()),
        help_text="Why the run was rejected: at most 50 {path, message}; empty otherwise.",
    )
    records = serializers.SerializerMethodField(help_text="Node ids stored (0 until ready).")

    def get_url(self, run: Run) -> str:
        return run_url(run.pk)

    def get_records(self, run: Run) -> int:
        return run.passed + run.failed + run.skipped + run.xfail


class RunCountsSerializer(serializers.Serializer):
    passed = serializers.IntegerField()
    failed = serializers.IntegerField()
    skipped = serializers.IntegerField()
    xfail = serializers.IntegerField()


@extend_schema_serializer(component_name="Run")
class RunSerializer(RunStateSerializer):
    repository = serializers.CharField(source="repository.slug")
    sha = serializers.CharField()
    branch = serializers.CharField()
    # A field named label: the stubs take it for Field.label.
    label = serializers.CharField()  # type: ignore[assignment]
    attempt = serializers.IntegerField()
    counts = serializers.SerializerMethodField()
    exit_code = serializers.IntegerField(allow_null=True)
    meta = serializers.DictField()
    content_type = serializers.CharField()
    size = serializers.IntegerField(source="raw_size", help_text="Uncompressed bytes received.")
    created_at = serializers.DateTimeField()
    parsed_at = serializers.DateTimeField(allow_null=True)

    @extend_schema_field(RunCountsSerializer)
    def get_counts(self, run: Run) -> dict[str, int]:
        return RunCountsSerializer(run).data


def _media_type(request: Request) -> str:
    """The evidence media type of the request; 415 for any other type or a non-UTF-8 charset."""
    django_request = request._request
    media_type = django_request.content_type or ""
    if media_type not in EVIDENCE_MEDIA_TYPES:
        raise exceptions.UnsupportedMediaType(
            media_type,
            detail=(
                f"Content type {media_type or '(none)'!r} is not accepted: send evidence JSON "
                "as application/json, or JUnit XML as application/xml."
            ),
        )
    charset = (django_request.content_params or {}).get("charset")
    if charset is not None and charset.strip().lower() not in _UTF8:
        raise exceptions.UnsupportedMediaType(
            media_type, detail=f"Evidence must be UTF-8, not charset={charset!r}."
        )
    return media_type


def _coding(request: Request) -> str:
    header = request.META.get("HTTP_CONTENT_ENCODING")
    coding = uploads.content_coding(header)
    if coding is None:
        raise exceptions.UnsupportedMediaType(
            header or "",
            detail=f"Content-Encoding {header!r} is not accepted: send gzip, or no encoding.",
        )
    return coding


def _declared_length(request: Request) -> int | None:
    declared = request.META.get("CONTENT_LENGTH") or ""
    return int(declared) if declared.isdigit() else None


class RunsApi(APIView):
    """CI uploads the evidence of one run; it is parsed in the background."""

    authentication_classes = UPLOAD_AUTHENTICATION
    permission_classes = [HasEvidenceScope]
    throttle_classes = [UploadTokenRateThrottle]

    class InputSerializer(StrictQuerySerializer):
        sha = ShaField(help_text="The commit the tests ran at (7 to 64 hex digits).")
        branch = serializers.CharField(max_length=255, required=False, allow_blank=True, default="")
        # A field named label: the stubs take it for Field.label.
        label = serializers.CharField(  # type: ignore[assignment]
            max_length=100,
            required=False,
            allow_blank=True,
            default="",
            help_text="Tells parallel jobs of one commit apart, e.g. py311.",
        )
        attempt = serializers.IntegerField(
            min_value=1,
            max_value=2**31 - 1,
            required=False,
            default=1,
            help_text="Re-runs of one job count up; reports use the latest attempt.",
        )

    @extend_schema(
        operation_id="runs_upload",
        summary="Upload the evidence of a run",
        description=(
            "The body is evidence JSON (application/json) or JUnit XML (application/xml), "
            "optionally with Content-Encoding: gzip. It is stored as received and parsed in the "
            "background: 202 with status received, or already ready or rejected when tasks run "
            "in-process. The same upload again answers 200 with the stored run; other content "
            "for the same sha, label and attempt is a 409, and so is evidence whose meta.sha "
            "names another commit than sha (details: sha, meta_sha)."
        ),
        # Content-Encoding is how the body travels, not a parameter: a schema parameter would
        # let a client send "gzip" over a body that is not.
        parameters=[InputSerializer],
        request={
            # Any body is stored, then parsed: what is no evidence ends rejected with reasons.
            "application/json": {"description": "evidence JSON: {exit, records, meta}"},
            # Bytes: any text is a body the server reads (and may reject in parsing).
            "application/xml": {"type": "string", "format": "binary", "minLength": 1},
            "text/xml": {"type": "string", "format": "binary", "minLength": 1},
        },
        responses={
            200: OpenApiResponse(RunStateSerializer, description="This upload was already stored."),
            202: OpenApiResponse(RunStateSerializer, description="Stored; parsing follows."),
            **error_responses(400, 401, 403, 409, 413, 415, 429, 503),
        },
    )
    def post(self, request: Request) -> Response:
        query = self.InputSerializer(data=request.query_params)
        query.is_valid(raise_exception=True)
        media_type = _media_type(request)
        coding = _coding(request)
        max_bytes = settings.FREEZEDEBT_MAX_UPLOAD_BYTES
        declared = _declared_length(request)
        if declared is not None and declared > max_bytes:
            raise PayloadTooLarge(f"The body is larger than {max_bytes} bytes (the upload limit).")
        stream = uploads.CountingStream(request._request)
        try:
            # The Django request itself is the body stream: request.body would load it whole.
            body = uploads.read_body(
                stream,
                coding=coding,
                max_bytes=max_bytes,
                max_decompressed=settings.FREEZEDEBT_MAX_DECOMPRESSED_BYTES,
            )
        except uploads.UploadError as error:
            if error.kind == uploads.UploadError.TOO_LARGE:
                raise PayloadTooLarge(error.message) from None
            raise exceptions.ParseError(error.message) from None
        except UnreadablePostError:
            raise exceptions.ParseError("The request body could not be read in full.") from None
        short = incomplete(request._request, stream.count)
        if short:
            raise exceptions.ParseError(short)
        if body.size == 0:
            raise exceptions.ParseError(
                "The request body is empty: send the evidence JSON or JUnit XML."
            )

        data = query.validated_data
        meta = meta_from_prefix(body.head)
        own_sha = sha_conflict(meta, data["sha"]) if meta is not None else None
        if own_sha is not None:
            # A swapped base/head upload would file the evidence under the wrong commit.
            raise Conflict(
                f"The evidence was made at commit {own_sha} (its meta.sha), not at the sha "
                f"{data['sha']} it is uploaded for; upload it with --sha {own_sha}.",
                details={"sha": data["sha"], "meta_sha": own_sha},
            )
        try:
            run, created = run_receive(
                repository=token_repository(request),
                sha=data["sha"],
                branch=data["branch"],
                label=data["label"],
                attempt=data["attempt"],
                content_type=media_type,
                body=body,
            )
        except RunConflict as conflict:
            raise Conflict(
                f"Run {conflict.run.pk} already holds other content for this sha, label and "
                "attempt; upload the new evidence as a new attempt."
            ) from None
        # Read again: with tasks run in-process the run was parsed when the upload committed.
        run = Run.objects.defer("raw").get(pk=run.pk)
        answer = Response(
            RunStateSerializer(run).data,
            status=status.HTTP_202_ACCEPTED if created else status.HTTP_200_OK,
        )
        answer["Location"] = run_url(run.pk)
        return answer


class RunApi(APIView):
    """One run: for an ``evidence`` token of its repository, or a person who sees it."""

    authentication_classes = READ_AUTHENTICATION
    permission_classes = [EvidenceTokenOrSignedInUser]

    @extend_schema(
        operation_id="run_retrieve",
        summary="A run: its status, reasons when rejected, and counts when ready",
        responses={200: RunSerializer, **error_responses(401, 403, 404)},
    )
    def get(self, request: Request, run_id: int) -> Response:
        run = selectors.run_get(request.user, run_id=run_id)
        return Response(RunSerializer(run).data)
