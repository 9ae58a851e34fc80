"""The image holds every package the service imports: a package left out of the Dockerfile's
COPY lines passes every test here and fails only once the image starts."""

import re
from pathlib import Path

ROOT = Path(__file__).resolve().parent.parent
# Top-level folders that are no part of the running service.
NOT_SERVED = {"tests", "bench", "client", "scripts", "docs", "requirements", "staticfiles"}


def test_the_image_copies_every_top_level_package():
    packages = {
        path.parent.name
        for path in ROOT.glob("*/__init__.py")
        if path.parent.name not in NOT_SERVED and not path.parent.name.startswith(".")
    }
    copied = set(re.findall(r"^COPY\b.*?\s(\w+)/ \1/$", (ROOT / "Dockerfile").read_text(), re.M))
    assert packages <= copied, f"not copied into the image: {sorted(packages - copied)}"
    assert {"config", "evidence", "ledger", "dashboards"} <= packages
