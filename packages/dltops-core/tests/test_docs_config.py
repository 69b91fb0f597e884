"""Every config key the loader accepts is documented: an undocumented key does not exist."""

from __future__ import annotations

from pathlib import Path

from dlt_ops.config.schema import PROJECT_KEYS, SOURCE_KEYS

DOC = Path(__file__).resolve().parents[3] / "docs" / "configuration.md"


def _section(text: str, heading: str) -> str:
    start = text.index(heading)
    end = text.find("\n## ", start + 1)
    return text[start : end if end > 0 else None]


def test_every_project_key_is_documented() -> None:
    section = _section(DOC.read_text(), "## `[dlt_ops]`")
    missing = [k for k in PROJECT_KEYS if f"| `{k}` |" not in section]
    assert missing == []


def test_every_source_key_is_documented() -> None:
    section = _section(DOC.read_text(), "## `[sources.<X>.dlt_ops]`")
    missing = [k for k in SOURCE_KEYS if f"| `{k}` |" not in section]
    assert missing == []
