"""The fault stage of CI: the production layout, each part killed or cut in turn.

gunicorn (3 workers, production settings), a Celery worker and beat, a Redis of the stage's
own (broker and cache, each reached through a proxy this process can cut) and PostgreSQL
(reached by the web processes through another such proxy). In turn: the worker SIGKILLed in
the middle of a 200,000-record ingest, the broker cut, the cache cut, the database cut for the
web processes, two beats at once, and send_freeze_reminders run five times at once. After each
it checks that no accepted upload is lost, nothing is stored or mailed twice, nothing answered
500 (a 503 must carry Retry-After), and that the service recovered within the stated bound
(each row of the table states its own: with the sweep every SWEEP_SECONDS, twice that plus the
parse, plus a worker restart where a broker cut can take the worker down); then it prints the
figures. Exit status 0 when every check held.

    .venv/bin/python -m tests.faults.stage        # PG_URL names a PostgreSQL server
"""

from __future__ import annotations

import contextlib
import datetime as dt
import email
import email.policy
import gzip
import json
import os
import shutil
import signal
import socket
import subprocess
import sys
import tempfile
import threading
import time
import urllib.error
import urllib.parse
import urllib.request
from dataclasses import dataclass, field
from pathlib import Path

from tests.e2e.live import celery_beat, celery_worker

ROOT = Path(__file__).resolve().parents[2]
BIN = Path(sys.executable).parent
# Short, so each recovery takes seconds; the bound of each check is stated from it.
SWEEP_SECONDS = 5
# A broker cut may take the worker down (kombu, see the README) and its supervisor brings it
# back: booting a worker on a busy two-core machine takes up to half a minute.
WORKER_RESTART_SECONDS = 30
BIG_RUN_RECORDS = 200_000
MESSAGE_SEPARATOR = "\n" + "-" * 79 + "\n"


def free_port() -> int:
    with socket.socket() as sock:
        sock.bind(("127.0.0.1", 0))
        return sock.getsockname()[1]


def wait_for(condition, *, timeout: float, what: str, interval: float = 0.2):
    deadline = time.monotonic() + timeout
    while True:
        value = condition()
        if value:
            return value
        if time.monotonic() > deadline:
            raise AssertionError(f"timed out after {timeout} s waiting for {what}")
        time.sleep(interval)


# --- a TCP proxy that can be cut -------------------------------------------------------------


class Proxy:
    """127.0.0.1:port → target. ``cut()`` refuses new connections and drops the open ones,
    as a failed server or a partition does; ``restore()`` listens again on the same port."""

    def __init__(self, target: tuple[str, int]) -> None:
        self.target = target
        self.port = free_port()
        self._lock = threading.Lock()
        self._open: set[socket.socket] = set()
        self._listener: socket.socket | None = None
        self.restore()

    def restore(self) -> None:
        listener = socket.socket()
        listener.setsockopt(socket.SOL_SOCKET, socket.SO_REUSEADDR, 1)
        listener.bind(("127.0.0.1", self.port))
        listener.listen(128)
        self._listener = listener
        threading.Thread(target=self._accept, args=(listener,), daemon=True).start()

    def cut(self) -> None:
        listener, self._listener = self._listener, None
        if listener is not None:
            listener.close()
        with self._lock:
            for sock in self._open:
                with contextlib.suppress(OSError):
                    sock.shutdown(socket.SHUT_RDWR)
                sock.close()
            self._open.clear()

    def _accept(self, listener: socket.socket) -> None:
        while True:
            try:
                client, _ = listener.accept()
            except OSError:
                return
            try:
                upstream = socket.create_connection(self.target, timeout=5)
            except OSError:
                client.close()
                continue
            upstream.settimeout(None)
            with self._lock:
                if self._listener is not listener:
                    client.close()
                    upstream.close()
                    return
                self._open.update((client, upstream))
            for source, sink in ((client, upstream), (upstream, client)):
                threading.Thread(target=self._pump, args=(source, sink), daemon=True).start()

    def _pump(self, source: socket.socket, sink: socket.socket) -> None:
        try:
            while data := source.recv(65536):
                sink.sendall(data)
        except OSError:
            pass
        finally:
            with contextlib.suppress(OSError):
                sink.shutdown(socket.SHUT_WR)


