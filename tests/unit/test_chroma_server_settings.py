"""Server-mode settings: the URL, the label (never the token), the token header, the messages."""

from __future__ import annotations

from pathlib import Path

import httpx
import pytest

from core.settings import Settings, get_settings
from providers.chroma_server import auth_headers, refused, server_url, store_label, unreachable


@pytest.fixture
def env(monkeypatch: pytest.MonkeyPatch, tmp_path: Path) -> pytest.MonkeyPatch:
    monkeypatch.chdir(tmp_path)
    monkeypatch.setenv("RAGCHAT_HOME", str(tmp_path / "home"))
    for name in ("HOST", "PORT", "SSL", "TOKEN", "TOKEN_HEADER", "TIMEOUT_S"):
        monkeypatch.delenv(f"RAGCHAT_CHROMA_{name}", raising=False)
    return monkeypatch


def _server(env: pytest.MonkeyPatch, **values: str) -> Settings:
    env.setenv("RAGCHAT_CHROMA_HOST", "db.internal")
    for name, value in values.items():
        env.setenv(f"RAGCHAT_CHROMA_{name.upper()}", value)
    return get_settings()


def test_embedded_by_default_with_its_path_in_the_label(env: pytest.MonkeyPatch, tmp_path: Path) -> None:
    settings = get_settings()
    assert settings.chroma_host is None
    assert (settings.chroma_ssl, settings.chroma_token.get_secret_value(), settings.chroma_timeout_s) == (False, "", 30)
    assert store_label(settings) == f"chroma embedded {tmp_path / 'home' / 'chroma_db'}"
    assert auth_headers(settings) == {}


def test_https_and_a_bearer_token_never_shown(env: pytest.MonkeyPatch) -> None:
    settings = _server(env, port="8443", ssl="true", token="abc.DEF-123")
    assert server_url(settings) == "https://db.internal:8443/"
    assert auth_headers(settings) == {"Authorization": "Bearer abc.DEF-123"}
    label = store_label(settings)
    assert label == "chroma server https://db.internal:8443/ (collection ragchat, token in Authorization)"
    assert "abc.DEF-123" not in label + repr(settings) + str(settings.model_dump())


def test_the_x_chroma_token_header(env: pytest.MonkeyPatch) -> None:
    settings = _server(env, token="t0k", token_header="X-Chroma-Token")
    assert auth_headers(settings) == {"X-Chroma-Token": "t0k"}
    assert server_url(settings) == "http://db.internal:8000/"


@pytest.mark.parametrize("token", ["has space", "new\nline", "tab\there", "caf\u00e9"])
def test_a_token_that_cannot_go_in_a_header_is_refused_without_echoing_it(env: pytest.MonkeyPatch, token: str) -> None:
    with pytest.raises(ValueError, match="printable ASCII without spaces") as error:
        _server(env, token=token)
    assert token not in str(error.value)


@pytest.mark.parametrize(("name", "value"), [("port", "0"), ("port", "70000"), ("timeout_s", "0")])
def test_out_of_range_values_are_refused(env: pytest.MonkeyPatch, name: str, value: str) -> None:
    with pytest.raises(ValueError, match=f"chroma_{name}"):
        _server(env, **{name: value})


def test_messages_name_the_server_the_reason_and_the_way_out(env: pytest.MonkeyPatch) -> None:
    settings = _server(env, port="9", timeout_s="12")
    refused_connection = unreachable(settings, httpx.ConnectError("[Errno 111] Connection refused"))
    assert str(refused_connection) == (
        "Chroma server at http://db.internal:9/ is not reachable: connection refused; start it with "
        "`chroma run --path ./chroma-data --host db.internal --port 9` or unset RAGCHAT_CHROMA_HOST"
    )
    assert "is not reachable: no connection within 5 s;" in str(unreachable(settings, httpx.ConnectTimeout("")))
    slow = str(unreachable(settings, httpx.ReadTimeout("")))
    assert "is not reachable: no answer within 12 s (RAGCHAT_CHROMA_TIMEOUT_S);" in slow
    assert str(refused(settings, 401)) == (
        "Chroma server at http://db.internal:9/ asks for a token: set RAGCHAT_CHROMA_TOKEN (HTTP 401)"
    )
    gateway = str(unreachable(settings, "HTTP 502 from the proxy in front of it"))
    assert gateway.startswith("Chroma server at http://db.internal:9/ is not reachable: HTTP 502 from the proxy")
    with_token = _server(env, token="t")
    assert "refused the token: check RAGCHAT_CHROMA_TOKEN" in str(refused(with_token, 403))
