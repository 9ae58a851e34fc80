"""API errors the contract names that DRF has no class for. Raise them from any endpoint;
config.api.exception_handler renders them in the error shape."""

from rest_framework import exceptions, status


class PayloadTooLarge(exceptions.APIException):
    status_code = status.HTTP_413_REQUEST_ENTITY_TOO_LARGE
    default_detail = "The request body is larger than this server accepts."
    default_code = "payload_too_large"


class Conflict(exceptions.APIException):
    status_code = status.HTTP_409_CONFLICT
    default_detail = "The request conflicts with what is already stored."
    default_code = "conflict"

    def __init__(self, detail: str | None = None, *, details: dict | None = None) -> None:
        super().__init__(detail)
        # The conflicting values, for a client to act on (the error's "details").
        self.details = details or {}


class ServiceUnavailable(exceptions.APIException):
    status_code = status.HTTP_503_SERVICE_UNAVAILABLE
    default_detail = "The service cannot answer right now; retry later."
    default_code = "unavailable"
