"""Running test work in threads at the same moment, each on its own database connection."""

import threading
from collections.abc import Callable
from typing import Any

import pytest
from django.conf import settings

ON_POSTGRESQL = settings.DATABASES["default"]["ENGINE"].endswith("postgresql")


def races_need_postgresql(what: str) -> pytest.MarkDecorator:
    """Skips a test of ``what`` racing on SQLite, which serialises every writer."""
    return pytest.mark.skipif(
        not ON_POSTGRESQL,
        reason=f"SQLite serialises every writer, so {what} cannot race there; "
        "run with DATABASE_URL=postgres://…",
    )


def at_once(*works: Callable[[], Any], timeout: float = 60) -> list[Any]:
    """Run each callable in its own thread, all released together by a barrier; return their
    results in order. Re-raises the first failure; each thread closes its connection."""
    barrier = threading.Barrier(len(works))
    results: list[Any] = [None] * len(works)
    failures: list[BaseException] = []

    def body(index: int, work: Callable[[], Any]) -> None:
        from django.db import connection

        try:
            barrier.wait()
            results[index] = work()
        except BaseException as error:
            failures.append(error)
        finally:
            connection.close()

    threads = [threading.Thread(target=body, args=item) for item in enumerate(works)]
    for thread in threads:
        thread.start()
    for thread in threads:
        thread.join(timeout=timeout)
    if any(thread.is_alive() for thread in threads):
        raise TimeoutError(f"threads still running after {timeout} s")
    if failures:
        raise failures[0]
    return results