# --- HTTP ------------------------------------------------------------------------------------


@dataclass
class Answer:
    status: int
    headers: dict[str, str]
    body: bytes

    def json(self):
        return json.loads(self.body)


def http(method: str, url: str, body: bytes | None = None, headers=None, timeout=60) -> Answer:
    request = urllib.request.Request(  # noqa: S310 - http:// URLs of the stage only
        url, data=body, method=method, headers=headers or {}
    )
    try:
        with urllib.request.urlopen(request, timeout=timeout) as answer:  # noqa: S310
            return Answer(answer.status, dict(answer.headers), answer.read())
    except urllib.error.HTTPError as error:
        return Answer(error.code, dict(error.headers), error.read())


def evidence(records: int, seed: str) -> bytes:
    lines = [
        {
            "nodeid": f"tests/test_m{i % 400}.py::test_{seed}_{i}",
            "when": "call",
            "outcome": "passed",
            "xfail": False,
        }
        for i in range(records)
    ]
    return json.dumps({"exit": 0, "records": lines}).encode()


# --- the figures -----------------------------------------------------------------------------


@dataclass
class Figures:
    fault: str
    requests: int = 0
    errors_500: int = 0
    answered_503: int = 0
    accepted: int = 0
    lost: int = 0
    duplicates: int = 0
    recovery: float | None = None
    bound: float | None = None
    # Times the supervisor restarted the worker (it exits on some losses of the broker).
    restarts: int = 0
    notes: list[str] = field(default_factory=list)

    def count(self, answer: Answer) -> Answer:
        self.requests += 1
        if answer.status == 500:
            self.errors_500 += 1
        if answer.status == 503:
            self.answered_503 += 1
            if not answer.headers.get("Retry-After"):
                self.notes.append("a 503 without Retry-After")
        return answer

    def problems(self) -> list[str]:
        found = list(self.notes)
        if self.errors_500:
            found.append(f"{self.errors_500} answers were 500")
        if self.lost:
            found.append(f"{self.lost} accepted uploads lost")
        if self.duplicates:
            found.append(f"{self.duplicates} duplicates")
        if self.recovery is not None and self.bound is not None and self.recovery > self.bound:
            found.append(f"recovered in {self.recovery:.1f} s, over the {self.bound:.0f} s bound")
        return found


def table(rows: list[Figures]) -> str:
    head = (
        "fault",
        "requests",
        "500",
        "503",
        "accepted",
        "lost",
        "dupes",
        "recovery s",
        "bound s",
        "worker restarts",
        "result",
    )
    lines = [head]
    for row in rows:
        lines.append(
            (
                row.fault,
                str(row.requests),
                str(row.errors_500),
                str(row.answered_503),
                str(row.accepted),
                str(row.lost),
                str(row.duplicates),
                "-" if row.recovery is None else f"{row.recovery:.1f}",
                "-" if row.bound is None else f"{row.bound:.0f}",
                str(row.restarts),
                "ok" if not row.problems() else "FAILED: " + "; ".join(row.problems()),
            )
        )
    widths = [max(len(line[i]) for line in lines) for i in range(len(head))]
    out = []
    for index, line in enumerate(lines):
        out.append(
            "| " + " | ".join(cell.ljust(w) for cell, w in zip(line, widths, strict=True)) + " |"
        )
        if index == 0:
            out.append("|" + "|".join("-" * (w + 2) for w in widths) + "|")
    return "\n".join(out)


# --- the deployment --------------------------------------------------------------------------


