"""Canonical statement parsing and rendering."""

from __future__ import annotations

import pytest

from dlt_ops.adapters import Statement
from dlt_ops.errors import StatementError


def _render(stmt: Statement, style: str = "qmark", n: int | None = None) -> str:
    return stmt.render(
        quote=lambda i: f"<{i}>",
        table=lambda t: f"ds.<{t}>",
        placeholder=lambda i: "%s" if style == "format" else f"${i + 1}",
        escape_text=(lambda s: s.replace("%", "%%")) if style == "format" else (lambda s: s),
        n_params=n,
    )


def test_slots_identifiers_and_params_render() -> None:
    stmt = Statement("UPDATE {runs} SET \"order\" = ? WHERE run_id = ? AND status = 'a?b'")
    assert stmt.param_count == 2
    assert (
        _render(stmt, n=2)
        == "UPDATE ds.<runs> SET <order> = $1 WHERE run_id = $2 AND status = 'a?b'"
    )


def test_literal_percent_is_escaped_only_outside_params() -> None:
    stmt = Statement("SELECT '50%' FROM {t} WHERE x LIKE ?")
    assert _render(stmt, "format", 1) == "SELECT '50%%' FROM ds.<t> WHERE x LIKE %s"


def test_escaped_quote_inside_literal() -> None:
    stmt = Statement("SELECT 'it''s ?' WHERE a = ?")
    assert stmt.param_count == 1


def test_parameter_count_mismatch() -> None:
    with pytest.raises(StatementError, match="expects 2"):
        _render(Statement("SELECT ? + ?"), n=3)


@pytest.mark.parametrize(
    "text",
    ["SELECT 1; DROP TABLE x", "SELECT 1 -- c", "SELECT /* c */ 1", "SELECT `x`", "SELECT 'open"],
)
def test_rejects_what_canonical_sql_forbids(text: str) -> None:
    with pytest.raises(StatementError):
        Statement(text)


def test_dml_detection() -> None:
    assert Statement("  update {t} set a = ?").is_dml
    assert Statement("DELETE FROM {t}").is_dml
    assert not Statement("SELECT 1").is_dml
    assert not Statement("CREATE TABLE x (a BIGINT)").is_dml
