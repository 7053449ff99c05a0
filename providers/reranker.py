"""Cross-encoder reranking: our own packaged model (ONNX, onnxruntime) or a FlashRank model on disk.

`minilm-qa` is a cross-encoder trained once from all-MiniLM-L6-v2's weights (scripts/train_reranker.py,
bench/results-real-documents.md): its folder holds `model.onnx`, `tokenizer.json` and `config.json`.
No PyPI package carries a FlashRank model, so a FlashRank name works only when its folder is in
RAGCHAT_RERANKER_DIR (FlashRank's cache layout: <dir>/<model name>/...), or when
RAGCHAT_RERANKER_DOWNLOAD=true lets FlashRank download it. With neither, there is no reranker and the
pipeline says so (the label, shown in the UI and in every answer's metadata) instead of pretending.
"""

from __future__ import annotations

import json
import logging
from pathlib import Path
from typing import Protocol

import numpy as np

from core.schemas import Hit
from core.settings import Settings

log = logging.getLogger(__name__)

PACKAGED = "minilm-qa"
PACKAGED_DIR = Path(__file__).with_name("models") / PACKAGED


class Reranker(Protocol):
    """Reorders hits by a cross-encoder's score of (query, chunk text), best first."""

    label: str

    def rerank(self, query: str, hits: list[Hit]) -> list[Hit]: ...


def _scored(hits: list[Hit], scores: list[float]) -> list[Hit]:
    order = sorted(range(len(hits)), key=lambda i: -scores[i])
    return [
        hits[i].model_copy(update={"scores": hits[i].scores.model_copy(update={"rerank": float(scores[i])})})
        for i in order
    ]


class OnnxCrossEncoder:
    """A BERT-style cross-encoder exported to ONNX: `[CLS] query [SEP] passage [SEP]` → one logit."""

    def __init__(self, folder: Path, threads: int, batch: int) -> None:
        import onnxruntime
        from tokenizers import Tokenizer

        config = json.loads((folder / "config.json").read_text(encoding="utf-8"))
        self._tokenizer = Tokenizer.from_file(str(folder / "tokenizer.json"))
        self._tokenizer.enable_truncation(max_length=int(config["max_length"]), strategy="only_second")
        self._tokenizer.enable_padding()
        options = onnxruntime.SessionOptions()
        options.intra_op_num_threads = threads
        options.inter_op_num_threads = 1
        self._session = onnxruntime.InferenceSession(
            str(folder / "model.onnx"), options, providers=["CPUExecutionProvider"]
        )
        self._batch = batch
        self.label = f"{folder.name} (ONNX cross-encoder, packaged)"

    def scores(self, query: str, passages: list[str]) -> list[float]:
        """P(the passage answers the query) for each passage."""
        out: list[float] = []
        for start in range(0, len(passages), self._batch):
            pairs = [(query, p) for p in passages[start : start + self._batch]]
            encoded = self._tokenizer.encode_batch(pairs)
            feed = {
                "input_ids": np.array([e.ids for e in encoded], dtype=np.int64),
                "attention_mask": np.array([e.attention_mask for e in encoded], dtype=np.int64),
                "token_type_ids": np.array([e.type_ids for e in encoded], dtype=np.int64),
            }
            logits = self._session.run(None, feed)[0][:, 0]
            out.extend((1.0 / (1.0 + np.exp(-logits))).tolist())
        return out

    def rerank(self, query: str, hits: list[Hit]) -> list[Hit]:
        if not hits:
            return []
        return _scored(hits, self.scores(query, [hit.chunk.text for hit in hits]))


class FlashRankReranker:
    """A FlashRank model (downloaded by FlashRank, or copied into its cache folder)."""

    def __init__(self, settings: Settings) -> None:
        from flashrank import Ranker

        self.model = settings.reranker_model
        self._ranker = Ranker(
            model_name=self.model,
            cache_dir=str(settings.reranker_dir),
            max_length=settings.reranker_max_length,
            log_level="WARNING",
        )
        self.label = f"flashrank · {self.model}"

    def rerank(self, query: str, hits: list[Hit]) -> list[Hit]:
        from flashrank import RerankRequest

        if not hits:
            return []
        passages = [{"id": i, "text": hit.chunk.text} for i, hit in enumerate(hits)]
        ranked = self._ranker.rerank(RerankRequest(query=query, passages=passages))
        scores = [0.0] * len(hits)
        for passage in ranked:
            scores[passage["id"]] = float(passage["score"])
        return _scored(hits, scores)


def load_reranker(settings: Settings) -> tuple[Reranker | None, str]:
    """The reranker, or None with the reason shown to the user."""
    name = settings.reranker_model
    if name == "none":
        return None, "none (turned off: RAGCHAT_RERANKER_MODEL=none)"
    if name == PACKAGED:
        try:
            return _loaded(OnnxCrossEncoder(PACKAGED_DIR, settings.reranker_threads, settings.reranker_batch))
        except Exception as exc:  # a damaged checkout must not take search down
            log.warning("reranker %s failed to load: %s", name, exc)
            return None, f"none ({name} failed to load: {exc})"
    from flashrank.Config import model_file_map

    if name not in model_file_map:
        known = ", ".join([PACKAGED, *sorted(model_file_map)])
        return None, f"none ({name!r} is not a known reranker; known: {known})"
    folder = settings.reranker_dir / name
    if not (folder / model_file_map[name]).exists() and not settings.reranker_download:
        return None, (
            f"none ({name} is not in {settings.reranker_dir}; set RAGCHAT_RERANKER_DOWNLOAD=true "
            "to let FlashRank download it, or copy the model folder there)"
        )
    try:
        return _loaded(FlashRankReranker(settings))
    except Exception as exc:  # a broken or partial download must not take search down
        log.warning("reranker %s failed to load: %s", name, exc)
        return None, f"none ({name} failed to load: {exc})"


def _loaded(reranker: Reranker) -> tuple[Reranker, str]:
    return reranker, reranker.label
