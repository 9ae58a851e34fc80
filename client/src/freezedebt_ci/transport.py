"""HTTP to a Freeze Debt server, with the standard library only.

One :class:`Client` per command: it adds the bearer token, sends and reads JSON, retries
transient failures (connection errors, timeouts, 429, 502, 503, 504) with exponential backoff
and jitter, honouring ``Retry-After``, and turns every failure into one :class:`TransportError`
carrying the HTTP status, the server's error code and its message. Redirects are never
followed, so the token is only ever sent to the URL the user gave.
"""

from __future__ import annotations

import email.utils
import http.client
import json
import random
import ssl
import sys
import time
import urllib.error
import urllib.parse
import urllib.request
from collections.abc import Callable, Mapping
from dataclasses import dataclass, field
from typing import Any

from . import __version__

#: Statuses worth another try: throttled, and the gateway / unavailable family.
RETRY_STATUSES = frozenset({429, 502, 503, 504})
#: Answers larger than this are refused rather than held in memory.
MAX_ANSWER_BYTES = 64 << 20
USER_AGENT = f"freezedebt-ci/{__version__} (Python {sys.version_info[0]}.{sys.version_info[1]})"
_LOOPBACK = {"localhost", "127.0.0.1", "::1"}


class TransportError(Exception):
    """A request that failed for good.

    ``status`` is the HTTP status (None when no answer came), ``code`` the server's error code
    (or a client-side one such as ``unreachable``), ``message`` a sentence for people and
    ``details`` whatever the server sent along (field errors, rejection reasons).
    """

    def __init__(self, status: int | None, code: str, message: str, details: Any = None) -> None:
        self.status = status
        self.code = code
        self.message = message
        self.details = details
        super().__init__(str(self))

    def __str__(self) -> str:
        if self.status is None:
            return self.message
        return f"server answered {self.status} ({self.code}): {self.message}"

    def detail_lines(self) -> list[str]:
        """The details as readable lines: ``where: message`` for field errors and reasons."""
        return detail_lines(self.details)


def detail_lines(details: Any, where: str = "") -> list[str]:
    """Error details or a run's reasons as readable lines: ``where: message`` each."""
    if details in (None, "", {}, []):
        return []
    if isinstance(details, Mapping):
        if isinstance(details.get("message"), str):
            place = details.get("path") or where
            return [f"{place}: {details['message']}" if place else details["message"]]
        lines: list[str] = []
        for key, value in details.items():
            lines += detail_lines(value, f"{where}.{key}" if where else str(key))
        return lines
    if isinstance(details, list):
        lines = []
        for item in details:
            lines += detail_lines(item, where)
        return lines
    return [f"{where}: {details}" if where else str(details)]


@dataclass(frozen=True, slots=True)
class Answer:
    """A successful answer: status and the decoded JSON body (None when empty)."""

    status: int
    data: Any
    headers: Mapping[str, str] = field(default_factory=dict)


class _NoRedirect(urllib.request.HTTPRedirectHandler):
    """Refuse redirects: following one would hand the bearer token to another address."""

    def redirect_request(self, *args: Any, **kwargs: Any) -> None:
        return None


def check_base_url(url: str) -> str:
    """The server URL without a trailing slash; ValueError when it is not http(s)://host."""
    parts = urllib.parse.urlsplit(url.strip())
    if parts.scheme not in ("http", "https") or not parts.hostname:
        raise ValueError(f"expected the server address as http(s)://host[:port], got {url!r}")
    if parts.query or parts.fragment or parts.username or parts.password:
        raise ValueError("the server address takes no query, fragment or user name")
    return urllib.parse.urlunsplit((parts.scheme, parts.netloc, parts.path.rstrip("/"), "", ""))


def is_plain_http_to_remote(url: str) -> bool:
    """True when the token would cross a network unencrypted."""
    parts = urllib.parse.urlsplit(url)
    return parts.scheme == "http" and (parts.hostname or "") not in _LOOPBACK


def check_token(token: str) -> str:
    """The token, stripped; ValueError (which never quotes it) when it cannot go in a header."""
    token = token.strip()
    if not token:
        raise ValueError("the token is empty")
    if any(not (0x21 <= ord(char) <= 0x7E) for char in token):
        raise ValueError("the token contains spaces, control or non-ASCII characters")
    return token


def retry_after_seconds(value: str | None, *, now: float | None = None) -> float | None:
    """``Retry-After`` as seconds: a number of seconds or an HTTP date; None when absent/bad."""
    if not value:
        return None
    value = value.strip()
    if value.isdigit():
        return float(value)
    try:
        when = email.utils.parsedate_to_datetime(value)
    except (TypeError, ValueError):
        return None
    if when.tzinfo is None:
        return None
    return max(0.0, when.timestamp() - (time.time() if now is None else now))


