"""Pagination of the API's read endpoints."""

from typing import Any

from rest_framework.exceptions import ValidationError
from rest_framework.pagination import PageNumberPagination
from rest_framework.request import Request


class Pages(PageNumberPagination):
    """``?page=N`` (and ``?page_size=`` up to 200); answers ``{count, next, previous, results}``.

    A page past the last is a 404 (DRF's); a ``page_size`` that is no whole number from 1 up
    is a 400, not quietly the default.
    """

    page_size = 50
    page_size_query_param = "page_size"
    max_page_size = 200

    def get_page_size(self, request: Request) -> int:
        raw = request.query_params.get(self.page_size_query_param)
        if raw is None:
            return self.page_size
        # Any whole number from 1 up (a larger one counts as the maximum); digits bounded so
        # reading one stays cheap.
        if not (raw.isascii() and raw.isdigit() and len(raw) <= 100 and int(raw) >= 1):
            raise ValidationError(
                {self.page_size_query_param: ["Expected a whole number from 1 up."]}
            )
        return min(int(raw), self.max_page_size)

    def get_schema_operation_parameters(self, view: Any) -> list[dict[str, Any]]:
        parameters = super().get_schema_operation_parameters(view)
        for parameter in parameters:
            if parameter["name"] == self.page_size_query_param:
                parameter["schema"]["minimum"] = 1
                parameter["description"] = (
                    f"Results per page (default {self.page_size}; more than "
                    f"{self.max_page_size} counts as {self.max_page_size})."
                )
            elif parameter["name"] == self.page_query_param:
                parameter["schema"]["minimum"] = 1
        return parameters
