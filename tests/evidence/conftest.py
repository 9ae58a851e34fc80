import datetime

import pytest
import time_machine

# The day the report tests are computed on: freezes expire relative to it.
NOON = datetime.datetime(2026, 11, 30, 12, tzinfo=datetime.UTC)


@pytest.fixture
def frozen_today():
    """The clock stopped at NOON (reports take the server's date)."""
    with time_machine.travel(NOON, tick=False):
        yield
