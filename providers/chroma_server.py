"""Server mode of the vector store: where the Chroma server is, how the token travels, and what a
person is told when the server cannot be used.

Kept light (httpx is imported inside the functions that need it): the CLI imports
`VectorStoreUnavailable` for every command. Chroma 1.x's own server (`chroma run`) has no
authentication; a token-protected deployment puts a proxy in front of it that checks the token
header, and this module sends that header.
"""

from __future__ import annotations

import re
from typing import TYPE_CHECKING

from core.settings import Settings

if TYPE_CHECKING:
    import httpx

CONNECT_TIMEOUT_S = 5.0
# The chromadb client's first authorized call: a proxy that checks tokens answers it 401/403 on a bad one.
IDENTITY_PATH = "/api/v2/auth/identity"
_ERRNO_PREFIX = re.compile(r"^\[Errno -?\d+\]\s*")


class VectorStoreUnavailable(RuntimeError):
    """The vector store cannot be used right now (server down, token refused, collection gone). The
    message is one sentence fit to show; nothing was changed locally because of it."""


def server_url(settings: Settings) -> str:
    scheme = "https" if settings.chroma_ssl else "http"
    return f"{scheme}://{settings.chroma_host}:{settings.chroma_port}/"


def store_label(settings: Settings) -> str:
    """Which store runs, for the app and `ask --json`; never the token."""
    if not settings.chroma_host:
        return f"chroma embedded {settings.chroma_path}"
    auth = f", token in {settings.chroma_token_header}" if settings.chroma_token.get_secret_value() else ""
    return f"chroma server {server_url(settings)} (collection {settings.collection}{auth})"


def auth_headers(settings: Settings) -> dict[str, str]:
    """The token header every request carries ({} without a token)."""
    token = settings.chroma_token.get_secret_value()
    if not token:
        return {}
    if settings.chroma_token_header == "Authorization":
        return {"Authorization": f"Bearer {token}"}
    return {"X-Chroma-Token": token}


def timeout(settings: Settings) -> httpx.Timeout:
    import httpx

    return httpx.Timeout(settings.chroma_timeout_s, connect=min(CONNECT_TIMEOUT_S, settings.chroma_timeout_s))


def unreachable(settings: Settings, cause: BaseException | str) -> VectorStoreUnavailable:
    """A transport failure (refused, timed out, TLS, connection lost), or a proxy's gateway error, as
    the sentence to show."""
    reason = cause if isinstance(cause, str) else _reason(settings, cause)
    command = f"chroma run --path ./chroma-data --host {settings.chroma_host} --port {settings.chroma_port}"
    return VectorStoreUnavailable(
        f"Chroma server at {server_url(settings)} is not reachable: {reason}; "
        f"start it with `{command}` or unset RAGCHAT_CHROMA_HOST"
    )


def refused(settings: Settings, status: int) -> VectorStoreUnavailable:
    if settings.chroma_token.get_secret_value():
        advice = "refused the token: check RAGCHAT_CHROMA_TOKEN (and RAGCHAT_CHROMA_TOKEN_HEADER)"
    else:
        advice = "asks for a token: set RAGCHAT_CHROMA_TOKEN"
    return VectorStoreUnavailable(f"Chroma server at {server_url(settings)} {advice} (HTTP {status})")


def collection_gone(settings: Settings) -> VectorStoreUnavailable:
    return VectorStoreUnavailable(
        f"The collection {settings.collection!r} is gone from the Chroma server at {server_url(settings)} "
        "(deleted, or the server's data was reset): restart ragchat to check the documents against it"
    )


def check_status(settings: Settings, status: int) -> None:
    """Raise the sentence for an HTTP status that means the server cannot be used: 401/403 (the
    token), 502/503/504 (a proxy whose Chroma behind it is down). Also hooked into chromadb's own
    session, which would otherwise raise the proxy's error page as a bare Exception."""
    if status in (401, 403):
        raise refused(settings, status)
    if status in (502, 503, 504):
        raise unreachable(settings, f"HTTP {status} from the proxy in front of it")


def probe(settings: Settings) -> None:
    """Ask the server who we are, with the token and a bounded timeout, before the chromadb client is
    built: its constructor turns every failure into "Could not connect to tenant …"."""
    import httpx

    url = server_url(settings).rstrip("/") + IDENTITY_PATH
    try:
        response = httpx.get(url, headers=auth_headers(settings), timeout=timeout(settings))
    except httpx.TransportError as exc:
        raise unreachable(settings, exc) from exc
    check_status(settings, response.status_code)
    if response.status_code >= 400:
        raise VectorStoreUnavailable(
            f"Chroma server at {server_url(settings)} answered HTTP {response.status_code} "
            f"to {IDENTITY_PATH}: is it a Chroma 1.x server?"
        )


def _reason(settings: Settings, exc: BaseException) -> str:
    import httpx

    if isinstance(exc, httpx.ConnectTimeout):
        return f"no connection within {min(CONNECT_TIMEOUT_S, settings.chroma_timeout_s):g} s"
    if isinstance(exc, httpx.TimeoutException):
        return f"no answer within {settings.chroma_timeout_s:g} s (RAGCHAT_CHROMA_TIMEOUT_S)"
    text = _ERRNO_PREFIX.sub("", str(exc)).strip() or type(exc).__name__
    return text[:1].lower() + text[1:]
