"""Patch endpoints (declared by CI, read by CI and people) and the repository list."""

from typing import Any

from django.core.validators import RegexValidator
from django.urls import reverse
from drf_spectacular.utils import (
    OpenApiParameter,
    extend_schema,
    extend_schema_field,
    extend_schema_serializer,
)
from rest_framework import serializers, status
from rest_framework.permissions import BasePermission
from rest_framework.request import Request
from rest_framework.response import Response
from rest_framework.views import APIView

from config.api import error_responses
from config.exceptions import PayloadTooLarge
from config.fields import ShaField, StrictBooleanField, StrictTypesSerializer
from config.jsontext import unstorable
from config.pagination import Pages
from evidence import patch_selectors as selectors
from evidence import visibility
from evidence.analysis_upload import (
    analysis_errors,
    analysis_size,
    max_analysis_bytes,
    openapi_schema,
)
from evidence.authentication import READ_AUTHENTICATION, token_repository
from evidence.models import Patch, Report
from evidence.patches import patch_declare
from evidence.permissions import EvidenceTokenOrSignedInUser, HasEvidenceScope, IsSignedInUser
from evidence.reports import report_placeholder
from evidence.throttles import UploadTokenRateThrottle
from freezedebt_ci.changes import changes_from_objects
from freezedebt_ci.errors import InputError


def report_url(patch_id: int) -> str:
    return reverse("api:patch-report", kwargs={"patch_id": patch_id})


def page_url(patch: Patch) -> str:
    """The patch's report page, for people: where CI output and summaries send them."""
    return reverse("dashboards:patch", args=[patch.repository.slug, patch.pk])


def report_state(patch: Patch) -> tuple[str, str]:
    """(status, verdict) of a patch's report; pending while none is stored."""
    report: Report | None = getattr(patch, "report", None)
    if report is None:
        return Report.Status.PENDING, Report.Verdict.PENDING
    return report.status, report.verdict


repository_query = OpenApiParameter(
    "repository", str, description="Only this repository (its slug).", required=False
)


# What the changes reader takes (freezedebt_ci.changes), as far as a pattern says it: a
# repo-relative path (no leading slash; ".." segments are refused too), and a name-status line
# (STATUS<TAB>PATH, R/C###<TAB>OLD<TAB>NEW, or a bare path).
# (A backslash reads as a slash.)
_PATH = "[^\t\n/\\\\][^\t\n]*"
_PATH_SCHEMA = {"type": "string", "minLength": 1, "pattern": "^[^/\\\\]"}
# A blank line is ignored, like a blank line of the text.
_LINE = f"([AMDT]\t{_PATH}|[RC][0-9]{{0,3}}\t{_PATH}\t{_PATH}|{_PATH}|)"
_NAME_STATUS_TEXT = f"^{_LINE}(\n{_LINE})*$"


@extend_schema_field(openapi_schema())
class AnalysisField(serializers.JSONField):
    """``analysis``: the analysis JSON of ``freezedebt-ci analyze``, as its shipped schema
    describes it (JSONField alone says "any")."""


@extend_schema_field(
    {
        "oneOf": [
            {
                "type": "array",
                "items": {
                    "oneOf": [
                        {
                            "type": "string",
                            # An item holding several lines is read as those lines.
                            "pattern": _NAME_STATUS_TEXT,
                            "example": "R087\tsrc/old.py\tsrc/new.py",
                        },
                        {
                            "type": "object",
                            "properties": {
                                "status": {
                                    "type": "string",
                                    "pattern": "^[AMDT][0-9]{0,3}$",
                                    "default": "M",
                                },
                                "path": _PATH_SCHEMA,
                                "old_path": {**_PATH_SCHEMA, "nullable": True},
                            },
                            "required": ["path"],
                        },
                        {
                            "type": "object",
                            "description": "a rename or copy: old_path is required",
                            "properties": {
                                "status": {
                                    "type": "string",
                                    "pattern": "^[RC][0-9]{0,3}$",
                                    "example": "R087",
                                },
                                "path": _PATH_SCHEMA,
                                "old_path": _PATH_SCHEMA,
                            },
                            "required": ["status", "path", "old_path"],
                        },
                    ]
                },
            },
            {
                "type": "string",
                "pattern": _NAME_STATUS_TEXT,
                "description": "the name-status text as one string",
            },
        ]
    }
)
class ChangedField(serializers.Field):
    """``changed``: a list of name-status lines and/or ``{status, path, old_path}`` objects, or
    the name-status text as one string."""

    default_error_messages = {"type": "Expected a list of name-status lines or objects."}

    def to_internal_value(self, data: Any) -> Any:
        items = data.split("\n") if isinstance(data, str) else data
        if not isinstance(items, list):
            self.fail("type")
        try:
            changes = changes_from_objects(items, source="changed")
        except InputError as exc:
            raise serializers.ValidationError([p.as_dict() for p in exc.problems]) from None
        problem = unstorable([change.as_dict() for change in changes])
        if problem is not None:
            raise serializers.ValidationError(f"A path {problem[1]}.")
        return changes

    def to_representation(self, value: Any) -> Any:
        return [change.as_dict() for change in value]


