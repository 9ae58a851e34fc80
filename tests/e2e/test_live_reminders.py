"""End to end, the reminders of section 8 the way a deployment sends them: the ledger pushed by
the real CLI, the reminder task sent through the broker to a live worker that writes the e-mail
(to files), and the signed link followed over HTTP, confirm page first, then the POST.

Runs only when FREEZEDEBT_E2E=1; the live service is the ``live_service`` fixture of
``conftest.py``.
"""

from __future__ import annotations

import datetime as dt
import email
import email.policy
import html
import http.cookiejar
import os
import re
import textwrap
import urllib.error
import urllib.parse
import urllib.request
from pathlib import Path

from tests.e2e.live import BIN, e2e_only, run, wait_for

pytestmark = e2e_only

OWNER = "finley@example.com"
FREEZE_ID = "FRZ-021"
LEDGER_SHA = "c0ffee" + "0" * 34
# What Django's file e-mail backend writes after each message.
MESSAGE_SEPARATOR = "\n" + "-" * 79 + "\n"


def _manage(live_service, *args: str) -> str:
    return run([BIN / "python", "manage.py", *args], env=live_service["env"]).stdout


def _server_today(live_service) -> dt.date:
    """The service's date, which decides the milestone (its TIME_ZONE, not this machine's)."""
    shell = "from django.utils import timezone; print(timezone.localdate().isoformat())"
    return dt.date.fromisoformat(_manage(live_service, "shell", "-c", shell).split()[-1])


def _count(live_service, sql: str, params: tuple = ()) -> int:
    import psycopg

    with psycopg.connect(live_service["database_url"]) as conn:
        return conn.execute(sql, params).fetchone()[0]


def _send_reminders_through_the_broker(live_service) -> str:
    """Queue ledger.tasks.send_freeze_reminders as beat would; returns the task id."""
    called = run(
        [BIN / "celery", "-A", "config", "call", "ledger.tasks.send_freeze_reminders"],
        env=live_service["env"],
    )
    return called.stdout.strip().splitlines()[-1]


def _task_result(live_service, task_id: str) -> str:
    """What the worker logged as the task's result, once it has finished."""
    log = live_service["logs"] / "worker.log"

    def finished() -> str | None:
        match = re.search(
            rf"Task ledger\.tasks\.send_freeze_reminders\[{task_id}\] (succeeded in \S+: .*|"
            r"raised .*|retry: .*)",
            log.read_text(),
        )
        return match[1] if match else None

    return wait_for(finished, timeout=60, what=f"the worker to run task {task_id}")


def _messages(mail_dir: Path) -> list[email.message.EmailMessage]:
    messages = []
    for path in sorted(mail_dir.iterdir()):
        for chunk in path.read_text().split(MESSAGE_SEPARATOR):
            if chunk.strip():
                messages.append(email.message_from_string(chunk, policy=email.policy.default))
    return messages


def _opener() -> urllib.request.OpenerDirector:
    """A browser, as far as the CSRF check cares: it keeps cookies between requests."""
    return urllib.request.build_opener(
        urllib.request.HTTPCookieProcessor(http.cookiejar.CookieJar())
    )


def test_reminder_is_mailed_once_by_the_worker_and_its_link_acknowledges(live_service, tmp_path):
    url = live_service["url"]
    mail_dir = live_service["mail_dir"]
    today = _server_today(live_service)
    ledger = tmp_path / "freeze_ledger.toml"
    ledger.write_text(
        textwrap.dedent(f"""
        [[freeze]]
        id = "{FREEZE_ID}"
        test = "tests/test_pricing.py::test_rounding_boundary"
        covers = ["src/pricing/rounding.py"]
        owner = "{OWNER}"
        opened = {(today - dt.timedelta(days=10)).isoformat()}
        expires = {(today + dt.timedelta(days=3)).isoformat()}
        reason = "wall-clock boundary; fails about 1 in 40 CI runs"
    """)
    )
    pushed = run(
        [BIN / "freezedebt-ci", "ledger", "push", ledger, "--sha", LEDGER_SHA, "--url", url],
        env={**os.environ, "FREEZEDEBT_TOKEN": live_service["ledger_token"]},
    )
    assert FREEZE_ID in pushed.stdout

    # The worker, not this process, sends the 3-day reminder; the owner gets one e-mail.
    first = _send_reminders_through_the_broker(live_service)
    wait_for(lambda: _messages(mail_dir), timeout=60, what="the reminder e-mail")
    assert "succeeded" in _task_result(live_service, first)
    [message] = _messages(mail_dir)
    assert message["To"] == OWNER
    assert FREEZE_ID in message["Subject"]
    text = message.get_body(preferencelist=("plain",)).get_content()
    assert FREEZE_ID in text
    assert "expires in 3 days" in text
    links = re.findall(rf"{re.escape(url)}/freezes/action/[^/\s]+/", text)
    assert len(links) == 3  # acknowledge, request renewal, report fixed
    acknowledge = links[0]
    assert acknowledge in html.unescape(message.get_body(preferencelist=("html",)).get_content())

    # Asking again (a retry, a second worker, the hourly beat) sends nothing new.
    second = _send_reminders_through_the_broker(live_service)
    assert "'reminders': 0" in _task_result(live_service, second)
    assert len(_messages(mail_dir)) == 1
    assert _count(live_service, "SELECT count(*) FROM ledger_reminderclaim") == 1

    # Following the link (as a mail scanner would) only shows the confirm page.
    browser = _opener()
    with browser.open(acknowledge, timeout=10) as page:
        assert page.status == 200
        body = page.read().decode()
    assert f"Acknowledge freeze {FREEZE_ID}" in body
    assert OWNER in body
    assert _count(live_service, "SELECT count(*) FROM ledger_freezeaction") == 0

    # The confirming POST, with the CSRF cookie and token of that page, records it.
    csrf = re.search(r'name="csrfmiddlewaretoken" value="([^"]+)"', body)
    assert csrf is not None
    form = urllib.parse.urlencode({"csrfmiddlewaretoken": csrf[1]}).encode()
    # An http:// URL of the live service, read off the e-mail above.
    confirm = urllib.request.Request(  # noqa: S310
        acknowledge, data=form, headers={"Referer": acknowledge}
    )
    with browser.open(confirm, timeout=10) as done:
        assert done.status == 200
    assert (
        _count(
            live_service,
            "SELECT count(*) FROM ledger_freezeaction WHERE action = %s AND owner_email = %s",
            ("acknowledge", OWNER),
        )
        == 1
    )

    # The link acts once: confirming it again says so and records nothing more.
    try:
        browser.open(confirm, timeout=10)
    except urllib.error.HTTPError as refused:
        assert refused.code == 409
    else:
        raise AssertionError("A used link was accepted again.")
    assert _count(live_service, "SELECT count(*) FROM ledger_freezeaction") == 1
