import pytest
from django.core.exceptions import ImproperlyConfigured

from config.env import env_bool, env_int, env_is_set, env_list, env_str

NAME = "FREEZEDEBT_TEST_VARIABLE"


@pytest.fixture(autouse=True)
def _clean(monkeypatch):
    monkeypatch.delenv(NAME, raising=False)
    monkeypatch.delenv(f"{NAME}_FILE", raising=False)


@pytest.mark.parametrize(
    ("text", "expected"),
    [
        ("true", True),
        ("TRUE", True),
        ("1", True),
        ("yes", True),
        (" Yes ", True),
        ("false", False),
        ("False", False),
        ("0", False),
        ("no", False),
    ],
)
def test_bool_accepts_the_six_spellings_in_any_case(monkeypatch, text, expected):
    monkeypatch.setenv(NAME, text)
    assert env_bool(NAME, default=not expected) is expected


@pytest.mark.parametrize("text", ["on", "off", "y", "n", "2", "treu", "enabled"])
def test_bool_refuses_anything_else_naming_the_variable(monkeypatch, text):
    monkeypatch.setenv(NAME, text)
    with pytest.raises(ImproperlyConfigured, match=NAME):
        env_bool(NAME, default=False)


def test_bool_uses_the_default_when_unset_or_blank(monkeypatch):
    assert env_bool(NAME, default=True) is True
    monkeypatch.setenv(NAME, "  ")
    assert env_bool(NAME, default=False) is False


def test_required_variable_missing_is_a_configuration_error():
    for reader in (env_str, env_bool, env_int, env_list):
        with pytest.raises(ImproperlyConfigured, match=f"{NAME} .*must be set"):
            reader(NAME)


def test_empty_string_counts_as_unset(monkeypatch):
    monkeypatch.setenv(NAME, "")
    assert env_str(NAME, default="fallback") == "fallback"
    assert env_str(NAME, default=None) is None
    with pytest.raises(ImproperlyConfigured):
        env_str(NAME)


def test_file_variant_reads_the_file_without_its_trailing_newline(monkeypatch, tmp_path):
    secret = tmp_path / "secret"
    secret.write_text("s3cr3t value\n", encoding="utf-8")
    monkeypatch.setenv(f"{NAME}_FILE", str(secret))
    assert env_is_set(NAME)
    assert env_str(NAME) == "s3cr3t value"


def test_file_variant_works_for_every_type(monkeypatch, tmp_path):
    path = tmp_path / "value"
    monkeypatch.setenv(f"{NAME}_FILE", str(path))
    path.write_text("42\n")
    assert env_int(NAME) == 42
    path.write_text("yes")
    assert env_bool(NAME) is True
    path.write_text("a, b")
    assert env_list(NAME) == ["a", "b"]


def test_value_and_file_variant_together_are_refused(monkeypatch, tmp_path):
    path = tmp_path / "value"
    path.write_text("from file")
    monkeypatch.setenv(NAME, "direct")
    monkeypatch.setenv(f"{NAME}_FILE", str(path))
    with pytest.raises(ImproperlyConfigured, match="not both"):
        env_str(NAME)


def test_unreadable_file_variant_is_a_configuration_error(monkeypatch, tmp_path):
    monkeypatch.setenv(f"{NAME}_FILE", str(tmp_path / "missing"))
    with pytest.raises(ImproperlyConfigured, match=f"{NAME}_FILE"):
        env_str(NAME)


def test_int_parses_decimal_with_underscores(monkeypatch):
    monkeypatch.setenv(NAME, "64_000")
    assert env_int(NAME, default=1) == 64_000


@pytest.mark.parametrize("text", ["ten", "1.5", "0x10", "1e6"])
def test_int_refuses_non_integers(monkeypatch, text):
    monkeypatch.setenv(NAME, text)
    with pytest.raises(ImproperlyConfigured, match="not an integer"):
        env_int(NAME, default=1)


def test_int_bounds_are_enforced_on_values_and_defaults(monkeypatch):
    monkeypatch.setenv(NAME, "0")
    with pytest.raises(ImproperlyConfigured, match="below the minimum 1"):
        env_int(NAME, default=5, min_value=1)
    monkeypatch.setenv(NAME, "70000")
    with pytest.raises(ImproperlyConfigured, match="above the maximum 65535"):
        env_int(NAME, default=5, max_value=65535)
    monkeypatch.delenv(NAME)
    assert env_int(NAME, default=5, min_value=1, max_value=10) == 5


def test_list_splits_on_commas_and_drops_blanks(monkeypatch):
    monkeypatch.setenv(NAME, " a.example.com, ,b.example.com ,")
    assert env_list(NAME) == ["a.example.com", "b.example.com"]


def test_list_default_is_a_copy():
    default = ["x"]
    value = env_list(NAME, default=default)
    value.append("y")
    assert default == ["x"]
