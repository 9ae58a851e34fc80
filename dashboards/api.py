"""Dashboard read endpoints under /api/v1/: the daily debt snapshots behind the charts."""

from __future__ import annotations

import datetime

from django.utils import timezone
from drf_spectacular.utils import OpenApiParameter, extend_schema, extend_schema_serializer
from rest_framework import serializers
from rest_framework.request import Request
from rest_framework.response import Response
from rest_framework.views import APIView

from config.api import error_responses
from config.fields import StrictQuerySerializer
from config.pagination import Pages
from dashboards import selectors
from dashboards.views.common import DEFAULT_RANGE_DAYS
from evidence import visibility
from evidence.authentication import READ_AUTHENTICATION
from evidence.permissions import IsSignedInUser


class DebtApi(APIView):
    """The daily debt snapshots of the repositories the person (session or personal token) may
    see, by day then repository: the numbers the dashboard charts draw."""

    authentication_classes = READ_AUTHENTICATION
    permission_classes = [IsSignedInUser]
    pagination_class = Pages

    class QuerySerializer(StrictQuerySerializer):
        repository = serializers.CharField(required=False, allow_blank=True)
        start = serializers.DateField(required=False, input_formats=["iso-8601"])
        end = serializers.DateField(required=False, input_formats=["iso-8601"])

        def validate(self, data: dict) -> dict:
            start, end = data.get("start"), data.get("end")
            if start is not None and end is not None and start > end:
                raise serializers.ValidationError({"start": "The start is after the end."})
            return data

    @extend_schema_serializer(component_name="DebtSnapshot")
    class OutputSerializer(serializers.Serializer):
        date = serializers.DateField()
        repository = serializers.CharField(help_text="The repository's slug.")
        active = serializers.IntegerField(help_text="Freezes in force, the expiring included.")
        expiring = serializers.IntegerField(help_text="Freezes expiring within 7 days.")
        expired = serializers.IntegerField()
        unacknowledged = serializers.IntegerField()
        freeze_days = serializers.IntegerField(help_text="Freeze-days accrued.")
        skipped = serializers.IntegerField(help_text="In the latest default-branch run.")
        xfail = serializers.IntegerField(help_text="In the latest default-branch run.")
        patches = serializers.IntegerField(help_text="Reports computed that day.")
        blocked = serializers.IntegerField()
        passed = serializers.IntegerField()
        new_skips = serializers.IntegerField()
        median_net_delta = serializers.FloatField(allow_null=True)
        earned = serializers.IntegerField()
        borrowed = serializers.IntegerField()

    @extend_schema(
        operation_id="debt_list",
        summary="Daily debt snapshots of the repositories you may see",
        parameters=[
            OpenApiParameter("repository", str, description="Only this repository (its slug)."),
            OpenApiParameter(
                "start",
                datetime.date,
                description=f"First day (YYYY-MM-DD); by default {DEFAULT_RANGE_DAYS} days "
                "up to the end.",
            ),
            OpenApiParameter("end", datetime.date, description="Last day (default today)."),
        ],
        responses={200: OutputSerializer(many=True), **error_responses(400, 401, 403, 404)},
    )
    def get(self, request: Request) -> Response:
        query = self.QuerySerializer(data=request.query_params)
        query.is_valid(raise_exception=True)
        params = query.validated_data
        end = params.get("end") or timezone.localdate()
        start = params.get("start") or end - datetime.timedelta(days=DEFAULT_RANGE_DAYS - 1)
        slug = params.get("repository")
        if slug:
            visibility.repository(request.user, slug)  # Http404 when not visible
        rows = selectors.debt_snapshots(
            user=request.user, start=start, end=end, repositories=[slug] if slug else None
        )
        paginator = self.pagination_class()
        page = paginator.paginate_queryset(rows, request, view=self)
        # The rows are already what OutputSerializer documents, key for key (a test holds them
        # to it): serializing a page of 200 field by field took a quarter of the request.
        data = [selectors.series_row(row) for row in page or []]
        return paginator.get_paginated_response(data)
