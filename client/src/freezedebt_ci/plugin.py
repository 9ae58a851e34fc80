"""The pytest plugin (SPEC 7): evidence JSON out, freeze ledger in.

Registered through the ``pytest11`` entry point and inert unless asked: without
``--evidence-out`` / ``EVIDENCE_OUT`` and without ``--freeze-ledger`` no hook of the plugin
runs and no file is written.

* ``--evidence-out PATH`` (or the ``EVIDENCE_OUT`` environment variable) writes the evidence
  JSON of SPEC 4.1, with ``meta``, when the session ends. Under pytest-xdist the controller
  writes the one file, from the reports every worker sends it.
* ``--freeze-ledger PATH`` enforces the ledger on ``--freeze-today`` (default: today). An
  active freeze skips its test at setup, with the freeze id, expiry and owner in the reason;
  an active freeze with a ``signature`` lets its test run and turns a failure into an xfail
  only when the failure has that signature (SPEC 5.6); an expired freeze is not applied.

The failure text of a record and its signature are taken where the test ran, from
``report.longreprtext``, so a freeze matches exactly the signature the evidence shows.
"""

from __future__ import annotations

import datetime as dt
import hashlib
import json
import os
import platform
import re
import shutil
import subprocess
import time
from collections.abc import Generator, Mapping, Sequence
from pathlib import Path
from reprlib import repr as short_repr
from typing import Any

import pytest

from .errors import InputError
from .hygiene import freeze_problems
from .junit import JUNIT_XPASS_PROPERTY
from .ledger import Freeze, parse_ledger
from .outcomes import FORMAT, SUBTEST_FIELD
from .policy import Policy
from .signatures import failure_signature

#: Failure text kept per record, in UTF-8 bytes (SPEC 4.1).
LONGREPR_LIMIT = 4096
PROPERTY_LANES = ("pinned", "hunt")
PLUGIN_NAME = "freezedebt-session"

ENV_EVIDENCE_OUT = "EVIDENCE_OUT"
_SHA_ENV = ("GITHUB_SHA", "CI_COMMIT_SHA")
_BRANCH_ENV = ("GITHUB_HEAD_REF", "GITHUB_REF_NAME", "CI_COMMIT_BRANCH", "CI_COMMIT_REF_NAME")
_PHASES = ("setup", "call", "teardown")
_OUTCOMES = ("passed", "failed", "skipped")

# Extra report attributes set where the test runs; pytest-xdist carries them to the controller.
_ATTR_FREEZE = "freezedebt_freeze"
_ATTR_LONGREPR = "freezedebt_longrepr"
_ATTR_SIGNATURE = "freezedebt_signature"

# Keys the controller hands to pytest-xdist workers.
_WORKER_TODAY = "freezedebt_today"
_WORKER_EVIDENCE = "freezedebt_evidence"

_FROZEN_BY = pytest.StashKey[str]()
#: The line pytest-xdist's controller puts before a worker's failure text.
_WORKER_LINE = re.compile(r"^\[[\w.-]+\] \S.* -- Python \S+ ")


def pytest_addoption(parser: pytest.Parser) -> None:
    group = parser.getgroup("freezedebt", "Freeze Debt evidence and freeze ledger")
    group.addoption(
        "--evidence-out",
        metavar="PATH",
        default=None,
        help="write the run's evidence JSON to PATH (default: $EVIDENCE_OUT; none when unset)",
    )
    group.addoption(
        "--freeze-ledger",
        metavar="PATH",
        default=None,
        help="enforce the freeze ledger at PATH: active freezes skip (or, with a signature, "
        "xfail) their tests",
    )
    group.addoption(
        "--freeze-today",
        metavar="YYYY-MM-DD",
        default=None,
        help="the date freezes are judged on (default: today)",
    )
    group.addoption(
        "--lockfile",
        metavar="PATH",
        default=None,
        help="record the SHA-256 of this dependency lock file in the evidence meta "
        "(default: $LOCKFILE_SHA256)",
    )


