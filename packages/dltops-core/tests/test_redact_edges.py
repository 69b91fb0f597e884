"""Redaction at its edges: what exactly is masked, what is kept, and in which order."""

from __future__ import annotations

import uuid

import pytest

from dlt_ops.redact import MASK, MIN_SECRET_LENGTH, redact, remember_secret


def _fresh(length: int) -> str:
    return uuid.uuid4().hex[:length]


def test_the_shortest_remembered_secret_is_four_characters() -> None:
    assert MIN_SECRET_LENGTH == 4
    four, three = _fresh(4), _fresh(3)
    remember_secret(four)
    remember_secret(three)
    remember_secret(12345678)  # not a string: nothing to mask
    assert redact(f"a {four} b") == f"a {MASK} b"
    assert redact(f"a {three} b") == f"a {three} b"
    assert redact("a 12345678 b") == "a 12345678 b"


def test_a_longer_secret_is_masked_whole_before_a_shorter_one_inside_it() -> None:
    short = f"zz{_fresh(8)}"
    long = f"aa-{short}"  # sorts before the short one by text, after it by length
    remember_secret(short)
    remember_secret(long)
    assert redact(f"x {long} y") == f"x {MASK} y"
    assert redact(f"x {short} y") == f"x {MASK} y"


@pytest.mark.parametrize(
    ("text", "expected"),
    [
        ("password=hunter2x, next", "password=***, next"),
        ('password="a b c" rest', 'password="***" rest'),
        ("secret_key: 'q w e'", "secret_key: '***'"),
        ("X-API-Key: abc123", "X-API-Key: ***"),
        ("client_secret=abc;x", "client_secret=***;x"),
        ("{token=abc}", "{token=***}"),
        ("PRIVATE_KEY = zzz", "PRIVATE_KEY = ***"),
        ("access-key:zzz", "access-key:***"),
        ("tokens are fine, keys too", "tokens are fine, keys too"),
        ("monkey=banana", "monkey=banana"),
    ],
)
def test_key_value_pairs(text: str, expected: str) -> None:
    assert redact(text) == expected


@pytest.mark.parametrize(
    ("text", "expected"),
    [
        ("postgresql://app:pw1@db:5432/x", "postgresql://app:***@db:5432/x"),
        ("see mssql+pyodbc://u:p%40ss@h/x", "see mssql+pyodbc://u:***@h/x"),
        ("duckdb:///local/path.duckdb", "duckdb:///local/path.duckdb"),
        ("https://example.com/a:b", "https://example.com/a:b"),
        ("Authorization: Bearer abc.DEF-123=", "Authorization: Bearer ***"),
        ("a Bearer  tok_1 b", "a Bearer *** b"),
    ],
)
def test_urls_and_bearer_tokens(text: str, expected: str) -> None:
    assert redact(text) == expected


def test_a_url_password_with_an_unencoded_at_sign_is_masked_whole() -> None:
    from dlt_ops.redact import redact

    assert redact("postgresql://loader:p@ss@db.internal:5432/analytics") == (
        "postgresql://loader:***@db.internal:5432/analytics"
    )
    assert "ss@" not in redact("failed: postgresql://u:se@cr@et@h/db (timeout)")