class Deployment:
    def __init__(self, workdir: Path, pg_url: str) -> None:
        import psycopg

        self.workdir = workdir
        server, _, name = pg_url.rpartition("/")
        self.database = f"{name.split('?')[0] or 'freezedebt'}_faults"
        with psycopg.connect(f"{server}/postgres", autocommit=True) as conn:
            conn.execute(f'DROP DATABASE IF EXISTS "{self.database}" WITH (FORCE)')
            conn.execute(f'CREATE DATABASE "{self.database}"')
        self.database_url = f"{server}/{self.database}"
        location = urllib.parse.urlsplit(pg_url)
        pg_host, pg_port = location.hostname or "127.0.0.1", location.port or 5432
        self.redis_port = free_port()
        self.redis = subprocess.Popen(
            [
                shutil.which("redis-server") or "/usr/bin/redis-server",
                "--port",
                str(self.redis_port),
                "--bind",
                "127.0.0.1",
                "--save",
                "",
                "--appendonly",
                "no",
                "--dir",
                str(workdir),
            ],
            stdout=(workdir / "redis.log").open("w"),
            stderr=subprocess.STDOUT,
        )
        self.broker = Proxy(("127.0.0.1", self.redis_port))
        self.cache = Proxy(("127.0.0.1", self.redis_port))
        self.db = Proxy((pg_host, pg_port))
        self.port = free_port()
        self.url = f"http://127.0.0.1:{self.port}"
        self.mail_dir = workdir / "mail"
        self.mail_dir.mkdir()
        self.env = {
            **{k: v for k, v in os.environ.items() if not k.startswith(("PYTEST_", "DJANGO_"))},
            "DJANGO_SETTINGS_MODULE": "config.settings.production",
            "DATABASE_URL": self.database_url,
            "SECRET_KEY": "fault-stage-secret-key-of-no-value-outside-this-run-0123456789abc",
            "ALLOWED_HOSTS": "127.0.0.1,localhost",
            "SECURE_SSL_REDIRECT": "false",
            "SECURE_HSTS_SECONDS": "0",
            "CELERY_BROKER_URL": f"redis://127.0.0.1:{self.broker.port}/0",
            "CACHE_URL": f"redis://127.0.0.1:{self.cache.port}/1",
            "EMAIL_URL": f"file://{self.mail_dir}",
            "ADMIN_EMAILS": "admin@example.com",
            "SITE_URL": self.url,
            "FREEZEDEBT_SWEEP_SECONDS": str(SWEEP_SECONDS),
            "DATABASE_CONN_MAX_AGE": "60",
        }
        # The web processes reach PostgreSQL through the proxy; worker and beat directly.
        parts = urllib.parse.urlsplit(self.database_url)
        userinfo = parts.netloc.rpartition("@")[0]
        proxied = (
            f"{userinfo}@127.0.0.1:{self.db.port}" if userinfo else f"127.0.0.1:{self.db.port}"
        )
        self.web_env = {**self.env, "DATABASE_URL": parts._replace(netloc=proxied).geturl()}
        self.accepted: dict[int, str] = {}
        self.processes: dict[str, subprocess.Popen] = {}
        # As a deployment's supervisor (a restart policy) does for the worker.
        self.worker_restarts = 0
        self._supervising = True
        threading.Thread(target=self._supervise, daemon=True).start()

    def _supervise(self) -> None:
        while self._supervising:
            process = self.processes.get("worker")
            # Checked again last: a deliberate stop takes the process out of the table first.
            if (
                process is not None
                and process.poll() is not None
                and self.processes.get("worker") is process
            ):
                self.worker_restarts += 1
                self.start("worker")
            time.sleep(0.5)

    def manage(self, *args: str, env=None) -> str:
        done = subprocess.run(
            [str(BIN / "python"), "manage.py", *args],
            cwd=ROOT,
            env=env or self.env,
            capture_output=True,
            text=True,
            timeout=300,
        )
        if done.returncode != 0:
            raise AssertionError(f"manage.py {args} failed:\n{done.stdout}\n{done.stderr}")
        return done.stdout

    def prepare(self) -> None:
        wait_for(self._redis_up, timeout=20, what="the stage's Redis")
        self.manage("migrate", "--noinput")
        self.manage("collectstatic", "--noinput")
        self.evidence_token = self.manage("create_repository", "shop").split()[-1]
        self.ledger_token = self.manage("create_token", "shop", "--scope", "ledger").split()[-1]
        self.session = self.manage(
            "shell",
            "-c",
            "from django.contrib.auth import get_user_model, SESSION_KEY, BACKEND_SESSION_KEY,"
            " HASH_SESSION_KEY\n"
            "from django.contrib.sessions.backends.db import SessionStore\n"
            "u = get_user_model().objects.create_user('staff', 'staff@example.com', 'x-pass-1',"
            " is_staff=True, is_superuser=True)\n"
            "s = SessionStore(); s[SESSION_KEY] = str(u.pk);"
            " s[BACKEND_SESSION_KEY] = 'django.contrib.auth.backends.ModelBackend';"
            " s[HASH_SESSION_KEY] = u.get_session_auth_hash(); s.create(); print(s.session_key)",
        ).split()[-1]

    def _redis_up(self) -> bool:
        try:
            with socket.create_connection(("127.0.0.1", self.redis_port), timeout=1) as sock:
                sock.sendall(b"PING\r\n")
                return sock.recv(16).startswith(b"+PONG")
        except OSError:
            return False

    def start(self, name: str) -> subprocess.Popen:
        commands = {
            "web": [
                BIN / "gunicorn",
                "config.wsgi:application",
                "--bind",
                f"127.0.0.1:{self.port}",
                "--workers",
                "3",
                "--access-logfile",
                str(self.workdir / "access.log"),
                "--access-logformat",
                '%(s)s "%(r)s"',
            ],
            "worker": celery_worker(),
            "beat": celery_beat(self.workdir / "beat-schedule"),
            "beat2": celery_beat(self.workdir / "beat2-schedule"),
        }
        log = (self.workdir / f"{name}.log").open("a")
        process = subprocess.Popen(
            [str(part) for part in commands[name]],
            cwd=ROOT,
            env=self.web_env if name == "web" else self.env,
            stdout=log,
            stderr=subprocess.STDOUT,
            start_new_session=True,
        )
        self.processes[name] = process
        return process

    def stop(self, name: str, sig=signal.SIGTERM) -> None:
        process = self.processes.pop(name)
        with contextlib.suppress(ProcessLookupError):
            os.killpg(process.pid, sig)
        try:
            process.wait(timeout=30)
        except subprocess.TimeoutExpired:
            os.killpg(process.pid, signal.SIGKILL)
            process.wait()

    def healthy(self) -> bool:
        try:
            return http("GET", f"{self.url}/healthz", timeout=5).status == 200
        except OSError:
            return False

    def close(self) -> None:
        self._supervising = False
        for name in list(self.processes):
            self.stop(name)
        self.redis.terminate()
        self.redis.wait(timeout=20)

    # --- reading the outcome ---

    def query(self, sql: str, params=()):
        import psycopg

        with psycopg.connect(self.database_url) as conn:
            return conn.execute(sql, params).fetchall()

    def upload(self, figures: Figures, sha: str, body: bytes, *, compressed=False) -> Answer:
        headers = {
            "Authorization": f"Bearer {self.evidence_token}",
            "Content-Type": "application/json",
        }
        if compressed:
            headers["Content-Encoding"] = "gzip"
        answer = figures.count(http("POST", f"{self.url}/api/v1/runs?sha={sha}", body, headers))
        if answer.status in (200, 202):
            figures.accepted += 1
            self.accepted[answer.json()["id"]] = sha
        return answer

    def unparsed(self, run_ids) -> list[int]:
        rows = self.query(
            "SELECT id FROM evidence_run WHERE id = ANY(%s) AND status <> 'ready'", (list(run_ids),)
        )
        return [row[0] for row in rows]

    def messages(self) -> list[email.message.EmailMessage]:
        found = []
        for path in sorted(self.mail_dir.iterdir()):
            for chunk in path.read_text().split(MESSAGE_SEPARATOR):
                if chunk.strip():
                    found.append(email.message_from_string(chunk, policy=email.policy.default))
        return found


