"""A plugin adds a command (kind ``command``): ``--help`` lists it from metadata without
importing it, it runs with dlt-ops' global options and error handling, and it never replaces a
built-in command."""

from __future__ import annotations

from pathlib import Path

from tests.conftest import imported_modules
from tests.plugin_site import install_plugin, site_env

HELLO = '''
from typing import Annotated

import typer

import dlt_ops
from dlt_ops.errors import UsageError


def hello(
    ctx: typer.Context,
    who: Annotated[str, typer.Option("--who", help="Whom to greet.")] = "world",
) -> None:
    """Greet someone (a plugin's command)."""
    if who == "nobody":
        raise UsageError("--who nobody: greet somebody")
    sources = sorted(ctx.obj.project().sources) if ctx.obj.root else []
    typer.echo(f"hello {who} {sources}")


audit = typer.Typer(help="Acme audits.")


@audit.command("sources")
def audit_sources(ctx: typer.Context) -> None:
    """List the project's sources."""
    typer.echo(",".join(sorted(ctx.obj.project().sources)))


@dlt_ops.hookimpl
def dlt_ops_register_commands(register):
    register(hello, name="hello")
    register(audit, name="acme")
    register(hello, name="status")  # not an entry point: never listed
'''


def _install(site: Path, dist: str, entries: dict[str, str], module: str, body: str) -> None:
    install_plugin(site, dist, "dlt_ops.command", entries, module, body)


def test_help_lists_plugin_commands_without_importing_them(tmp_path: Path, cli) -> None:  # noqa: ANN001
    site = tmp_path / "site"
    _install(site, "acme-tools", {"hello": "acme_cmds", "acme": "acme_cmds",
                                  "pipeline": "acme_cmds"}, "acme_cmds", HELLO)  # fmt: skip
    proc = cli("--help", cwd=tmp_path, env={**site_env(site), "PYTHONPROFILEIMPORTTIME": "1"})
    assert proc.returncode == 0, proc.stderr
    listed = [ln.split()[0] for ln in proc.stdout.splitlines() if ln.startswith("  ")]
    assert "hello" in listed and "acme" in listed
    assert listed.count("pipeline") == 1  # the built-in; the plugin's entry point is left out
    assert "A command of the acme-tools plugin." in proc.stdout
    modules = imported_modules(proc.stderr)
    assert "acme_cmds" not in modules and "pluggy" not in modules
    assert not {m for m in modules if m.split(".")[0] in ("dlt", "duckdb", "psycopg")}


def test_a_plugin_command_and_group_run_with_global_options(
    tmp_path: Path,
    project,
    templates,
    cli,  # noqa: ANN001
) -> None:
    site = tmp_path / "site"
    _install(site, "acme-tools", {"hello": "acme_cmds", "acme": "acme_cmds"}, "acme_cmds", HELLO)
    root = project('[dlt_ops]\ndefault_destination = "duckdb"\n[sources.events_src.dlt_ops]\n'
                   'schedule = "@daily"\n', {"events_src": templates["events"]})  # fmt: skip
    env = site_env(site)
    ran = cli("--root", str(root), "hello", "--who", "acme", cwd=tmp_path, env=env)
    assert ran.returncode == 0, ran.stderr
    assert ran.stdout.strip() == "hello acme ['events_src']"
    group = cli("--root", str(root), "acme", "sources", cwd=tmp_path, env=env)
    assert (group.returncode, group.stdout.strip()) == (0, "events_src"), group.stderr
    refused = cli("hello", "--who", "nobody", cwd=tmp_path, env=env)
    assert refused.returncode == 2
    assert refused.stderr.strip().splitlines()[-1] == "error: --who nobody: greet somebody"
    own_help = cli("hello", "--help", cwd=tmp_path, env=env)
    assert "Greet someone" in own_help.stdout and "--who" in own_help.stdout


def test_a_broken_or_disabled_plugin_command_is_a_clear_exit_2(tmp_path: Path, cli) -> None:  # noqa: ANN001
    site = tmp_path / "site"
    _install(site, "broken-tools", {"boom": "broken_cmds"}, "broken_cmds",
             "raise ImportError('no')")  # fmt: skip
    proc = cli("boom", cwd=tmp_path, env=site_env(site))
    assert proc.returncode == 2, proc.stderr
    assert "command plugin 'boom' from broken-tools" in proc.stderr
    assert "Traceback" not in proc.stderr
    off = cli(
        "--help", cwd=tmp_path, env={**site_env(site), "DLT_OPS_DISABLE_PLUGINS": "command:boom"}
    )
    assert "boom" not in off.stdout


def test_two_plugins_with_one_command_need_a_pick(tmp_path: Path, cli) -> None:  # noqa: ANN001
    site = tmp_path / "site"
    _install(site, "acme-tools", {"hello": "acme_cmds"}, "acme_cmds", HELLO)
    _install(site, "other-tools", {"hello": "other_cmds"}, "other_cmds", HELLO.replace(
        'f"hello {who} {sources}"', 'f"other {who}"'))  # fmt: skip
    env = site_env(site)
    both = cli("hello", cwd=tmp_path, env=env)
    assert both.returncode == 2 and "[dlt_ops.plugins.command]" in both.stderr, both.stderr
    root = tmp_path / "proj"
    (root / ".dlt").mkdir(parents=True)
    (root / ".dlt" / "config.toml").write_text(
        '[dlt_ops]\ndefault_destination = "duckdb"\n\n[dlt_ops.plugins.command]\n'
        'hello = "other-tools"\n'
    )
    picked = cli("hello", "--who", "x", cwd=root, env=env)
    assert (picked.returncode, picked.stdout.strip()) == (0, "other x"), picked.stderr


def test_doctor_flags_a_command_that_cannot_run(tmp_path: Path, cli) -> None:  # noqa: ANN001
    site = tmp_path / "site"
    _install(site, "acme-tools", {"hello": "acme_cmds", "pipeline": "acme_cmds"}, "acme_cmds",
             HELLO)  # fmt: skip
    proc = cli("plugins", "doctor", cwd=tmp_path, env=site_env(site))
    assert proc.returncode == 1, proc.stdout
    assert "'pipeline' is a built-in command" in proc.stdout
    assert "registers command 'status', which no dlt_ops.command entry point names" in proc.stdout
