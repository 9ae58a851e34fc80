"""Analyses (``freezedebt-analysis/1``) for the service's tests."""

import datetime

from evidence.demo.analysis import DemoRepository, demo_analyses


def minimal_analysis(**extra):
    """The smallest analysis the schema accepts: nothing changed, nothing found."""
    return {
        "format": "freezedebt-analysis/1",
        "class": "unchanged",
        "complete": True,
        "files": [],
        "symbols": [],
        "cone": [],
        "fixtures": {"lock": None, "missing": [], "mutated": [], "unregistered": []},
        "oracle": {"map": None, "co_modified": [], "unlabeled": []},
        "problems": [],
        **extra,
    }


_built: dict[datetime.date, DemoRepository] = {}


def demo_repository(today: datetime.date) -> DemoRepository:
    """The demo git repository's real analyses (built once per day per test process)."""
    if today not in _built:
        _built[today] = demo_analyses(today=today)
    return _built[today]