# --- the faults ------------------------------------------------------------------------------


def worker_killed_mid_ingest(d: Deployment) -> Figures:
    figures = Figures("worker SIGKILLed mid-ingest (200,000 records)")
    body = gzip.compress(evidence(BIG_RUN_RECORDS, "big"), 1)
    answer = d.upload(figures, "b1" * 20, body, compressed=True)
    run_id = answer.json()["id"]
    wait_for(
        lambda: d.query("SELECT ingest_attempts FROM evidence_run WHERE id = %s", (run_id,))[0][0],
        timeout=60,
        what="the worker to start the big ingest",
    )
    time.sleep(0.3)  # into the parse
    [(status,)] = d.query("SELECT status FROM evidence_run WHERE id = %s", (run_id,))
    if status != "received":
        figures.notes.append(f"the ingest ended ({status}) before the kill")
    killed = time.monotonic()
    d.stop("worker", signal.SIGKILL)
    d.start("worker")
    figures.bound = 2 * SWEEP_SECONDS + 60
    wait_for(
        lambda: not d.unparsed([run_id]),
        timeout=figures.bound + 30,
        what="the killed worker's run to be parsed",
    )
    figures.recovery = time.monotonic() - killed
    [(results, packed)] = d.query(
        "SELECT r.passed + r.failed + r.skipped + r.xfail, o.run_id IS NOT NULL "
        "FROM evidence_run r LEFT JOIN evidence_runoutcomes o ON o.run_id = r.id WHERE r.id = %s",
        (run_id,),
    )
    if results != BIG_RUN_RECORDS or not packed:
        figures.notes.append(f"{results} outcomes stored for {BIG_RUN_RECORDS} records")
    return figures


