"""``dlt-ops plugins new KIND NAME``: a separately installable plugin distribution.

What is written, under ``<dir>/dltops-<name>/``: ``pyproject.toml`` (the distribution
``dltops-<name>``, its entry point in the kind's ``dlt_ops.<kind>`` group), ``src/<pkg>/`` (the
implementation module and ``plugin.py``, the hook module the entry point names), a test module
in ``tests/`` that subclasses the kind's kit (commands and config keys, which have no kit, are
driven through dlt-ops itself) and a README. Its tests pass as written.
"""

from __future__ import annotations

import re
from dataclasses import dataclass
from pathlib import Path
from string import Template

from dlt_ops import __version__
from dlt_ops.errors import UsageError
from dlt_ops.scaffold.templates import TEMPLATES

_NAME = re.compile(r"[a-z][a-z0-9_]{0,40}")

PYPROJECT = """[project]
name = "$dist"
version = "0.1.0"
description = "dlt-ops plugin: $summary."
readme = "README.md"
requires-python = ">=3.11"
dependencies = ["dltops-core>=$core_floor"]

[project.optional-dependencies]
test = ["dltops-core[testing]>=$core_floor"]

[project.entry-points."dlt_ops.$kind"]
$name = "$pkg.plugin"

[build-system]
requires = ["hatchling>=1.25"]
build-backend = "hatchling.build"

[tool.hatch.build.targets.wheel]
packages = ["src/$pkg"]

[tool.pytest.ini_options]
testpaths = ["tests"]
addopts = "--import-mode=importlib"
"""

README = """# $dist

A dlt-ops plugin (kind `$kind`): $summary.

Written by `dlt-ops plugins new $kind $name`. The entry point in `pyproject.toml`
(`[project.entry-points."dlt_ops.$kind"]`, name `$name`) names `$pkg.plugin`,
the module of hooks; the work is in `src/$pkg/$module.py`.

## Use it

```sh
pip install -e .
dlt-ops plugins doctor        # lists $name under $kind
```

```text
$usage
```

## Test it

```sh
pip install -e ".[test]"
pytest
```

`tests/test_$pkg.py` $test_note.
After changing the entry points, reinstall so the metadata is rewritten.
See dlt-ops' docs/hooks.md and docs/plugins.md.
"""


@dataclass(frozen=True)
class Scaffold:
    """A written plugin: where it is and what it holds."""

    root: Path
    dist: str
    package: str
    files: tuple[Path, ...]


def names_for(name: str) -> dict[str, str]:
    """The distribution, package and class names of plugin ``name``."""
    return {
        "name": name,
        "dist": "dltops-" + name.replace("_", "-"),
        "pkg": "dltops_" + name,
        "cls": "".join(part.title() for part in name.split("_")),
        "func": name,
        "upper": name.upper(),
    }


def render(kind: str, name: str) -> dict[str, str]:
    """Relative path -> text of the distribution for plugin ``name`` of ``kind``."""
    if kind not in TEMPLATES:
        raise UsageError(f"unknown plugin kind '{kind}'; kinds: {', '.join(TEMPLATES)}.")
    if not _NAME.fullmatch(name):
        raise UsageError(
            f"plugin name {name!r} must be lowercase letters, digits and underscores, starting "
            "with a letter (it becomes the entry point, the package dltops_<name> and, for a "
            "destination, the engine name)."
        )
    t = TEMPLATES[kind]
    values = names_for(name)
    major, minor = __version__.split(".")[:2]
    kit = "subclasses the dlt-ops kit for the kind" if kind not in ("command", "config_key") \
        else "drives the plugin through dlt-ops itself (the kind has no kit)"  # fmt: skip
    values.update(kind=kind, summary=t.summary, module=t.module, core_floor=f"{major}.{minor}",
                  test_note=kit)  # fmt: skip
    values["summary"] = Template(t.summary).substitute(values)
    values["usage"] = Template(t.usage).substitute(values)
    pkg = values["pkg"]
    files = {
        "pyproject.toml": PYPROJECT,
        "README.md": README,
        f"src/{pkg}/__init__.py": '"""$dist: $summary."""\n',
        f"src/{pkg}/py.typed": "",
        f"src/{pkg}/plugin.py": t.hook,
        f"src/{pkg}/{t.module}.py": t.implementation,
        f"tests/test_{pkg}.py": t.test,
    }
    return {rel: Template(text).substitute(values) for rel, text in files.items()}


def write_plugin(kind: str, name: str, where: Path) -> Scaffold:
    """Write plugin ``name`` of ``kind`` to ``where/dltops-<name>``; refuses a folder that
    exists (nothing is overwritten)."""
    rendered = render(kind, name)
    values = names_for(name)
    root = where / values["dist"]
    if root.exists():
        raise UsageError(f"{root} already exists; remove it or pass another --dir.")
    written = []
    for rel, text in rendered.items():
        path = root / rel
        path.parent.mkdir(parents=True, exist_ok=True)
        path.write_text(text, encoding="utf-8")
        written.append(path)
    return Scaffold(root, values["dist"], values["pkg"], tuple(written))