@extend_schema_serializer(component_name="Report")
class ReportSerializer(serializers.Serializer):
    """The report JSON of SPEC 5.8 (for the schema; the body is served as stored)."""

    format = serializers.CharField(help_text="freezedebt-report/1")
    status = serializers.ChoiceField(choices=Report.Status.choices)
    verdict = serializers.ChoiceField(choices=Report.Verdict.choices)
    today = serializers.DateField()
    figures = serializers.DictField(help_text="base/head bucket counts, deltas; null while pending")
    new_skips = serializers.ListField(child=serializers.CharField())
    retired_skips = serializers.ListField(child=serializers.CharField())
    lost = serializers.ListField(child=serializers.CharField())
    new_xfails = serializers.ListField(child=serializers.CharField())
    frozen_surface_hits = serializers.ListField(child=serializers.DictField())
    expired_freezes = serializers.ListField(child=serializers.CharField())
    per_file = serializers.ListField(child=serializers.DictField())
    problems = serializers.ListField(child=serializers.DictField())
    pending_reason = serializers.CharField(
        allow_null=True,
        help_text="While pending: which run is missing, and the labels that have runs.",
    )


class PatchesApi(APIView):
    """CI declares a patch (POST, ``evidence`` token); people list patches (GET, session or
    personal token)."""

    authentication_classes = READ_AUTHENTICATION
    throttle_classes = [UploadTokenRateThrottle]
    pagination_class = Pages

    def get_permissions(self) -> list[BasePermission]:
        if self.request.method == "POST":
            return [HasEvidenceScope()]
        return [IsSignedInUser()]

    @extend_schema_serializer(component_name="PatchDeclaration")
    class InputSerializer(StrictTypesSerializer):
        # Blank once trimmed is refused: the pattern tells the schema so. Spelled out
        # rather than \S, which means other characters in Python and in JSON Schema's regexes.
        ref = serializers.CharField(
            max_length=200,
            help_text="e.g. PR-123",
            validators=[
                RegexValidator(
                    "[^\\s\\x1c-\\x1f\\x85\\ufeff]",
                    message="Expected a reference such as PR-123.",
                )
            ],
        )
        base_sha = ShaField(help_text="7 to 64 hex digits.")
        head_sha = ShaField(help_text="7 to 64 hex digits.")
        title = serializers.CharField(max_length=500, required=False, allow_blank=True, default="")
        # An http(s) link to the change request, shown on pages; checked by a pattern the
        # schema states (Django's URLValidator also refuses host names the schema's "uri" takes).
        url = serializers.CharField(
            max_length=2000,
            required=False,
            allow_blank=True,
            default="",
            validators=[
                RegexValidator(
                    # Control characters and spaces spelled out: \s differs between engines.
                    r"^(https?://[^\x00-\x20\x7f/?#]+([/?#][^\x00-\x20\x7f]*)?)?\Z",
                    message="Expected an http or https URL.",
                )
            ],
        )
        author = serializers.CharField(max_length=200, required=False, allow_blank=True, default="")
        # A field named label: the stubs take it for Field.label.
        label = serializers.CharField(  # type: ignore[assignment]
            max_length=100,
            required=False,
            allow_blank=True,
            default="",
            help_text="Run label whose runs the report compares (latest attempt per sha).",
        )
        changed = ChangedField(
            required=False,
            default=list,
            help_text="git diff --name-status -M lines, or {status, path, old_path} objects.",
        )
        ledger_changed = StrictBooleanField(required=False, default=False)
        analysis = AnalysisField(
            required=False,
            allow_null=True,
            default=None,
            help_text="freezedebt-ci analyze JSON (freezedebt-analysis/1), validated against "
            "the JSON Schema the client package ships; each error names its JSON path.",
        )

        def validate_analysis(self, value: Any) -> Any:
            if value is None:
                return value
            if not isinstance(value, dict):
                raise serializers.ValidationError("Expected a JSON object.")
            problem = unstorable(value)
            if problem is not None:
                raise serializers.ValidationError(" ".join(problem) + ".")
            try:
                size = analysis_size(value)
            except RecursionError:
                raise serializers.ValidationError("The analysis is nested too deeply.") from None
            cap = max_analysis_bytes()
            if size > cap:
                raise PayloadTooLarge(
                    f"The analysis is {size} bytes as JSON; this server accepts up to {cap}."
                )
            errors = analysis_errors(value)
            if errors:
                raise serializers.ValidationError(errors)
            return value

    @extend_schema_serializer(component_name="DeclaredPatch")
    class DeclaredSerializer(serializers.Serializer):
        id = serializers.IntegerField()
        report_url = serializers.CharField()
        page_url = serializers.CharField(help_text="The report's page, for people.")
        status = serializers.ChoiceField(choices=Report.Status.choices)

    @extend_schema_serializer(component_name="PatchSummary")
    class ListSerializer(serializers.Serializer):
        id = serializers.IntegerField()
        repository = serializers.CharField(source="repository.slug")
        ref = serializers.CharField()
        base_sha = serializers.CharField()
        head_sha = serializers.CharField()
        # A field named label: the stubs take it for Field.label.
        label = serializers.CharField()  # type: ignore[assignment]
        title = serializers.CharField()
        url = serializers.CharField()
        author = serializers.CharField()
        created_at = serializers.DateTimeField()
        status = serializers.SerializerMethodField()
        verdict = serializers.SerializerMethodField()
        report_url = serializers.SerializerMethodField()

        def get_status(self, patch: Patch) -> str:
            return report_state(patch)[0]

        def get_verdict(self, patch: Patch) -> str:
            return report_state(patch)[1]

        def get_report_url(self, patch: Patch) -> str:
            return report_url(patch.pk)

    @extend_schema(
        operation_id="patches_declare",
        summary="Declare a patch (or declare it again)",
        request=InputSerializer,
        responses={
            200: DeclaredSerializer,
            201: DeclaredSerializer,
            **error_responses(400, 401, 403, 413, 415, 429, 503),
        },
    )
    def post(self, request: Request) -> Response:
        serializer = self.InputSerializer(data=request.data)
        serializer.is_valid(raise_exception=True)
        data = serializer.validated_data
        declared = patch_declare(
            repository=token_repository(request),
            ref=data["ref"],
            base_sha=data["base_sha"],
            head_sha=data["head_sha"],
            changes=data["changed"],
            title=data["title"],
            url=data["url"],
            author=data["author"],
            label=data["label"],
            ledger_changed=data["ledger_changed"],
            analysis=data["analysis"],
        )
        patch = declared.patch
        # Read after commit: with tasks run eagerly the report may already be ready.
        state = Report.objects.filter(patch=patch).values_list("status", flat=True).first()
        body = {
            "id": patch.pk,
            "report_url": report_url(patch.pk),
            "page_url": page_url(patch),
            "status": state or Report.Status.PENDING,
        }
        return Response(
            self.DeclaredSerializer(body).data,
            status=status.HTTP_201_CREATED if declared.created else status.HTTP_200_OK,
        )

    @extend_schema(
        operation_id="patches_list",
        summary="List patches of the repositories you may see",
        parameters=[repository_query],
        responses={200: ListSerializer(many=True), **error_responses(400, 401, 403, 404)},
    )
    def get(self, request: Request) -> Response:
        slug = request.query_params.get("repository")
        repository = visibility.repository(request.user, slug, tokens=True) if slug else None
        patches = selectors.patches_visible_to(request.user, repository=repository)
        paginator = self.pagination_class()
        page = paginator.paginate_queryset(patches, request, view=self)
        return paginator.get_paginated_response(self.ListSerializer(page, many=True).data)


