"""Phase 1: layout conventions, AST facts, independence from cwd and parent folder names."""

from __future__ import annotations

import sys
from pathlib import Path

from dlt_ops.project import discover

SOURCE = """
import dlt
from ..resource.shared import shared

@dlt.source(name="alpha")
def alpha_source():
    return own, shared

@dlt.resource(name="own", columns=Model)
def own():
    yield {}
"""
SHARED = """
import dlt

@dlt.resource
def shared():
    yield {}
"""


def test_finds_sources_and_static_resources(make_project) -> None:
    root = make_project({"p/source/alpha.py": SOURCE, "p/resource/shared.py": SHARED})
    project = discover(root)
    info = project.source("alpha")
    assert info.pipeline == "p"
    assert info.function_name == "alpha_source"
    assert info.explicit_name == "alpha"
    assert info.static_resources == ("own", "shared")
    assert info.module_path == root / "p" / "source" / "alpha.py"


def test_layout_rejections(make_project) -> None:
    root = make_project(
        {
            "_private/source/a.py": SOURCE,
            ".hidden/source/a.py": SOURCE,
            "nosrc/resource/r.py": SHARED,
            "empty/source/_helper.py": SOURCE,
            "ok/source/alpha.py": SOURCE,
        }
    )
    project = discover(root)
    assert [p.name for p in project.pipelines] == ["ok"]
    assert dict(project.rejected_dirs)["nosrc"] == "no source/ directory"


def test_aliases_are_followed(make_project) -> None:
    src = """
    import dlt as d
    from dlt import resource as res
    from dlt.sources import incremental

    @d.source
    def beta_source():
        return r()

    @res(name="r", schema_contract={"columns": "evolve"})
    def r(updated=incremental("updated_at")):
        yield {}
    """
    project = discover(make_project({"p/source/beta.py": src}))
    info = project.source("beta")
    assert info.explicit_name is None
    facts = project.pipeline("p").source_modules[0]
    assert facts.incrementals[0].cursor == "updated_at"
    assert facts.contracts[0].value == {"columns": "evolve"}


def test_unparseable_module_is_recorded(make_project) -> None:
    project = discover(make_project({"p/source/bad.py": "def (:\n"}))
    assert project.sources == {}
    assert "SyntaxError" in project.unloadable[0].error


def test_tests_folder_above_root_changes_nothing(make_project, tmp_path: Path) -> None:
    files = {"p/source/alpha.py": SOURCE, "p/resource/shared.py": SHARED}
    plain = discover(make_project(files, root=tmp_path / "a" / "proj"))
    under_tests = discover(make_project(files, root=tmp_path / "tests" / "proj"))
    assert plain.sources.keys() == under_tests.sources.keys()

    def facts(project):
        return [
            [(r.name, r.lineno, r.columns) for r in m.resources]
            for m in project.pipeline("p").modules()
        ]

    assert facts(plain) == facts(under_tests) != []


def test_result_does_not_depend_on_cwd(make_project, monkeypatch) -> None:
    root = make_project({"p/source/alpha.py": SOURCE})
    monkeypatch.chdir(root / "p")
    from_sub = discover(root)
    monkeypatch.chdir("/")
    assert discover(root) == from_sub


def test_phase1_imports_neither_dlt_nor_project(make_project) -> None:
    import subprocess

    root = make_project({"p/source/alpha.py": "import dlt\nraise SystemExit('imported!')\n"})
    code = (
        "import sys; from dlt_ops.project import discover; from pathlib import Path;"
        f"discover(Path({str(root)!r}));"
        "assert 'dlt' not in sys.modules, 'dlt imported'; print('ok')"
    )
    out = subprocess.run([sys.executable, "-c", code], capture_output=True, text=True)
    assert out.stdout.strip().splitlines()[-1] == "ok", out.stderr


def test_duplicate_source_names_are_reported(make_project) -> None:
    import pytest

    from dlt_ops.errors import DuplicateSourceError

    root = make_project({"p/source/alpha.py": SOURCE, "q/source/alpha.py": SOURCE})
    project = discover(root)
    assert project.duplicates[0][0] == "alpha"
    with pytest.raises(DuplicateSourceError):
        project.source("alpha")


def test_link_loops_and_dangling_links_are_skipped_not_raised(make_project) -> None:
    """The listing takes file types from the directory entries: a link loop or a dangling
    link, in the root or among the modules, is neither a pipeline nor a module (as with
    ``Path.is_dir``/``is_file``), and the rest is discovered."""
    root = make_project({"p/source/alpha.py": SOURCE})
    (root / "loop_a").symlink_to("loop_b")
    (root / "loop_b").symlink_to("loop_a")
    (root / "gone").symlink_to("nowhere")
    (root / "p" / "source" / "x.py").symlink_to("y.py")
    (root / "p" / "source" / "y.py").symlink_to("x.py")
    (root / "p" / "source" / "dead.py").symlink_to("missing.py")
    project = discover(root)
    assert sorted(project.sources) == ["alpha"]
    assert [m.path.name for m in project.pipelines[0].source_modules] == ["alpha.py"]
    assert not any(name.startswith(("loop", "gone")) for name, _ in project.rejected_dirs)
