"""Job kinds are found by registration (entry points) or by a space's import path."""

from __future__ import annotations

import pytest

from epcg.runtime.errors import UserError
from epcg.runtime.jobs import validate
from epcg.runtime.registry import job_kind, kind_of, known_kinds, load_object


def test_built_in_kinds_are_registered_as_entry_points():
    assert {"witness", "fling", "dwp"} <= set(known_kinds())
    from epcg.games.fling.kind import FlingKind

    assert type(job_kind("fling")) is FlingKind and job_kind("fling").name == "fling"


@pytest.mark.parametrize(
    ("path", "message"),
    [
        ("no_such_module_xyz:SPACE", "cannot import 'no_such_module_xyz'"),
        ("math:no_such_name", "has no attribute 'no_such_name'"),
        ("math", "not an import path"),
    ],
)
def test_import_paths_that_do_not_resolve_name_the_problem(path, message):
    with pytest.raises(UserError, match=message):
        load_object(path)


def test_an_object_without_an_algorithm_is_not_a_space():
    with pytest.raises(UserError, match="is not an epcg space"):
        kind_of({"name": "x", "space": "math:pi"})


def test_unknown_domain_lists_the_known_ones():
    with pytest.raises(UserError, match="'domain' must be one of .*fling.*got 'chess'"):
        validate({"name": "x", "domain": "chess"})


def test_an_unknown_domain_close_to_a_known_one_names_it():
    with pytest.raises(UserError, match="got 'witnes' \\(did you mean 'witness'\\?"):
        validate({"name": "x", "domain": "witnes"})
