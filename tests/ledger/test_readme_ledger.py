"""The README's ledger example is a ledger: readable, valid, and showing every field."""

import datetime
import re
from pathlib import Path

from freezedebt_ci.hygiene import freeze_problems
from freezedebt_ci.ledger import FIELDS, parse_ledger
from freezedebt_ci.policy import Policy

README = Path(__file__).resolve().parents[2] / "README.md"


def test_the_readme_ledger_example_is_valid_and_names_every_field():
    text = README.read_text(encoding="utf-8")
    blocks = re.findall(r"```toml\n(.*?)```", text, flags=re.S)
    (example,) = [block for block in blocks if "[[freeze]]" in block]
    (freeze,) = parse_ledger(example)
    assert freeze_problems(freeze, Policy()) == []
    assert freeze.is_active(freeze.opened or datetime.date.min)
    keys = set(re.findall(r"^(\w+) =", example, flags=re.M))
    aliases = {"nodeid": "test", "until": "expires"}
    assert {aliases.get(field, field) for field in FIELDS} <= keys
    for alias in aliases:
        assert f"(or: {alias})" in example