def broker_cut(d: Deployment) -> Figures:
    figures = Figures("broker unreachable")
    d.broker.cut()
    ids = []
    for n in range(5):
        answer = d.upload(figures, f"c{n}" * 20, evidence(50, f"broker{n}"))
        if answer.status == 202:
            ids.append(answer.json()["id"])
    time.sleep(2)
    d.broker.restore()
    restored = time.monotonic()
    figures.bound = 2 * SWEEP_SECONDS + 20 + WORKER_RESTART_SECONDS
    wait_for(
        lambda: not d.unparsed(ids),
        timeout=figures.bound + 30,
        what="the runs accepted without a broker to be parsed",
    )
    figures.recovery = time.monotonic() - restored
    if len(ids) != 5:
        figures.notes.append(f"{5 - len(ids)} uploads not accepted while the broker was down")
    return figures


def cache_cut(d: Deployment) -> Figures:
    figures = Figures("cache unreachable")
    d.cache.cut()
    ids = []
    for n in range(5):
        answer = d.upload(figures, f"d{n}" * 20, evidence(50, f"cache{n}"))
        if answer.status not in (200, 202):
            figures.notes.append(f"upload answered {answer.status}")
        else:
            ids.append(answer.json()["id"])
    patch = json.dumps({"ref": "PR-9", "base_sha": "d0" * 20, "head_sha": "d1" * 20}).encode()
    declared = figures.count(
        http(
            "POST",
            f"{d.url}/api/v1/patches",
            patch,
            {"Authorization": f"Bearer {d.evidence_token}", "Content-Type": "application/json"},
        )
    )
    if declared.status != 201:
        figures.notes.append(f"patch declared with {declared.status}")
    page = figures.count(http("GET", f"{d.url}/", headers={"Cookie": f"sessionid={d.session}"}))
    if page.status != 200:
        figures.notes.append(f"overview answered {page.status}")
    d.cache.restore()
    started = time.monotonic()
    figures.bound = 2 * SWEEP_SECONDS + 20
    wait_for(lambda: not d.unparsed(ids), timeout=figures.bound + 30, what="the runs parsed")
    figures.recovery = time.monotonic() - started
    return figures


