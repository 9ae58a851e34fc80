"""Pagination of the API's read endpoints."""

from rest_framework.pagination import PageNumberPagination


class Pages(PageNumberPagination):
    """``?page=N`` (and ``?page_size=`` up to 200); answers ``{count, next, previous, results}``."""

    page_size = 50
    page_size_query_param = "page_size"
    max_page_size = 200
