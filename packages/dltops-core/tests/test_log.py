"""Logging: structlog loads on first use, yet every log line, ours or not, is configured."""

from __future__ import annotations

import json
import subprocess
import sys
import textwrap


def _python(code: str) -> subprocess.CompletedProcess[str]:
    return subprocess.run(
        [sys.executable, "-c", textwrap.dedent(code)], capture_output=True, text=True, check=False
    )


def _json_lines(text: str) -> list[dict[str, object]]:
    return [json.loads(line) for line in text.splitlines() if line.startswith("{")]


def test_configuring_does_not_import_structlog_and_our_logger_configures_it() -> None:
    proc = _python(
        """
        import sys
        from dlt_ops.log import LogFormat, configure_logging, get_logger
        configure_logging(LogFormat.json)
        log = get_logger("dlt_ops.probe")
        assert "structlog" not in sys.modules
        log.info("first line", rows=3)
        assert "structlog" in sys.modules
        """
    )
    assert proc.returncode == 0, proc.stderr
    assert proc.stdout == ""
    [line] = _json_lines(proc.stderr)
    assert (line["event"], line["rows"], line["level"]) == ("first line", 3, "info")


def test_a_plugin_importing_structlog_itself_logs_to_stderr_redacted() -> None:
    proc = _python(
        """
        from dlt_ops.log import LogFormat, configure_logging
        configure_logging(LogFormat.json)
        import structlog  # a third-party plugin, after the CLI configured logging
        structlog.get_logger("plugin").warning("connecting", token="s3cr3t", dsn="x:pw@h")
        """
    )
    assert proc.returncode == 0, proc.stderr
    assert proc.stdout == ""  # structlog's default would print here
    [line] = _json_lines(proc.stderr)
    assert line["event"] == "connecting" and line["token"] == "***"
    assert "s3cr3t" not in proc.stderr


def test_a_stdlib_record_before_structlog_loads_gets_the_same_rendering() -> None:
    proc = _python(
        """
        import logging, sys
        from dlt_ops.log import LogFormat, configure_logging
        configure_logging(LogFormat.json)
        assert "structlog" not in sys.modules
        logging.getLogger("dlt").warning("password=hunter2 at %s", "host")
        """
    )
    assert proc.returncode == 0, proc.stderr
    [line] = _json_lines(proc.stderr)
    assert line["logger"] == "dlt" and line["level"] == "warning"
    assert "hunter2" not in proc.stderr and "host" in str(line["event"])


def test_secret_keys_are_masked_at_the_top_level_and_nested() -> None:
    proc = _python(
        """
        from dlt_ops.log import LogFormat, configure_logging, get_logger
        configure_logging(LogFormat.json)
        get_logger("x").info("call", api_key="k1", nested={"password": "k2"}, rows=[1])
        """
    )
    [line] = _json_lines(proc.stderr)
    assert line["api_key"] == "***" and line["nested"] == {"password": "***"}
    assert line["rows"] == [1]


def test_quiet_keeps_errors_only_even_before_structlog_loads() -> None:
    proc = _python(
        """
        import logging, os, sys
        from dlt_ops.log import LogFormat, configure_logging, get_logger, only_errors
        configure_logging(LogFormat.json)
        only_errors()
        get_logger("x").info("hidden")
        get_logger("x").warning("hidden too")
        assert "structlog" not in sys.modules  # dropped without loading it
        logging.getLogger("dlt").warning("hidden as well")
        assert os.environ["RUNTIME__LOG_LEVEL"] == "ERROR"  # dlt's own logger, once it starts
        get_logger("x").error("shown")
        """
    )
    assert proc.returncode == 0, proc.stderr
    assert [line["event"] for line in _json_lines(proc.stderr)] == ["shown"]


def test_a_debug_line_at_info_level_does_not_load_structlog() -> None:
    proc = _python(
        """
        import sys
        from dlt_ops.log import LogFormat, configure_logging, get_logger
        configure_logging(LogFormat.json)
        get_logger("x").debug("cache ignored", path="/p")
        assert "structlog" not in sys.modules
        configure_logging(LogFormat.json, debug=True)
        get_logger("x").debug("now shown")
        """
    )
    assert proc.returncode == 0, proc.stderr
    assert [line["event"] for line in _json_lines(proc.stderr)] == ["now shown"]
