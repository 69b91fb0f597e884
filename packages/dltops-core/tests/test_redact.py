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


def test_prefixed_secret_keys_are_masked() -> None:
    # dlt's and OAuth's own names: the key word is the tail of a longer identifier
    text = "client_secret=cs-77aa access_token: 'at.88bb' refresh_token=rt99 x_api_key=k-1234"
    masked = redact(text)
    for value in ("cs-77aa", "at.88bb", "rt99", "k-1234"):
        assert value not in masked, masked
    assert masked.startswith("client_secret=*** access_token: '***'")


def test_quoted_values_with_spaces_are_masked_whole() -> None:
    assert redact("password='correct horse battery'") == "password='***'"
    assert redact('{"secret": "two words", "port": 5}') == '{"secret": "***", "port": 5}'


def test_bearer_and_header_credentials_are_masked() -> None:
    masked = redact("401 for url; headers={'Authorization': 'Bearer eyJhbGciOi.abc.def'}")
    assert "eyJhbGciOi" not in masked and "Bearer ***" in masked
    assert "k3y-555" not in redact("X-API-Key: k3y-555 rejected")


def test_ordinary_words_survive() -> None:
    text = "the token count is 5; passwords must be rotated; max tokens reached"
    assert redact(text) == text