class Client:
    """Requests to one server with one token.

    ``sleep`` and ``jitter`` are injectable so tests can run the retry schedule without waiting:
    before try ``n + 1`` the client sleeps ``min(max_delay, base_delay * 2**(n-1))`` scaled by a
    jitter factor in [0.5, 1), or at least what the server's ``Retry-After`` asked (capped by
    ``max_delay``).
    """

    def __init__(
        self,
        base_url: str,
        token: str,
        *,
        timeout: float = 60.0,
        tries: int = 5,
        base_delay: float = 0.5,
        max_delay: float = 60.0,
        sleep: Callable[[float], None] = time.sleep,
        jitter: Callable[[], float] = random.random,
    ) -> None:
        self.base_url = check_base_url(base_url)
        self._token = check_token(token)
        self.timeout = timeout
        self.tries = max(1, tries)
        self.base_delay = base_delay
        self.max_delay = max_delay
        self._sleep = sleep
        self._jitter = jitter
        self._opener = urllib.request.build_opener(_NoRedirect)

    def __repr__(self) -> str:  # never show the token
        return f"Client({self.base_url!r})"

    # -- addresses ---------------------------------------------------------------------------

    def resolve(self, path: str) -> str:
        """An absolute URL for an API path the caller or the server gave.

        ``/api/v1/...`` is taken relative to the server URL (which may carry a path prefix);
        an absolute URL is accepted only on the server's own scheme, host and port.
        """
        base = urllib.parse.urlsplit(self.base_url)
        target = urllib.parse.urlsplit(path)
        if target.scheme or target.netloc:
            if (target.scheme, target.netloc) != (base.scheme, base.netloc):
                raise TransportError(
                    None,
                    "bad-response",
                    f"the server pointed to another address ({target.scheme}://{target.netloc});"
                    " not sending the token there",
                )
            return path
        if not path.startswith("/"):
            path = "/" + path
        prefix = base.path
        if prefix and (path == prefix or path.startswith(prefix + "/")):
            return f"{base.scheme}://{base.netloc}{path}"
        return self.base_url + path

    # -- requests ----------------------------------------------------------------------------

    def request(
        self,
        method: str,
        path: str,
        *,
        query: Mapping[str, str | int | None] | None = None,
        body: bytes | None = None,
        content_type: str | None = None,
        content_encoding: str | None = None,
    ) -> Answer:
        """Send one request (with retries) and return the decoded JSON answer."""
        url = self.resolve(path)
        if query:
            pairs = [(key, str(value)) for key, value in query.items() if value is not None]
            if pairs:
                url += ("&" if "?" in url else "?") + urllib.parse.urlencode(pairs)
        headers = {
            "Authorization": f"Bearer {self._token}",
            "Accept": "application/json",
            "User-Agent": USER_AGENT,
        }
        if content_type:
            headers["Content-Type"] = content_type
        if content_encoding:
            headers["Content-Encoding"] = content_encoding
        attempt = 1
        while True:
            try:
                return self._once(method, url, headers, body)
            except _Retryable as exc:
                last, retry_after = exc.error, exc.retry_after
            if attempt >= self.tries:
                break
            delay = min(self.max_delay, self.base_delay * 2 ** (attempt - 1))
            delay *= 0.5 + 0.5 * self._jitter()
            if retry_after is not None:
                delay = max(delay, min(retry_after, self.max_delay))
            self._sleep(delay)
            attempt += 1
        tries = f"{self.tries} tries" if self.tries > 1 else "1 try"
        raise TransportError(
            last.status, last.code, f"{last.message} (gave up after {tries})", last.details
        )

    def _once(self, method: str, url: str, headers: dict[str, str], body: bytes | None) -> Answer:
        # Only http(s): check_base_url and resolve() refuse every other scheme.
        request = urllib.request.Request(url, data=body, headers=headers, method=method)  # noqa: S310
        try:
            with self._opener.open(request, timeout=self.timeout) as response:
                raw = _read_capped(response)
                status = int(response.status)
                answer_headers = dict(response.headers.items())
        except urllib.error.HTTPError as exc:
            try:
                with exc:
                    raw = _read_capped(exc) if exc.fp is not None else b""
            except (OSError, http.client.HTTPException):
                raw = b""
            error = self._error_from_answer(exc.code, exc.headers.get("Location"), raw, url)
            if exc.code in RETRY_STATUSES:
                retry_after = retry_after_seconds(exc.headers.get("Retry-After"))
                raise _Retryable(error, retry_after) from None
            raise error from None
        except urllib.error.URLError as exc:
            reason = exc.reason
            if isinstance(reason, ssl.SSLCertVerificationError):
                raise TransportError(
                    None, "tls", f"cannot verify the TLS certificate of {_origin(url)}: {reason}"
                ) from None
            raise _Retryable(
                TransportError(None, "unreachable", f"cannot reach {_origin(url)}: {reason}")
            ) from None
        except TimeoutError:
            raise _Retryable(
                TransportError(
                    None, "timeout", f"no answer from {_origin(url)} within {self.timeout:g} s"
                )
            ) from None
        except (ConnectionError, http.client.HTTPException, OSError) as exc:
            raise _Retryable(
                TransportError(None, "unreachable", f"connection to {_origin(url)} failed: {exc!r}")
            ) from None
        if not raw.strip():
            return Answer(status, None, answer_headers)
        try:
            data = json.loads(raw)
        except (UnicodeDecodeError, json.JSONDecodeError):
            if _is_html(raw):
                raise self._not_the_api(status, url) from None
            raise TransportError(
                status,
                "bad-response",
                f"expected JSON from {_strip_query(url)}, got {_preview(raw)}",
            ) from None
        return Answer(status, data, answer_headers)

    def _not_the_api(self, status: int, url: str) -> TransportError:
        """An HTML page where the API should answer: most often a --url that names a page
        or an API path rather than the service's address."""
        base = urllib.parse.urlsplit(self.base_url)
        message = (
            f"{_strip_query(url)} answered {status} with an HTML page, not the Freeze Debt API"
        )
        if base.path:
            message += (
                f"; --url takes the service's address, and {base.path} looks like the path of "
                f"a page or of the API: try --url {base.scheme}://{base.netloc} (keep a path "
                "only when the whole service is served under it)"
            )
        else:
            message += "; check that --url is the Freeze Debt service's address"
        return TransportError(status, "not-the-api", message)

    def _error_from_answer(
        self, status: int, location: str | None, raw: bytes, url: str
    ) -> TransportError:
        if 300 <= status < 400:
            where = location or "elsewhere"
            return TransportError(
                status,
                "redirect",
                f"the server redirects {_strip_query(url)} to {where}; pass that address as "
                "--url (redirects are not followed, so the token stays with the address given)",
            )
        try:
            document = json.loads(raw)
        except (UnicodeDecodeError, json.JSONDecodeError):
            document = None
        error = document.get("error") if isinstance(document, dict) else None
        if isinstance(error, dict):
            code = str(error.get("code") or f"http-{status}")
            message = str(error.get("message") or http.client.responses.get(status, "error"))
            details = error.get("details")
            if details and self._token in json.dumps(details):
                details = json.loads(self._redact(json.dumps(details)))
            return TransportError(status, code, self._redact(message), details)
        # A page where the API should be; a proxy's HTML 502 is an outage, told as such below.
        if status in (404, 405) and _is_html(raw):
            return self._not_the_api(status, url)
        reason = http.client.responses.get(status, "error")
        text = _preview(raw) if raw.strip() else "no error body"
        return TransportError(status, f"http-{status}", f"{reason} ({text})")

    def _redact(self, text: str) -> str:
        return text.replace(self._token, "[token]")


class _Retryable(Exception):
    def __init__(self, error: TransportError, retry_after: float | None = None) -> None:
        super().__init__(str(error))
        self.error = error
        self.retry_after = retry_after


def _read_capped(stream: Any) -> bytes:
    data: bytes = stream.read(MAX_ANSWER_BYTES + 1)
    if len(data) > MAX_ANSWER_BYTES:
        raise TransportError(
            None, "bad-response", f"the answer is larger than {MAX_ANSWER_BYTES >> 20} MiB"
        )
    return data


def _origin(url: str) -> str:
    parts = urllib.parse.urlsplit(url)
    return f"{parts.scheme}://{parts.netloc}"


def _strip_query(url: str) -> str:
    parts = urllib.parse.urlsplit(url)
    return urllib.parse.urlunsplit((parts.scheme, parts.netloc, parts.path, "", ""))


def _is_html(raw: bytes) -> bool:
    head = raw[:512].lstrip().lower()
    return head.startswith((b"<!doctype html", b"<html")) or b"<html" in head


def _preview(raw: bytes, limit: int = 200) -> str:
    text = raw.decode("utf-8", errors="replace").strip()
    text = " ".join(text.split())
    return repr(text[:limit] + ("…" if len(text) > limit else ""))
