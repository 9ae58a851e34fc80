"""JUnit XML reader.

Each ``testcase`` element is one attempt of its node id and the last one decides (reruns).
One element may hold several results: pytest writes every failed subtest of a test as a
``failure`` of its one ``testcase``, and every skipped one as a ``skipped``. They combine as in
evidence JSON, failed > skipped > xfail > passed. pytest writes an xpass as a plain pass; the
freezedebt plugin, when active, adds the ``freezedebt.xpassed`` property that tells it apart.

Parsed with expat and no document type at all: a file that declares a DTD (the only way to
declare entities, and so to build a "billion laughs" bomb or reach external files) is refused
before any entity is read.
"""

from __future__ import annotations

import re
from typing import Any
from xml.parsers import expat

from .errors import InputError
from .outcomes import (
    DEFAULT_MAX_NODEID_LENGTH,
    DEFAULT_MAX_RECORDS,
    FAILED,
    PASSED,
    RANK,
    SKIPPED,
    XFAIL,
    Evidence,
)

#: The testcase property the freezedebt plugin adds to an xpassed test.
JUNIT_XPASS_PROPERTY = "freezedebt.xpassed"

_CLASS_PART = re.compile(r"^[A-Z_][A-Za-z0-9_]*$")
_MAX_LONGREPR = 4096


class _Refused(Exception):
    pass


def pytest_nodeid(classname: str, name: str, file: str | None) -> str:
    """Map pytest's JUnit ``classname``/``file`` back to its node id.

    pytest writes ``classname="tests.test_a.TestX"`` for ``tests/test_a.py::TestX::test_y``;
    trailing capitalised parts are classes, the rest is the module path.
    """
    parts = classname.split(".") if classname else []
    if not parts and not file and name:
        # A module that failed to import or was skipped whole: pytest names it by its dotted
        # path without ".py" and no classname; its evidence record is the module's node id.
        return name.replace(".", "/") + ".py"
    if file:
        module = file[:-3].replace("/", ".") if file.endswith(".py") else file
        if classname == module or classname.startswith(module + "."):
            classes = classname[len(module) + 1 :].split(".") if classname != module else []
            return "::".join([file, *[c for c in classes if c], name])
        return generic_nodeid(classname, name, file)  # a file pytest's classname does not fit
    cut = len(parts)
    while cut > 1 and _CLASS_PART.match(parts[cut - 1]):
        cut -= 1
    path = "/".join(parts[:cut]) + ".py" if parts else (file or "")
    return "::".join([path, *parts[cut:], name]) if path else name


def generic_nodeid(classname: str, name: str, file: str | None) -> str:
    """``file::classname::name`` for runners other than pytest, leaving out what is absent."""
    return "::".join(part for part in (file, classname, name) if part)


def parse_junit(
    data: bytes,
    *,
    source: str = "junit.xml",
    max_records: int = DEFAULT_MAX_RECORDS,
    max_nodeid_length: int = DEFAULT_MAX_NODEID_LENGTH,
) -> Evidence:
    """Read JUnit XML (one ``testsuite`` or a ``testsuites`` wrapper) into evidence."""
    outcomes: dict[str, str] = {}
    extras: dict[str, dict[str, Any]] = {}
    suite_names: list[str] = []
    state: dict[str, Any] = {"case": None, "depth": 0, "text": None}

    def refuse_dtd(*_: object) -> int:
        raise _Refused("document type declarations (and so entities) are not accepted")

    def start(tag: str, attrs: dict[str, str]) -> None:
        state["depth"] += 1
        if state["depth"] == 1 and tag not in ("testsuites", "testsuite"):
            raise _Refused(f"expected <testsuites> or <testsuite> as the root, got <{tag}>")
        if tag == "testsuite":
            suite_names.append(attrs.get("name", ""))
        elif tag == "testcase":
            name = attrs.get("name")
            if not name:
                raise _Refused("a <testcase> has no name attribute")
            file = attrs.get("file")
            pytest_like = file is not None or bool(suite_names and suite_names[-1] == "pytest")
            build = pytest_nodeid if pytest_like else generic_nodeid
            nodeid = build(attrs.get("classname", ""), name, file)
            if len(nodeid) > max_nodeid_length:
                raise _Refused(f"test id longer than {max_nodeid_length} characters: {nodeid[:80]}")
            duration = attrs.get("time")
            state["case"] = {"nodeid": nodeid, "bucket": PASSED, "duration": duration}
        elif state["case"] is not None and tag in ("failure", "error"):
            state["case"]["bucket"] = FAILED
            state["text"] = [attrs.get("message", "")]
        elif state["case"] is not None and tag == "skipped":
            bucket = XFAIL if attrs.get("type") == "pytest.xfail" else SKIPPED
            if RANK[bucket] > RANK[state["case"]["bucket"]]:
                state["case"]["bucket"] = bucket
        elif (
            state["case"] is not None
            and tag == "property"
            and attrs.get("name") == JUNIT_XPASS_PROPERTY
            and state["case"]["bucket"] == PASSED
        ):
            state["case"]["bucket"] = XFAIL

    def end(tag: str) -> None:
        state["depth"] -= 1
        if tag in ("failure", "error") and state["case"] is not None and state["text"]:
            text = "\n".join(t for t in state["text"] if t).strip()
            state["case"]["longrepr"] = text[:_MAX_LONGREPR]
            state["text"] = None
        elif tag == "testcase" and state["case"] is not None:
            case = state["case"]
            nodeid = case["nodeid"]
            outcomes[nodeid] = case["bucket"]
            extra: dict[str, Any] = {}
            try:
                if case["duration"] is not None:
                    extra["duration"] = float(case["duration"])
            except ValueError:
                pass
            if case.get("longrepr"):
                extra["longrepr"] = case["longrepr"]
            if extra:
                extras[nodeid] = extra
            else:
                extras.pop(nodeid, None)
            if len(outcomes) > max_records:
                raise _Refused(f"more than {max_records} test cases (the limit)")
            state["case"] = None

    def text(chunk: str) -> None:
        if state["text"] is not None and sum(map(len, state["text"])) < _MAX_LONGREPR:
            state["text"].append(chunk)

    parser = expat.ParserCreate()
    parser.StartDoctypeDeclHandler = refuse_dtd
    parser.EntityDeclHandler = refuse_dtd
    parser.ExternalEntityRefHandler = refuse_dtd
    parser.SetParamEntityParsing(expat.XML_PARAM_ENTITY_PARSING_NEVER)
    parser.StartElementHandler = start
    parser.EndElementHandler = end
    parser.CharacterDataHandler = text
    parser.buffer_text = True
    try:
        parser.Parse(data, True)
    except _Refused as exc:
        raise InputError.single(source, f"line {parser.CurrentLineNumber}", str(exc)) from None
    except expat.ExpatError as exc:
        message = expat.errors.messages[exc.code] if exc.code else str(exc)
        raise InputError.single(
            source, f"line {exc.lineno} column {exc.offset + 1}", f"invalid XML: {message}"
        ) from None
    exit_status = 1 if FAILED in outcomes.values() else 0
    return Evidence(exit_status, outcomes, {}, dict(extras), source)