class PatchReportApi(APIView):
    """A patch's report: for an ``evidence`` token of its repository, or a user who sees it."""

    authentication_classes = READ_AUTHENTICATION
    permission_classes = [EvidenceTokenOrSignedInUser]
    throttle_classes = [UploadTokenRateThrottle]

    @extend_schema(
        operation_id="patch_report_retrieve",
        summary="The report of a patch (pending until both runs are in)",
        responses={200: ReportSerializer, **error_responses(401, 403, 404, 429)},
    )
    def get(self, request: Request, patch_id: int) -> Response:
        patch = selectors.patch_get(request.user, patch_id=patch_id)
        body = Report.objects.filter(patch=patch).values_list("body", flat=True).first()
        answer = Response(body if body else report_placeholder(patch))
        # The body stays the rules' report (equal to freezedebt-ci delta's); the page for
        # people travels beside it.
        answer["Link"] = f'<{page_url(patch)}>; rel="alternate"; type="text/html"'
        return answer


class RepositoriesApi(APIView):
    """The repositories the person (session or personal token) may see."""

    authentication_classes = READ_AUTHENTICATION
    permission_classes = [IsSignedInUser]
    pagination_class = Pages

    @extend_schema_serializer(component_name="Repository")
    class OutputSerializer(serializers.Serializer):
        slug = serializers.CharField()
        name = serializers.CharField()
        default_branch = serializers.CharField()
        created_at = serializers.DateTimeField()
        patches_url = serializers.SerializerMethodField()
        freezes_url = serializers.SerializerMethodField()

        def get_patches_url(self, repository) -> str:
            return f"{reverse('api:patches')}?repository={repository.slug}"

        def get_freezes_url(self, repository) -> str:
            return f"{reverse('api:freezes')}?repository={repository.slug}"

    @extend_schema(
        operation_id="repositories_list",
        summary="List the repositories you may see",
        responses={200: OutputSerializer(many=True), **error_responses(400, 401, 403, 404)},
    )
    def get(self, request: Request) -> Response:
        repositories = visibility.repositories(request.user, tokens=True).order_by("slug")
        paginator = self.pagination_class()
        page = paginator.paginate_queryset(repositories, request, view=self)
        return paginator.get_paginated_response(self.OutputSerializer(page, many=True).data)