def database_cut_for_web(d: Deployment) -> Figures:
    figures = Figures("database unreachable for web")
    d.db.cut()
    session = {"Cookie": f"sessionid={d.session}"}
    for _ in range(3):
        for answer in (
            http("GET", f"{d.url}/", headers=session),
            http("GET", f"{d.url}/healthz"),
            http(
                "POST",
                f"{d.url}/api/v1/runs?sha={'e0' * 20}",
                evidence(10, "dbdown"),
                {"Authorization": f"Bearer {d.evidence_token}", "Content-Type": "application/json"},
            ),
        ):
            figures.count(answer)
            if answer.status != 503:
                figures.notes.append(f"answered {answer.status} with the database down")
    d.db.restore()
    restored = time.monotonic()
    figures.bound = 15
    wait_for(d.healthy, timeout=figures.bound + 30, what="the web processes to reconnect")
    answer = d.upload(figures, "e0" * 20, evidence(10, "dbdown"))
    if answer.status != 202:
        figures.notes.append(f"the upload after the outage answered {answer.status}")
    figures.recovery = time.monotonic() - restored
    return figures


def two_beats(d: Deployment) -> Figures:
    figures = Figures("two beat processes at once")
    d.broker.cut()
    ids = []
    for n in range(6):
        answer = d.upload(figures, f"f{n}" * 20, evidence(2000, f"beats{n}"))
        ids.append(answer.json()["id"])
    d.broker.restore()
    d.start("beat2")
    started = time.monotonic()
    figures.bound = 2 * SWEEP_SECONDS + 20 + WORKER_RESTART_SECONDS
    wait_for(lambda: not d.unparsed(ids), timeout=figures.bound + 30, what="the swept runs")
    figures.recovery = time.monotonic() - started
    time.sleep(2 * SWEEP_SECONDS)  # both beats sweep again: nothing may change
    d.stop("beat2")
    rows = d.query(
        "SELECT run_id, count(*) FROM evidence_testresult WHERE run_id = ANY(%s) GROUP BY run_id",
        (ids,),
    )
    figures.duplicates += sum(1 for _, count in rows if count != 2000)
    return figures


def reminders_at_once(d: Deployment) -> Figures:
    figures = Figures("send_freeze_reminders x5 at once")
    today = dt.date.fromisoformat(
        d.manage(
            "shell", "-c", "from django.utils import timezone; print(timezone.localdate())"
        ).split()[-1]
    )
    ledger = "".join(
        f'[[freeze]]\nid = "FRZ-{n}"\ntest = "tests/test_m{n}.py::test_x"\n'
        f'covers = ["src/m{n}.py"]\nowner = "owner{n}@example.com"\n'
        f"opened = {(today - dt.timedelta(days=2)).isoformat()}\n"
        f"expires = {(today + dt.timedelta(days=3)).isoformat()}\n"
        'reason = "times out on the shared CI runners"\n\n'
        for n in range(3)
    )
    pushed = figures.count(
        http(
            "PUT",
            f"{d.url}/api/v1/ledger?sha={'a' * 40}",
            ledger.encode(),
            {"Authorization": f"Bearer {d.ledger_token}", "Content-Type": "application/toml"},
        )
    )
    if pushed.status != 201:
        raise AssertionError(f"ledger push answered {pushed.status}: {pushed.body[:300]!r}")
    before = len(d.messages())
    commands = [[str(BIN / "python"), "manage.py", "send_freeze_reminders"]] * 3 + [
        [str(BIN / "celery"), "-A", "config", "call", "ledger.tasks.send_freeze_reminders"]
    ] * 2
    started = time.monotonic()
    running = [
        subprocess.Popen(
            c, cwd=ROOT, env=d.env, stdout=subprocess.DEVNULL, stderr=subprocess.DEVNULL
        )
        for c in commands
    ]
    for process in running:
        process.wait(timeout=120)
    figures.bound = 30
    expected = 4  # three owners' reminders and the staff digest

    def settled() -> bool:
        # The two queued tasks run on the worker: done when their claims stop changing.
        return len(d.messages()) - before >= expected and (time.sleep(2) or True)

    wait_for(settled, timeout=figures.bound + 30, what="the reminders")
    figures.recovery = time.monotonic() - started
    sent = d.messages()[before:]
    recipients = [message["To"] for message in sent]
    figures.duplicates = len(recipients) - len(set(recipients))
    if len(sent) != expected:
        figures.notes.append(f"{len(sent)} mails sent, {expected} expected: {recipients}")
    return figures


