"""The direct entry-point reader answers exactly as importlib.metadata does, or steps aside."""

from __future__ import annotations

import sys
import zipfile
from pathlib import Path

import pytest

from dlt_ops.plugins import entry_points
from dlt_ops.plugins.manager import (
    GROUP_PREFIX,
    _source_for,
    installed_entry_points,
    installed_sources,
)


def _from_importlib() -> list[object]:
    names: dict[int, tuple[str, str]] = {}
    return [_source_for(ep, names) for ep in installed_entry_points()]


def _dist(site: Path, folder: str, entry_points_txt: str | None, header: str | None) -> None:
    info = site / folder
    info.mkdir(parents=True)
    if entry_points_txt is not None:
        (info / "entry_points.txt").write_text(entry_points_txt)
    if header is not None:
        name = "PKG-INFO" if folder.endswith(".egg-info") else "METADATA"
        (info / name).write_text(header + "\n\nLong description. Name: not-this\n")


def test_the_installed_plugins_read_the_same_both_ways() -> None:
    direct = installed_sources()
    assert len(direct) >= 3  # the three first-party adapters at least
    assert direct == _from_importlib()


def test_a_synthetic_site_reads_the_same_both_ways(
    tmp_path: Path, monkeypatch: pytest.MonkeyPatch
) -> None:
    site = tmp_path / "site"
    _dist(site, "Acme_Plugin-1.2.dist-info",
          "# a comment\n[console_scripts]\nacme = acme:main\n\n"
          "[dlt_ops.destination]\nacme = acme_dlt.plugin\n[dlt_ops.alert_sink]\n"
          "  pager  =  acme_dlt.alerts  \n",
          "Metadata-Version: 2.1\nName: Acme-Plugin\nVersion: 1.2\nSummary: x")  # fmt: skip
    _dist(site, "legacy.egg-info", "[dlt_ops.ledger_sink]\nold = legacy.sink\n",
          "Metadata-Version: 1.0\nName: legacy\nVersion: 0.9")  # fmt: skip
    _dist(site, "bare-0.1.dist-info", "[dlt_ops.destination]\nbare = bare.plugin\n", None)
    _dist(site, "unrelated-3.0.dist-info", "[pytest11]\nx = y\n", "Name: unrelated")
    monkeypatch.setattr(sys, "path", [str(site), str(tmp_path / "absent")])
    direct = installed_sources()
    assert {(s.kind, s.name, s.dist, s.version) for s in direct} == {
        ("destination", "acme", "Acme-Plugin", "1.2"),
        ("alert_sink", "pager", "Acme-Plugin", "1.2"),
        ("ledger_sink", "old", "legacy", "0.9"),
        ("destination", "bare", None, None),
    }
    assert direct == _from_importlib()


def test_an_archive_on_the_path_hands_over_to_importlib(
    tmp_path: Path, monkeypatch: pytest.MonkeyPatch
) -> None:
    archive = tmp_path / "plugins.zip"
    with zipfile.ZipFile(archive, "w") as zf:
        zf.writestr("zipped-1.0.dist-info/entry_points.txt", "[dlt_ops.destination]\nz = z.p\n")
        zf.writestr("zipped-1.0.dist-info/METADATA", "Name: zipped\nVersion: 1.0\n")
    monkeypatch.setattr(sys, "path", [str(archive)])
    assert entry_points.scan(GROUP_PREFIX) is None
    assert [(s.name, s.dist) for s in installed_sources()] == [("z", "zipped")]
    assert entry_points.distribution_version("zipped") == "1.0"


def _importlib_version(name: str) -> str | None:
    from importlib.metadata import PackageNotFoundError, version

    try:
        return version(name)
    except PackageNotFoundError:
        return None


def test_distribution_versions_read_the_same_both_ways(
    tmp_path: Path, monkeypatch: pytest.MonkeyPatch
) -> None:
    for name in ("dlt", "DLT", "duckdb", "typing-extensions", "dltops_core", "no-such-dist"):
        assert entry_points.distribution_version(name) == _importlib_version(name)
    first, second = tmp_path / "first", tmp_path / "second"
    _dist(first, "Acme_Plugin-1.2.dist-info", None, "Name: Acme-Plugin\nVersion: 1.2")
    _dist(second, "acme.plugin-2.0.dist-info", None, "Name: acme.plugin\nVersion: 2.0")
    _dist(second, "legacy.egg-info", None, "Name: legacy\nVersion: 0.9")
    monkeypatch.setattr(sys, "path", [str(first), str(second)])
    for name in ("acme-plugin", "Acme.Plugin", "legacy", "dlt"):
        assert entry_points.distribution_version(name) == _importlib_version(name)
    assert entry_points.distribution_version("acme_plugin") == "1.2"  # the first on the path
    assert entry_points.distribution_version("dlt") is None
