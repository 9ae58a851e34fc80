"""Response headers every answer gets: a strict Content-Security-Policy, and no caching of
what a signed-in person (or a token) was shown.

The pages load only the project's own scripts and styles (plotly.js included, vendored), with
no inline script or style attribute, so the policy needs no 'unsafe-inline'. Data reaches the
charts through json_script blocks, which are not executed.
"""

from django.contrib.auth import SESSION_KEY
from django.db import DatabaseError
from django.http import HttpRequest, HttpResponse

CONTENT_SECURITY_POLICY = "; ".join(
    [
        "default-src 'self'",
        "script-src 'self'",
        "style-src 'self'",
        # Plotly's mode bar draws its icons, and exports charts, as data: images.
        "img-src 'self' data:",
        "font-src 'self'",
        "connect-src 'self'",
        "object-src 'none'",
        "base-uri 'none'",
        "form-action 'self'",
        "frame-ancestors 'none'",
    ]
)
PRIVATE = "private, no-store"


class SecurityHeadersMiddleware:
    """Adds the Content-Security-Policy, and ``Cache-Control: private, no-store`` to answers
    for a signed-in session or a bearer token (unless the view said otherwise)."""

    def __init__(self, get_response):
        self.get_response = get_response

    def __call__(self, request: HttpRequest) -> HttpResponse:
        response = self.get_response(request)
        response.headers.setdefault("Content-Security-Policy", CONTENT_SECURITY_POLICY)
        if "Cache-Control" not in response.headers and _personal(request):
            response["Cache-Control"] = PRIVATE
        return response


def _personal(request: HttpRequest) -> bool:
    if "HTTP_AUTHORIZATION" in request.META:
        return True
    # Decided from the session only when it was read anyway: no query of its own.
    session = getattr(request, "session", None)
    if session is None or not session.accessed:
        return False
    try:
        return SESSION_KEY in session
    except DatabaseError:
        return True  # unknown (the database is down): not cached, to be safe