def final_checks(d: Deployment, rows: list[Figures]) -> Figures:
    figures = Figures("whole stage")
    lost = d.unparsed(d.accepted)
    figures.accepted = len(d.accepted)
    figures.lost = len(lost)
    [(runs,)] = d.query("SELECT count(*) FROM evidence_run")
    figures.duplicates = runs - len(set(d.accepted.values()))
    access = (d.workdir / "access.log").read_text().splitlines()
    figures.requests = len(access)
    figures.errors_500 = sum(1 for line in access if line.startswith("500 "))
    figures.answered_503 = sum(1 for line in access if line.startswith("503 "))
    admin = [m for m in d.messages() if m["To"] == "admin@example.com"]
    if admin:
        figures.notes.append(f"{len(admin)} error mails to the admins: {admin[0]['Subject']}")
    return figures


def main() -> int:
    pg_url = os.environ.get("PG_URL", "postgres://postgres@127.0.0.1:5432/freezedebt")
    began = time.monotonic()
    rows: list[Figures] = []
    only = set(filter(None, os.environ.get("FREEZEDEBT_FAULTS", "").split(",")))
    keep = os.environ.get("FREEZEDEBT_FAULTS_KEEP") == "1"
    workdir = Path(tempfile.mkdtemp(prefix="freezedebt-faults-"))
    print(f"fault stage in {workdir}", flush=True)
    try:
        d = Deployment(workdir, pg_url)
        try:
            d.prepare()
            for name in ("web", "worker", "beat"):
                d.start(name)
            wait_for(d.healthy, timeout=60, what="gunicorn")
            for fault in (
                worker_killed_mid_ingest,
                broker_cut,
                cache_cut,
                database_cut_for_web,
                two_beats,
                reminders_at_once,
            ):
                if only and fault.__name__ not in only:
                    continue
                print(f"-- {fault.__name__}", flush=True)
                restarts = d.worker_restarts
                try:
                    rows.append(fault(d))
                except Exception as error:  # the table still shows the others
                    failed = Figures(fault.__name__)
                    failed.notes.append(f"{type(error).__name__}: {error}")
                    rows.append(failed)
                rows[-1].restarts = d.worker_restarts - restarts
            rows.append(final_checks(d, rows))
            rows[-1].restarts = d.worker_restarts
        finally:
            d.close()
            if any(row.problems() for row in rows):
                for name in ("web", "worker", "beat", "beat2"):
                    log = workdir / f"{name}.log"
                    if log.exists():
                        print(f"==== last lines of {name}.log")
                        print("\n".join(log.read_text().splitlines()[-40:]))
    finally:
        if not keep:
            shutil.rmtree(workdir, ignore_errors=True)
    print(table(rows))
    print(f"fault stage: {time.monotonic() - began:.0f} s; sweep every {SWEEP_SECONDS} s")
    return 1 if any(row.problems() for row in rows) else 0


if __name__ == "__main__":
    sys.exit(main())
