"""Secret redaction for every string that leaves the process (errors, logs, ledger rows)."""

from __future__ import annotations

import re
import threading

_URL_PASSWORD = re.compile(
    r"(?P<scheme>[a-zA-Z][a-zA-Z0-9+.-]*://)(?P<user>[^:/@\s]*):(?P<pw>[^@\s]+)@"
)
_KEY_VALUE = re.compile(
    r"(?P<key>\b(?:password|passwd|pwd|secret|token|api_key|private_key)\b['\"]?\s*[=:]\s*)"
    r"(?P<q>['\"]?)(?P<val>[^'\"\s,;}]+)(?P=q)",
    re.IGNORECASE,
)
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
    """Replace passwords in URLs, ``password=...`` pairs and remembered secrets with ``***``."""
    text = _URL_PASSWORD.sub(lambda m: f"{m['scheme']}{m['user']}:{MASK}@", text)
    text = _KEY_VALUE.sub(lambda m: f"{m['key']}{m['q']}{MASK}{m['q']}", text)
    with _lock:
        secrets = sorted(_known, key=len, reverse=True)
    for secret in secrets:
        text = text.replace(secret, MASK)
    return text
