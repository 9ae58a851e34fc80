"""Changed paths (SPEC 4.4): ``git diff --name-status -M`` output and the API's objects."""

from __future__ import annotations

import pytest

from freezedebt_ci.changes import (
    Change,
    changes_from_objects,
    parse_name_status,
    touched_paths,
)
from freezedebt_ci.errors import InputError


def bad(text: str) -> InputError:
    with pytest.raises(InputError) as info:
        parse_name_status(text, source="changed.txt")
    return info.value


def test_every_status_is_read() -> None:
    text = (
        "A\tsrc/new.py\n"
        "M\tsrc/pricing/rounding.py\n"
        "D\tsrc/old.py\n"
        "T\tscripts/run\n"
        "R087\tsrc/a.py\tsrc/b.py\n"
        "C075\tsrc/c.py\tsrc/d.py\n"
    )
    assert parse_name_status(text) == sorted(
        [
            Change("src/new.py", "A"),
            Change("src/pricing/rounding.py", "M"),
            Change("src/old.py", "D"),
            Change("scripts/run", "T"),
            Change("src/b.py", "R", "src/a.py"),
            Change("src/d.py", "C", "src/c.py"),
        ]
    )


def test_rename_touches_both_sides() -> None:
    changes = parse_name_status("R100\tsrc/pricing/rounding.py\tsrc/pricing/round.py\n")
    assert touched_paths(changes) == {"src/pricing/rounding.py", "src/pricing/round.py"}


def test_copy_touches_only_the_new_path() -> None:
    changes = parse_name_status("C090\tsrc/pricing/rounding.py\tsrc/pricing/copy.py\n")
    assert touched_paths(changes) == {"src/pricing/copy.py"}


def test_quoted_paths_are_unquoted() -> None:
    text = 'M\t"src/caf\\303\\251.py"\nA\t"docs/a \\"b\\".md"\nR100\t"x\\ty.py"\tz.py\n'
    changes = parse_name_status(text)
    assert touched_paths(changes) == {"src/café.py", 'docs/a "b".md', "x\ty.py", "z.py"}


def test_name_only_lines_and_blank_lines() -> None:
    changes = parse_name_status("src/a.py\n\n  \n./src/b.py\n")
    assert changes == [Change("src/a.py"), Change("src/b.py")]


def test_backslashes_become_forward_slashes() -> None:
    assert parse_name_status("M\tsrc\\win\\a.py") == [Change("src/win/a.py")]


def test_duplicates_collapse_and_output_is_sorted() -> None:
    changes = parse_name_status("M\tb.py\nM\ta.py\nM\tb.py\n")
    assert changes == [Change("a.py"), Change("b.py")]


def test_crlf_line_endings_are_accepted() -> None:
    assert parse_name_status("M\ta.py\r\nA\tb.py\r\n") == [Change("a.py"), Change("b.py", "A")]


@pytest.mark.parametrize("status", ["X", "MM", "R1000", "r100", "?"])
def test_bad_status_is_refused_with_its_line(status: str) -> None:
    error = bad(f"M\tok.py\n{status}\tsrc/a.py\n")
    assert error.source == "changed.txt"
    assert error.problems[0].where == "line 2"
    assert "A, M, D, T, R### or C###" in error.problems[0].message


def test_rename_with_one_path_is_refused() -> None:
    error = bad("R100\tsrc/a.py\n")
    assert error.problems[0].where == "line 1"
    assert "takes 2 path(s), got 1" in error.problems[0].message


def test_modify_with_two_paths_is_refused() -> None:
    assert "takes 1 path(s), got 2" in bad("M\ta.py\tb.py\n").problems[0].message


@pytest.mark.parametrize("path", ["/etc/passwd", "../outside.py", "src/../../x.py"])
def test_paths_leaving_the_repository_are_refused(path: str) -> None:
    error = bad(f"M\t{path}\n")
    assert error.problems[0].where == "line 1"
    assert "repo-relative" in error.problems[0].message


def test_objects_in_the_api_form() -> None:
    changes = changes_from_objects(
        [
            {"path": "src/a.py"},
            {"status": "R100", "path": "src/new.py", "old_path": "src/old.py"},
            "D\tsrc/gone.py",
        ]
    )
    assert changes == [
        Change("src/a.py"),
        Change("src/gone.py", "D"),
        Change("src/new.py", "R", "src/old.py"),
    ]
    assert Change("src/new.py", "R", "src/old.py").as_dict() == {
        "status": "R",
        "path": "src/new.py",
        "old_path": "src/old.py",
    }


def test_bad_objects_name_their_index() -> None:
    with pytest.raises(InputError) as info:
        changes_from_objects(
            [
                7,
                {"path": 3},
                {"path": "a.py", "status": "Q"},
                {"path": "a.py", "status": "R"},
                {"path": "/abs.py"},
            ],
            source="changed",
        )
    assert [p.where for p in info.value.problems] == [
        "$[0]",
        "$[1]",
        "$[2].status",
        "$[3].old_path",
        "$[4].path",
    ]


def test_bad_line_inside_objects_names_the_source() -> None:
    with pytest.raises(InputError) as info:
        changes_from_objects(["M\ta.py", "Z\tb.py"], source="patch.changed")
    assert info.value.source == "patch.changed"
    assert info.value.problems[0].where == "line 2"


def test_status_lines_with_spaces_instead_of_tabs_are_read() -> None:
    changes = parse_name_status("M  src/a.py\nR100 old/b.py new/b.py\n")
    assert changes == [Change("new/b.py", "R", "old/b.py"), Change("src/a.py", "M")]