def pytest_configure(config: pytest.Config) -> None:
    evidence_out = config.getoption("evidence_out") or os.environ.get(ENV_EVIDENCE_OUT) or None
    ledger = config.getoption("freeze_ledger")
    if evidence_out is None and ledger is None:
        return  # inert: nothing asked of the plugin
    session = FreezeDebtSession(config, evidence_out=evidence_out, ledger=ledger)
    config.pluginmanager.register(session, PLUGIN_NAME)


def pytest_unconfigure(config: pytest.Config) -> None:
    session = config.pluginmanager.get_plugin(PLUGIN_NAME)
    if session is not None:
        config.pluginmanager.unregister(session)


# --- helpers ----------------------------------------------------------------------------


def truncate_text(text: str, limit: int = LONGREPR_LIMIT) -> str:
    """``text`` cut to at most ``limit`` UTF-8 bytes: the head, a marker, and the tail (where
    the assertion and the crash location are). Unencodable characters become ``?``."""
    data = text.encode("utf-8", "replace")
    if len(data) <= limit:
        return data.decode("utf-8")
    template = "\n[... {} bytes cut ...]\n"
    room = limit - len(template.format(len(data)).encode())
    head = data[: room // 4].decode("utf-8", "ignore")
    tail = data[len(data) - (room - room // 4) :].decode("utf-8", "ignore")
    cut = len(data) - len(head.encode()) - len(tail.encode())
    return head + template.format(cut) + tail


def file_sha256(path: Path) -> str:
    digest = hashlib.sha256()
    with path.open("rb") as handle:
        for chunk in iter(lambda: handle.read(1 << 20), b""):
            digest.update(chunk)
    return digest.hexdigest()


def _git(args: Sequence[str], cwd: Path) -> str | None:
    """Output of a git command, or None when git, the repository or the command fails."""
    git = shutil.which("git")
    if git is None:
        return None
    command = [git, *args]
    try:
        # git's absolute path and the plugin's own fixed arguments, no shell.
        done = subprocess.run(  # noqa: S603
            command, cwd=cwd, capture_output=True, text=True, timeout=10, check=False
        )
    except (OSError, subprocess.SubprocessError):
        return None
    out = done.stdout.strip()
    return out if done.returncode == 0 and out else None


def _first_env(names: Sequence[str], environ: Mapping[str, str]) -> str | None:
    for name in names:
        value = environ.get(name, "").strip()
        if value:
            return value
    return None


def _failure_text(report: pytest.TestReport | pytest.CollectReport) -> str:
    """``report.longreprtext`` without the worker line pytest-xdist puts first on the
    controller, so the text is the same with and without xdist."""
    text = report.longreprtext
    if getattr(report, "node", None) is not None:
        first, _, rest = text.partition("\n")
        if _WORKER_LINE.match(first):
            return rest
    return text


def subtest_mark(report: object) -> dict[str, Any] | None:
    """The message and parameters of a subtest's report (pytest >= 9's ``SubtestReport``, or
    the pytest-subtests plugin's), or None for a test's own report. Readers need the mark:
    a subtest's record is one part of an attempt, not an attempt of its own (a rerun)."""
    context = getattr(report, "context", None)
    if context is None or not hasattr(context, "msg") or not hasattr(context, "kwargs"):
        return None
    msg = context.msg
    params = {
        str(key): value if isinstance(value, str) else short_repr(value)
        for key, value in dict(context.kwargs or {}).items()
    }
    return {"msg": None if msg is None else str(msg), "params": params}


def ledger_notes(freezes: Sequence[Freeze], today: dt.date) -> list[str]:
    """A line for each invalid freeze (judged by the default policy) with its reasons, and for
    each expired one."""
    notes = []
    policy = Policy()
    for freeze in freezes:
        problems = freeze_problems(freeze, policy)
        if problems:
            notes.append(f"invalid freeze {freeze.id}: {'; '.join(problems)}")
        if freeze.is_expired(today) and freeze.expires is not None:
            notes.append(
                f"expired freeze {freeze.id}: expired on {freeze.expires.isoformat()}, so "
                f"{freeze.test or 'its test'} runs unfrozen"
            )
    return notes


def freeze_reason(freeze: Freeze) -> str:
    expires = freeze.expires.isoformat() if freeze.expires else "?"
    return f"frozen {freeze.id} until {expires} ({freeze.owner or 'no owner'})"


def _resolve(path: str, base: Path) -> Path:
    candidate = Path(path).expanduser()
    return candidate if candidate.is_absolute() else base / candidate


# --- the session plugin -----------------------------------------------------------------


class FreezeDebtSession:
    """Registered by :func:`pytest_configure` only when the plugin was asked to do something."""

    def __init__(self, config: pytest.Config, *, evidence_out: str | None, ledger: str | None):
        self.config = config
        base = config.invocation_params.dir
        workerinput: dict[str, Any] | None = getattr(config, "workerinput", None)
        self.is_worker = workerinput is not None
        self.evidence_path = _resolve(evidence_out, base) if evidence_out else None
        # Workers attach failure text for the controller's evidence; the controller says whether.
        self.wants_text = (
            bool(workerinput.get(_WORKER_EVIDENCE, self.evidence_path is not None))
            if workerinput is not None
            else self.evidence_path is not None
        )
        self.today = self._today(workerinput)
        self.ledger_path = _resolve(ledger, base) if ledger else None
        self.freezes: list[Freeze] = []
        self.ledger_sha256: str | None = None
        if self.ledger_path is not None:
            source = str(self.ledger_path)
            try:
                # Read once: the digest is of the very text the freezes come from.
                data = self.ledger_path.read_bytes()
                self.freezes = parse_ledger(data, source=source)
            except OSError as exc:
                problem = InputError.single(source, "", f"cannot be read ({exc.strerror})")
                raise pytest.UsageError(f"--freeze-ledger: {problem}") from None
            except InputError as exc:
                raise pytest.UsageError(f"--freeze-ledger: {exc}") from None
            self.ledger_sha256 = hashlib.sha256(data).hexdigest()
        # Every invalid or expired freeze is named at the end of the run: a ledger mistake
        # (a date in the past year, a missing reason) must not pass silently.
        self.ledger_notes = ledger_notes(self.freezes, self.today)
        # Active freezes by node id; an expired or dateless freeze is not applied.
        self.skips: dict[str, Freeze] = {}
        self.signatures: dict[str, list[Freeze]] = {}
        self.active = self.expired = 0
        for freeze in self.freezes:
            self.expired += freeze.is_expired(self.today)
            if not freeze.test or not freeze.is_active(self.today):
                continue
            self.active += 1
            if freeze.signature:
                self.signatures.setdefault(freeze.test, []).append(freeze)
            else:
                self.skips.setdefault(freeze.test, freeze)
        self.lockfile_sha256 = self._lockfile(base)
        self.records: list[dict[str, Any]] = []
        self.collect_records: set[str] = set()
        self.meta: dict[str, Any] = {}
        self.started = time.monotonic()
        self.write_error: str | None = None
        if self.evidence_path is not None and not self.is_worker:
            try:
                self.evidence_path.parent.mkdir(parents=True, exist_ok=True)
            except OSError as exc:
                raise pytest.UsageError(
                    f"--evidence-out: cannot create {self.evidence_path.parent} ({exc.strerror})"
                ) from None

    def _today(self, workerinput: Mapping[str, Any] | None) -> dt.date:
        if workerinput is not None and workerinput.get(_WORKER_TODAY):
            return dt.date.fromisoformat(workerinput[_WORKER_TODAY])
        value = self.config.getoption("freeze_today")
        if not value:
            return dt.date.today()
        try:
            return dt.date.fromisoformat(value)
        except ValueError:
            raise pytest.UsageError(
                f"--freeze-today: expected a date as YYYY-MM-DD, got {value!r}"
            ) from None

    def _lockfile(self, base: Path) -> str | None:
        option = self.config.getoption("lockfile")
        if option:
            path = _resolve(option, base)
            try:
                return file_sha256(path)
            except OSError as exc:
                raise pytest.UsageError(
                    f"--lockfile: cannot read {path} ({exc.strerror})"
                ) from None
        return os.environ.get("LOCKFILE_SHA256", "").strip() or None

    # -- xdist ------------------------------------------------------------------------------

    @pytest.hookimpl(optionalhook=True)
    def pytest_configure_node(self, node: Any) -> None:
        """Give every pytest-xdist worker the controller's date and whether to keep text."""
        node.workerinput[_WORKER_TODAY] = self.today.isoformat()
        node.workerinput[_WORKER_EVIDENCE] = self.evidence_path is not None

    # -- header and session -----------------------------------------------------------------

    def pytest_report_header(self, config: pytest.Config) -> list[str]:
        lines = []
        if self.ledger_path is not None:
            count = len(self.freezes)
            lines.append(
                f"freezedebt: ledger {self.ledger_path}: {count} "
                f"{'freeze' if count == 1 else 'freezes'}, {self.active} active, "
                f"{self.expired} expired on {self.today.isoformat()}"
            )
        if self.evidence_path is not None:
            lines.append(f"freezedebt: evidence to {self.evidence_path}")
        return lines

    def pytest_sessionstart(self, session: pytest.Session) -> None:
        self.started = time.monotonic()
        if self.evidence_path is not None and not self.is_worker:
            self.meta = self._meta()

    def _meta(self) -> dict[str, Any]:
        environ = os.environ
        root = self.config.rootpath
        meta: dict[str, Any] = {}
        sha = _first_env(_SHA_ENV, environ) or _git(["rev-parse", "HEAD"], root)
        if sha:
            meta["sha"] = sha
        branch = _first_env(_BRANCH_ENV, environ)
        if branch is None:
            branch = _git(["rev-parse", "--abbrev-ref", "HEAD"], root)
            if branch == "HEAD":  # detached: no branch
                branch = None
        if branch:
            meta["branch"] = branch
        meta["python"] = platform.python_version()
        meta["pytest"] = pytest.__version__
        meta["platform"] = platform.platform()
        meta["started_at"] = dt.datetime.now(dt.UTC).strftime("%Y-%m-%dT%H:%M:%SZ")
        image = environ.get("IMAGE_DIGEST", "").strip()
        if image:
            meta["image_digest"] = image
        if self.lockfile_sha256:
            meta["lockfile_sha256"] = self.lockfile_sha256
        lane = environ.get("PROPERTY_LANE", "").strip()
        if lane in PROPERTY_LANES:
            meta["property_lane"] = lane
        elif lane:
            self.config.issue_config_time_warning(
                pytest.PytestConfigWarning(
                    f"PROPERTY_LANE={lane!r} is neither 'pinned' nor 'hunt'; left out of the "
                    "evidence"
                ),
                stacklevel=2,
            )
        if self.ledger_sha256:
            meta["ledger_sha256"] = self.ledger_sha256
        return meta

    # -- enforcing the ledger (where tests run) ---------------------------------------------

    @pytest.hookimpl(tryfirst=True)
    def pytest_runtest_setup(self, item: pytest.Item) -> None:
        freeze = self.skips.get(item.nodeid)
        if freeze is None:
            return
        item.stash[_FROZEN_BY] = freeze.id
        # Reported at the test's own location, as a skip marker would be.
        raise pytest.skip.Exception(freeze_reason(freeze), _use_item_location=True)

    @pytest.hookimpl(wrapper=True, tryfirst=True)
    def pytest_runtest_makereport(
        self, item: pytest.Item, call: pytest.CallInfo[None]
    ) -> Generator[None, pytest.TestReport, pytest.TestReport]:
        report = yield
        if call.when == "setup" and report.skipped and item.stash.get(_FROZEN_BY, None):
            setattr(report, _ATTR_FREEZE, item.stash[_FROZEN_BY])
            return report
        if call.when == "call" and report.passed and hasattr(report, "wasxfail"):
            # pytest's JUnit XML writes an xpass as a plain pass; this property, which it
            # writes from the item's properties, lets a JUnit reader bucket it as xfail too.
            item.user_properties.append((JUNIT_XPASS_PROPERTY, "true"))
            return report
        if not report.failed:
            return report
        candidates = self.signatures.get(item.nodeid, []) if call.when != "teardown" else []
        if not candidates and not self.wants_text:
            return report
        text = report.longreprtext
        signature = failure_signature(item.nodeid, text)
        if self.wants_text:
            setattr(report, _ATTR_LONGREPR, truncate_text(text))
            setattr(report, _ATTR_SIGNATURE, signature)
        for freeze in candidates:
            if freeze.signature == signature:
                report.outcome = "skipped"
                report.wasxfail = f"{freeze_reason(freeze)}: failure signature {signature}"
                setattr(report, _ATTR_FREEZE, freeze.id)
                break
        return report

    # -- collecting evidence (where reports arrive: the controller under xdist) -------------

    def pytest_runtest_logreport(self, report: pytest.TestReport) -> None:
        if self.evidence_path is None or self.is_worker:
            return
        when = report.when if report.when in _PHASES else "call"  # xdist's crash reports
        if not (when == "call" or report.failed or (when == "setup" and report.skipped)):
            return
        self.records.append(self._record(report, when))

    def pytest_collectreport(self, report: pytest.CollectReport) -> None:
        """A module skipped at import (``allow_module_level``) or failing to import has no test
        reports; it gets one record under its own node id, as a skipped or failed setup, so
        its tests do not vanish from the evidence silently (JUnit XML reports them too)."""
        if self.evidence_path is None or self.is_worker or report.passed or not report.nodeid:
            return
        if report.nodeid in self.collect_records:
            return  # under xdist, each worker collects every module
        self.collect_records.add(report.nodeid)
        self.records.append(self._record(report, "setup"))

    def _record(
        self, report: pytest.TestReport | pytest.CollectReport, when: str
    ) -> dict[str, Any]:
        outcome: str = report.outcome
        record: dict[str, Any] = {
            "nodeid": report.nodeid,
            "when": when,
            "outcome": outcome if outcome in _OUTCOMES else "failed",
            "xfail": hasattr(report, "wasxfail"),
        }
        duration = getattr(report, "duration", None)
        if isinstance(duration, int | float):
            record["duration"] = round(float(duration), 6)
        if outcome not in _OUTCOMES:  # e.g. a rerun attempt: a failure the next record follows
            record["reported_outcome"] = outcome
        subtest = subtest_mark(report)
        if subtest is not None:
            record[SUBTEST_FIELD] = subtest
        freeze = getattr(report, _ATTR_FREEZE, None)
        if record["outcome"] == "failed" or (freeze and record["xfail"]):
            text = getattr(report, _ATTR_LONGREPR, None)
            signature = getattr(report, _ATTR_SIGNATURE, None)
            if text is None or signature is None:  # not annotated where it ran (crash, collect)
                full = _failure_text(report)
                text, signature = truncate_text(full), failure_signature(report.nodeid, full)
            record["longrepr"] = text
            record["signature"] = signature
        if freeze:
            record["freeze"] = freeze
        return record

    @pytest.hookimpl(trylast=True)
    def pytest_sessionfinish(self, session: pytest.Session, exitstatus: int) -> None:
        if self.evidence_path is None or self.is_worker:
            return
        meta = dict(self.meta)
        meta["duration"] = round(time.monotonic() - self.started, 3)
        document = {
            "format": FORMAT,
            "exit": int(exitstatus),
            "meta": meta,
            "records": self.records,
        }
        text = json.dumps(document, ensure_ascii=False) + "\n"
        partial = self.evidence_path.with_name(f".{self.evidence_path.name}.{os.getpid()}.tmp")
        try:
            partial.write_bytes(text.encode("utf-8", "replace"))
            os.replace(partial, self.evidence_path)
        except OSError as exc:
            partial.unlink(missing_ok=True)
            self.write_error = f"cannot write evidence to {self.evidence_path} ({exc.strerror})"
            session.exitstatus = pytest.ExitCode.INTERNAL_ERROR

    def pytest_terminal_summary(self, terminalreporter: Any) -> None:
        if self.is_worker:
            return
        for note in self.ledger_notes:
            terminalreporter.write_line(f"freezedebt: {note}", yellow=True)
        if self.evidence_path is None:
            return
        if self.write_error:
            terminalreporter.write_line(f"freezedebt: ERROR: {self.write_error}", red=True)
        else:
            terminalreporter.write_line(
                f"freezedebt: {len(self.records)} evidence records written to {self.evidence_path}"
            )
