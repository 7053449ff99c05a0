"""The suite's own scheduling (tests/conftest.py): the modules said to run no model exist, and a test
is put with the model tests by its module."""

from __future__ import annotations

from pathlib import Path

from tests.conftest import MODEL_FREE_MODULES, runs_a_model

E2E = Path(__file__).parents[1] / "e2e"


def test_every_model_free_module_exists() -> None:
    assert {p.stem for p in E2E.glob("test_*.py")} >= MODEL_FREE_MODULES


def test_a_test_runs_a_model_unless_its_module_is_named_or_it_is_a_unit_test() -> None:
    assert runs_a_model("tests/e2e/test_memory.py::test_x")
    assert runs_a_model("tests/browser/test_app_in_browser.py::test_y[a::b]")
    assert not runs_a_model("tests/e2e/test_kill_points.py::test_z[embedded-parsing]")
    assert not runs_a_model("tests/unit/test_router.py::test_w")
