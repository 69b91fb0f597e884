from __future__ import annotations

from dlt_ops.redact import redact, remember_secret


def test_url_password_is_masked() -> None:
    text = "could not connect to postgresql://loader:s3cr3t!@db.example:5432/warehouse"
    assert redact(text) == "could not connect to postgresql://loader:***@db.example:5432/warehouse"


def test_key_value_passwords_are_masked() -> None:
    assert redact("host=x password=hunter22 port=5") == "host=x password=*** port=5"
    assert redact("{'password': 'hunter22'}") == "{'password': '***'}"


def test_remembered_secrets_are_masked_anywhere() -> None:
    remember_secret("tok-9f8e7d6c")
    assert redact("bad token tok-9f8e7d6c in header") == "bad token *** in header"


def test_short_values_are_not_remembered() -> None:
    remember_secret("ab")
    assert redact("abc") == "abc"
