"""What the commands that talk to a Freeze Debt server share: the server options and the
client they make, argument types, error printing, answers checked for shape, and polling.

Results go to standard output, progress and errors to standard error (so ``patch --json``
prints nothing but the report).
"""

from __future__ import annotations

import argparse
import json
import os
import re
import sys
import time
from collections.abc import Callable
from dataclasses import dataclass
from typing import Any, TypeVar

from ..exits import EXIT_ERROR, UsageError
from ..transport import (
    Answer,
    Client,
    TransportError,
    check_base_url,
    check_token,
    is_plain_http_to_remote,
)

ENV_URL = "FREEZEDEBT_URL"
ENV_TOKEN = "FREEZEDEBT_TOKEN"  # noqa: S105 - a variable name, not a secret
#: The job label ``upload`` and ``patch`` both use when ``--label`` is not given.
ENV_LABEL = "FREEZEDEBT_LABEL"
#: Polling starts this often and slows down to at most POLL_MAX seconds between requests.
POLL_FIRST, POLL_MAX = 1.0, 5.0
_SHA = re.compile(r"^[0-9a-fA-F]{7,64}$")
_T = TypeVar("_T")


@dataclass
class Clock:
    """Time as the commands see it; tests swap :data:`CLOCK` for one that does not wait."""

    now: Callable[[], float] = time.monotonic
    sleep: Callable[[float], None] = time.sleep


CLOCK = Clock()


# -- argument types ----------------------------------------------------------------------------


def commit_sha(value: str) -> str:
    if not _SHA.match(value):
        raise argparse.ArgumentTypeError(
            f"expected a commit sha (7 to 64 hex digits), got {value!r}"
        )
    return value


def attempt_number(value: str) -> int:
    try:
        number = int(value)
    except ValueError:
        number = 0
    if number < 1:
        raise argparse.ArgumentTypeError(f"expected a whole number from 1, got {value!r}")
    return number


def seconds(value: str) -> float:
    try:
        seconds = float(value)
    except ValueError:
        seconds = -1.0
    if not (0 <= seconds < float("inf")):
        raise argparse.ArgumentTypeError(f"expected a number of seconds (0 or more), got {value!r}")
    return seconds


def nonempty(value: str) -> str:
    if not value.strip():
        raise argparse.ArgumentTypeError("expected a non-empty value")
    return value.strip()


def job_label(args: argparse.Namespace) -> str | None:
    """``--label``, else ``FREEZEDEBT_LABEL``, else none: one variable set for a CI job gives
    its upload and its patch the same label."""
    if args.label:
        return str(args.label)
    value = os.environ.get(ENV_LABEL, "").strip()
    return value or None


# -- the server ------------------------------------------------------------------------------


def server_client(args: argparse.Namespace) -> Client:
    """A client for ``--url``/``--token`` (or their environment variables)."""
    url = args.url or os.environ.get(ENV_URL, "")
    token = args.token or os.environ.get(ENV_TOKEN, "")
    if not url.strip():
        raise UsageError(f"no server address: pass --url or set {ENV_URL}")
    if not token.strip():
        raise UsageError(f"no token: pass --token or set {ENV_TOKEN}")
    try:
        url = check_base_url(url)
    except ValueError as exc:
        raise UsageError(str(exc)) from None
    try:
        token = check_token(token)
    except ValueError as exc:  # the message never quotes the token
        raise UsageError(str(exc)) from None
    if is_plain_http_to_remote(url):
        print(
            f"freezedebt-ci: warning: the token goes unencrypted to {url}; use https",
            file=sys.stderr,
        )
    return Client(url, token, timeout=args.timeout, sleep=lambda s: CLOCK.sleep(s))


#: What a 403 (a token of the wrong scope) means for each command.
SCOPE_HINTS = {
    "evidence": "upload and patch take an evidence-scoped token "
    "(on the server: python manage.py create_token SLUG --scope evidence)",
    "ledger": "ledger push takes a ledger-scoped token, for the default branch's CI only "
    "(on the server: python manage.py create_token SLUG --scope ledger)",
}


def guarded(
    handler: Callable[[argparse.Namespace], int], *, scope: str | None = None
) -> Callable[[argparse.Namespace], int]:
    """Run a command, turning a transport failure into a message on stderr and exit 2."""

    def run(args: argparse.Namespace) -> int:
        try:
            return handler(args)
        except TransportError as exc:
            _print_error(exc, scope=scope)
            return EXIT_ERROR

    return run


# Error details and rejection reasons printed at most (the server keeps up to 100 reasons).
MAX_SHOWN_LINES = 50


def _print_error(exc: TransportError, *, scope: str | None = None) -> None:
    print(f"freezedebt-ci: {exc}", file=sys.stderr)
    for line in exc.detail_lines()[:MAX_SHOWN_LINES]:
        print(f"  {line}", file=sys.stderr)
    hint = {
        401: f"check the token (--token or {ENV_TOKEN})",
        403: "the token lacks the scope this needs"
        + (f": {SCOPE_HINTS[scope]}" if scope in SCOPE_HINTS else ""),
        413: "the body is larger than the server accepts",
    }.get(exc.status or 0)
    if hint:
        print(f"freezedebt-ci: {hint}", file=sys.stderr)


def answer_object(answer: Answer, what: str, *keys: str) -> dict[str, Any]:
    """The answer as a JSON object holding ``keys``; a bad-response error otherwise."""
    data = answer.data
    if not isinstance(data, dict) or any(key not in data for key in keys):
        raise TransportError(
            answer.status,
            "bad-response",
            f"expected {what} with {', '.join(keys)}, got {json.dumps(data)[:200]}",
        )
    return data


def poll(first: _T, fetch: Callable[[], _T], done: Callable[[_T], bool], wait: float) -> _T:
    """Fetch again until ``done`` or ``wait`` seconds passed; the last value either way."""
    deadline = CLOCK.now() + wait
    interval = POLL_FIRST
    current = first
    while not done(current):
        remaining = deadline - CLOCK.now()
        if remaining <= 0:
            break
        CLOCK.sleep(min(interval, remaining))
        interval = min(interval * 1.5, POLL_MAX)
        current = fetch()
    return current


def add_server_options(parser: argparse.ArgumentParser) -> None:
    group = parser.add_argument_group("server")
    group.add_argument(
        "--url",
        metavar="URL",
        help=f"address of the Freeze Debt server, e.g. https://freezedebt.example.com "
        f"(default: ${ENV_URL})",
    )
    group.add_argument(
        "--token",
        metavar="TOKEN",
        help=f"upload token of the repository (default: ${ENV_TOKEN}; prefer the variable, "
        "as command lines are visible to other processes)",
    )
    group.add_argument(
        "--timeout",
        type=seconds,
        default=60.0,
        metavar="SECONDS",
        help="network timeout of each request (default: %(default)g); transient failures "
        "are retried up to 5 times with backoff",
    )
