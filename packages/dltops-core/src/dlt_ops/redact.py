"""Secret redaction for every string that leaves the process (errors, logs, ledger rows)."""

from __future__ import annotations

import re
import threading

# The scheme starts where a word does: tried at every offset of a long word, the scan to its
# end made one 10 KB token cost ~0.16 s (quadratic).
# The password runs to the *last* ``@`` of the word: an unencoded ``@`` inside it
# (``u:p@ss@host``) would otherwise leave its tail (``ss``) in the clear. Masking too much of a
# URL with a later ``@`` (in a query) is the safe side.
_URL_PASSWORD = re.compile(
    r"(?P<scheme>(?<![a-zA-Z0-9+.-])[a-zA-Z][a-zA-Z0-9+.-]*://)(?P<user>[^:/@\s]*):"
    r"(?P<pw>\S+?)@(?=[^@\s]*(?:\s|$))"
)
# A secret-ish key, also as the tail of a longer name (client_secret, access_token,
# X-API-Key), then = or :, then a quoted value (spaces and all) or a bare one.
_KEY_VALUE = re.compile(
    r"(?P<key>(?<![\w-])(?:[\w-]*?[_-])?"
    r"(?:password|passwd|pwd|secret(?:[_-]?key)?|token|api[_-]?key|private[_-]?key"
    r"|access[_-]?key)(?![\w-])['\"]?\s*[=:]\s*)"
    r"(?:(?P<q>['\"])[^'\"\n]*(?P=q)|[^'\"\s,;}]+)",
    re.IGNORECASE,
)
_BEARER = re.compile(r"\b(?P<scheme>Bearer)\s+[A-Za-z0-9._~+/=-]+")
_known: set[str] = set()
_lock = threading.Lock()
MASK = "***"
#: Shorter values are not masked: they would mangle ordinary words in every message.
MIN_SECRET_LENGTH = 4


def remember_secret(value: object) -> None:
    """Mask ``value`` wherever it appears from now on (resolved passwords, tokens)."""
    if isinstance(value, str) and len(value) >= MIN_SECRET_LENGTH:
        with _lock:
            _known.add(value)


def redact(text: str) -> str:
    """Replace passwords in URLs, ``password=...``-style pairs, bearer tokens and remembered
    secrets with ``***``."""
    text = _URL_PASSWORD.sub(lambda m: f"{m['scheme']}{m['user']}:{MASK}@", text)
    text = _BEARER.sub(lambda m: f"{m['scheme']} {MASK}", text)
    text = _KEY_VALUE.sub(lambda m: f"{m['key']}{m['q'] or ''}{MASK}{m['q'] or ''}", text)
    with _lock:
        secrets = sorted(_known, key=len, reverse=True)
    for secret in secrets:
        text = text.replace(secret, MASK)
    return text
