"""The acme_module_docstring rule: a source module says what it loads."""

from __future__ import annotations

import ast
from collections.abc import Iterator

from dlt_ops.plugin_api import Finding, ValidationContext


class AcmeModuleDocstring:
    """A ``ValidationRule``: one finding per source whose module has no docstring."""

    id = "acme_module_docstring"
    description = "Every source module starts with a docstring saying what it loads."
    default_on = True

    def check(self, ctx: ValidationContext) -> Iterator[Finding]:
        for source in ctx.sources():
            tree = ast.parse(source.module_path.read_text(encoding="utf-8"))
            if not ast.get_docstring(tree):
                yield Finding(source.name, "module",
                              f"{ctx.rel(source.module_path)} has no docstring: say what it loads")
