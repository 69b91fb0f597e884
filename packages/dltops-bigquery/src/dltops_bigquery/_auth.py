"""From what dlt resolves for its ``bigquery`` destination to a ``google.cloud.bigquery.Client``.

dlt accepts, under ``destination.bigquery.credentials``:

* a table of service-account fields (``project_id``, ``private_key``, ``client_email``, ...);
* the same as a service-account JSON string;
* OAuth user fields (``client_id``, ``client_secret``, ``refresh_token``, ``project_id``);
* nothing, or only ``project_id``: Application Default Credentials (``google.auth.default``).

``ConnectionTarget.options`` adds what dlt keeps outside credentials or does not have:
``location``, ``project`` (overrides ``project_id``), ``api_endpoint`` (an emulator or a
private endpoint), ``anonymous`` (no credentials at all, for emulators), and
``query_timeout_s`` (how long to wait for one query job). When ``BIGQUERY_EMULATOR_HOST`` is set
and no key is given, credentials are anonymous, as the client library's emulator support
expects. ``location`` is also read from the credentials table, where dlt users often put it.
"""

from __future__ import annotations

import json
import os
from collections.abc import Mapping
from dataclasses import dataclass
from typing import Any

from dlt_ops.adapters import ConnectionTarget
from dlt_ops.errors import DestinationError
from dlt_ops.redact import remember_secret

SCOPES = ("https://www.googleapis.com/auth/bigquery",)
_TOKEN_URI = "https://oauth2.googleapis.com/token"
DEFAULT_QUERY_TIMEOUT_S = 600.0


@dataclass(frozen=True)
class ClientSettings:
    """Everything needed to build the SDK client (credentials object built lazily)."""

    project: str | None
    location: str | None
    api_endpoint: str | None
    fields: Mapping[str, Any]
    anonymous: bool
    query_timeout_s: float


def _fields(credentials: object) -> dict[str, Any]:
    if credentials is None or credentials == "":
        return {}
    if isinstance(credentials, Mapping):
        return dict(credentials)
    if isinstance(credentials, str):
        try:
            parsed = json.loads(credentials)
        except ValueError:
            parsed = None
        if isinstance(parsed, dict):
            remember_secret(parsed.get("private_key"))
            return parsed
    raise DestinationError(
        "bigquery credentials must be a table of fields (project_id, private_key, "
        "client_email, ...) or a service-account JSON document; got a value of type "
        f"{type(credentials).__name__}. Fix destination.bigquery.credentials in "
        ".dlt/secrets.toml."
    )


def _opt_str(value: object) -> str | None:
    return str(value) if value not in (None, "") else None


def settings_for(target: ConnectionTarget) -> ClientSettings:
    """Read credentials and options; no network, no SDK import."""
    fields = _fields(target.credentials)
    opts = target.options
    keyed = any(fields.get(k) for k in ("private_key", "refresh_token"))
    anonymous = bool(opts.get("anonymous")) or (
        not keyed and bool(os.environ.get("BIGQUERY_EMULATOR_HOST"))
    )
    timeout = opts.get("query_timeout_s", DEFAULT_QUERY_TIMEOUT_S)
    return ClientSettings(
        project=_opt_str(opts.get("project")) or _opt_str(fields.get("project_id")),
        location=_opt_str(opts.get("location")) or _opt_str(fields.get("location")),
        api_endpoint=_opt_str(opts.get("api_endpoint")),
        fields=fields,
        anonymous=anonymous,
        query_timeout_s=float(timeout),  # type: ignore[arg-type]
    )


def _private_key(raw: str) -> str:
    # Keys pasted into environment variables often carry literal "\n" instead of newlines.
    return raw.replace("\\n", "\n") if "\n" not in raw else raw


def google_credentials(settings: ClientSettings) -> tuple[Any, str | None]:
    """The ``google.auth`` credentials object and the project it implies."""
    fields = settings.fields
    if settings.anonymous:
        from google.auth.credentials import AnonymousCredentials

        return AnonymousCredentials(), settings.project
    if fields.get("private_key"):
        from google.oauth2 import service_account

        info = {
            "type": "service_account",
            "token_uri": _TOKEN_URI,
            **{k: v for k, v in fields.items() if isinstance(v, str)},
        }
        info["private_key"] = _private_key(str(fields["private_key"]))
        creds = service_account.Credentials.from_service_account_info(info, scopes=SCOPES)
        return creds, settings.project or creds.project_id
    if fields.get("refresh_token"):
        from google.oauth2.credentials import Credentials

        creds = Credentials(
            None,
            refresh_token=str(fields["refresh_token"]),
            client_id=_opt_str(fields.get("client_id")),
            client_secret=_opt_str(fields.get("client_secret")),
            token_uri=_opt_str(fields.get("token_uri")) or _TOKEN_URI,
            scopes=list(SCOPES),
        )
        return creds, settings.project
    import google.auth

    creds, default_project = google.auth.default(scopes=list(SCOPES))
    return creds, settings.project or default_project
