"""Retrieval quality and speed: the hybrid BM25 + dense retriever against each retriever alone and against the
seed design's LangChain retriever (BM25Retriever + Chroma in an EnsembleRetriever).

What it measures:

1. Quality, with the real embedder and the real BM25 index, on the SQuAD 2.0 "Normans" dev article
   (``../shared/data/squad2-normans``: one chunk per paragraph; the answerable questions; the gold
   chunk is the paragraph holding ``gold_char_spans_in_doc``) and, with ``--beir DIR``, on a BEIR
   dataset (one chunk per corpus document, graded qrels from ``qrels/test.tsv``). Modes at k=10:
   bm25, dense, hybrid-rrf (w=0.5, plus a 0.3 / 0.7 sweep), hybrid-convex, hybrid+rerank (only when
   a FlashRank model is on disk: ``--reranker-dir``) and the LangChain baseline. Metrics: nDCG@10
   (linear gains, as trec_eval), Recall@10 and MRR@10.
2. Speed, for each ``--sizes`` N: N synthetic chunks (~150 words from a Zipf-distributed vocabulary of
   50,000 made-up words plus some English, fixed seed; 50 chunks per synthetic document) with random
   unit-norm 384-d vectors (the real embedder would need hours for 100k chunks; its measured rate is
   printed), bulk-loaded in batches of 5,000 into Chroma + the BM25 index + the registry. Reported
   against N: load rates, search p50/p95 (hybrid, bm25-only, dense-only; the real embedder embeds each
   query), start-up in fresh subprocesses (``open_session(get_settings())`` to the end of the first
   search: once cold, then the median of 3 warm runs with bytecode caches as a user's Python keeps them,
   a step-by-step run for the breakdown, and one run without cached bytecode) with the import time
   apart, the LangChain baseline (build time and latency), and a ranking check: the hybrid top-10 of
   every query against the one `--reference-rev`'s code gives on the same home. At the largest size
   it also ingests a 20-page PDF (compared with the same PDF into an empty home, and checking that
   existing BM25 segment files are left alone) and compares BM25 libraries (this project's index,
   rank_bm25, bm25s) on the same corpus and tokenizer.

Every dataset and size is built in its own temporary RAGCHAT_HOME, deleted afterwards (with ``--keep-home
DIR``, each size's home is built once in DIR/size-N and reused by later runs). Tables (markdown)
go to stdout, progress to stderr. Run from the repository root (figures only, nothing is asserted):

    .venv/bin/python bench/retrieval.py                                    # SQuAD + 1k/10k/100k (long)
    .venv/bin/python bench/retrieval.py --sizes 1000 --queries 20          # a quick run
    .venv/bin/python bench/retrieval.py --skip-quality --sizes 100000 --keep-home ~/bench-homes  # reusable 100k
    .venv/bin/python bench/retrieval.py --skip-speed --beir ~/data/scifact # quality only
    .venv/bin/python bench/retrieval.py --reranker-dir ~/.cache/flashrank  # with a FlashRank model
"""

from __future__ import annotations

import argparse
import gc
import hashlib
import json
import math
import os
import platform
import random
import shutil
import subprocess
import sys
import tempfile
import time
import warnings
from collections import Counter
from collections.abc import Callable, Iterator
from contextlib import contextmanager
from dataclasses import asdict, dataclass, field
from pathlib import Path
from typing import Any

import numpy as np
from fpdf import FPDF
from langchain_core.embeddings import Embeddings

from core.schemas import Chunk, DocumentRecord, IngestResult, doc_id_for
from core.settings import PROJECT_ROOT, Settings, get_settings
from core.text import tokenize
from ingestion.chunking import chunk_document
from ingestion.parsers import parse_document
from ingestion.registry import now
from providers.embedder import Embedder
from ragchat.application import open_session
from ragchat.session import Session

K = 10
CANDIDATES = max(20, K)
BATCH = 5000
DIM = 384
WORDS_PER_CHUNK = (120, 180)
CHUNKS_PER_DOC = 50
FAKE_VOCABULARY = 50_000
ZIPF_EXPONENT = 1.0
SEED = 20261122
BASELINE_BUDGET_S = 30.0
WARM_STARTS = 3  # a slow retriever gets at least 20 queries, then stops once this much time is spent
DEFAULT_SQUAD = PROJECT_ROOT.parent / "shared" / "data" / "squad2-normans"
TOY_RERANKER = PROJECT_ROOT / "tests" / "fixtures" / "flashrank"
TARGET_SIZE = 100_000
TARGETS = {"hybrid_p95_ms": 20.0, "startup_s": 1.5, "baseline_ratio": 15.0}  # issue 24
REFERENCE_REV = "f52e617"  # the last commit before issue 24's search speed-ups: the ranking to keep

ENGLISH = """the of and to in a is that for it as was with be by on not he this are or his from at which but have
an they you were her she there been one all we their has would when if so no will up more out who about
time report customer warehouse shipment invoice delivery contract supplier budget forecast safety audit
training policy quarter revenue region market price order pallet truck driver manager team office system
data network server security incident response storage energy cost growth plan project schedule process
quality inspection review approval request account payment tax bank loan credit insurance claim risk
product session support ticket software update version release feature test error failure backup water
river city harbour bridge road rail airport station school hospital doctor patient nurse medicine court
law judge police army king queen church castle island mountain forest field farm animal horse bird fish
music film book story paper letter history science language number year month week day morning night
north south east west spring summer autumn winter green red blue black white small large early late""".split()

SQUAD_NOTE = "SQuAD 2.0 dev, article Normans (CC BY-SA 4.0)"
Ranked = list[tuple[str, float]]  # (chunk id, score), best first


# ---- datasets ------------------------------------------------------------------------------------
@dataclass
class Dataset:
    name: str
    chunks: list[Chunk]
    queries: dict[str, str]
    qrels: dict[str, dict[str, int]]  # query id -> {chunk id: graded relevance}
    note: str = ""


def make_chunk(chunk_id: str, source: str, index: int, text: str, file_type: str = "txt") -> Chunk:
    doc_id = doc_id_for(source)
    return Chunk(
        chunk_id=chunk_id,
        doc_id=doc_id,
        content_hash=hashlib.sha256(source.encode()).hexdigest()[:16],
        source=source,
        file_type=file_type,  # type: ignore[arg-type]
        page=0,
        chunk_index=index,
        text=text,
        char_start=0,
        char_end=len(text),
    )


def paragraphs_with_offsets(markdown: str) -> list[tuple[int, str]]:
    """(offset, text) of every blank-line separated block that is not a heading."""
    blocks: list[tuple[int, str]] = []
    offset = 0
    for block in markdown.split("\n\n"):
        stripped = block.strip()
        if stripped and not stripped.startswith("#"):
            blocks.append((offset + block.index(stripped), stripped))
        offset += len(block) + 2
    return blocks


def load_squad(directory: Path) -> Dataset:
    markdown = (directory / "Normans.md").read_text(encoding="utf-8")
    paragraphs = paragraphs_with_offsets(markdown)
    chunks = [make_chunk(f"normans-p{i:03d}", "Normans.md", i, text, "md") for i, (_, text) in enumerate(paragraphs)]
    queries: dict[str, str] = {}
    qrels: dict[str, dict[str, int]] = {}
    for line in (directory / "questions.jsonl").read_text(encoding="utf-8").splitlines():
        row = json.loads(line)
        if row["is_impossible"] or not row["gold_char_spans_in_doc"]:
            continue
        gold = {
            chunks[i].chunk_id
            for start, end in row["gold_char_spans_in_doc"]
            for i, (offset, text) in enumerate(paragraphs)
            if offset <= start and end <= offset + len(text)
        }
        if gold:
            queries[row["id"]] = row["question"]
            qrels[row["id"]] = dict.fromkeys(sorted(gold), 1)
    return Dataset("squad2-normans", chunks, queries, qrels, SQUAD_NOTE)


def read_jsonl(path: Path) -> Iterator[dict[str, Any]]:
    with path.open(encoding="utf-8") as handle:
        for line in handle:
            if line.strip():
                yield json.loads(line)


def load_beir(directory: Path) -> Dataset:
    qrels: dict[str, dict[str, int]] = {}
    lines = (directory / "qrels" / "test.tsv").read_text(encoding="utf-8").splitlines()
    for line in lines[1:]:
        query_id, corpus_id, score = line.split("\t")[:3]
        if int(score) > 0:
            qrels.setdefault(query_id, {})[f"beir-{corpus_id}"] = int(score)
    chunks: list[Chunk] = []
    for i, row in enumerate(read_jsonl(directory / "corpus.jsonl")):
        text = f"{row.get('title') or ''}\n{row['text']}".strip()
        chunks.append(make_chunk(f"beir-{row['_id']}", f"beir-{i // CHUNKS_PER_DOC:05d}.txt", i, text))
    queries = {str(q["_id"]): q["text"] for q in read_jsonl(directory / "queries.jsonl") if str(q["_id"]) in qrels}
    qrels = {qid: rels for qid, rels in qrels.items() if qid in queries}
    return Dataset(f"beir:{directory.name}", chunks, queries, qrels, f"BEIR layout from {directory}")


# ---- loading a home directly ---------------------------------------------------------------------
@dataclass
class LoadTimes:
    store_s: float = 0.0
    bm25_s: float = 0.0
    registry_s: float = 0.0
    bm25_batches_s: list[float] = field(default_factory=list)


def bulk_load(session: Session, chunks: list[Chunk], vectors: np.ndarray) -> LoadTimes:
    """Chroma, BM25 and the registry's chunk texts get every batch (so their counts stay equal), then one
    registry row per document."""
    times = LoadTimes()
    for begin in range(0, len(chunks), BATCH):
        part = chunks[begin : begin + BATCH]
        embeddings = vectors[begin : begin + BATCH].tolist()
        by_version: dict[tuple[str, str], list[Chunk]] = {}
        for c in part:
            by_version.setdefault((c.doc_id, c.content_hash), []).append(c)
        started = time.perf_counter()
        for (doc_id, version), own in by_version.items():
            session.document_index.registry.add_chunks_to_embed(doc_id, version, own)
        times.registry_s += time.perf_counter() - started
        started = time.perf_counter()
        session.document_index.store.add(part, embeddings)
        times.store_s += time.perf_counter() - started
        started = time.perf_counter()
        for (doc_id, version), own in by_version.items():
            session.document_index.registry.mark_embedded(doc_id, version, [c.chunk_id for c in own])
        times.registry_s += time.perf_counter() - started
        started = time.perf_counter()
        session.document_index.bm25.add(
            [c.chunk_id for c in part], [c.text for c in part], [c.doc_id for c in part], [c.content_hash for c in part]
        )
        times.bm25_batches_s.append(time.perf_counter() - started)
        log(f"  loaded {begin + len(part):,} / {len(chunks):,}")
    times.bm25_s = sum(times.bm25_batches_s)
    started = time.perf_counter()
    register_documents(session, chunks)
    times.registry_s += time.perf_counter() - started
    return times


def register_documents(session: Session, chunks: list[Chunk]) -> None:
    per_doc = Counter(c.doc_id for c in chunks)
    first = {c.doc_id: c for c in reversed(chunks)}
    for doc_id, count in per_doc.items():
        chunk = first[doc_id]
        session.document_index.registry.put(
            DocumentRecord(
                doc_id=doc_id,
                source=chunk.source,
                file_type=chunk.file_type,
                content_hash=chunk.content_hash,
                size_bytes=0,
                pages=0,
                chunks=count,
                ingested_at=now(),
            )
        )


@contextmanager
def temporary_home(prefix: str) -> Iterator[Path]:
    with tempfile.TemporaryDirectory(prefix=f"ragchat-bench-retrieval-{prefix}-") as tmp:
        try:
            yield Path(tmp) / "home"
        finally:
            release_chroma()


def release_chroma() -> None:
    """Chroma caches one client system per path; drop them so a finished size frees its memory."""
    gc.collect()
    try:
        from chromadb.api.client import SharedSystemClient

        SharedSystemClient.clear_system_cache()
    except Exception as exc:  # only memory is at stake
        log(f"  (could not clear Chroma's client cache: {exc})")
    gc.collect()


# ---- the seed design's retriever -----------------------------------------------------------------
class ServiceEmbeddings(Embeddings):
    """LangChain's embedding interface over the project's embedder (same model, same vectors)."""

    def __init__(self, embedder: Embedder) -> None:
        self._embedder = embedder

    def embed_documents(self, texts: list[str]) -> list[list[float]]:
        return self._embedder.embed(texts)

    def embed_query(self, text: str) -> list[float]:
        return self._embedder.embed_query(text)


def build_langchain_bm25(chunks: list[Chunk]) -> Any:
    """As the seed design did at every start-up and upload: rank_bm25 over whitespace-split text."""
    from langchain_community.retrievers import BM25Retriever

    return BM25Retriever.from_texts([c.text for c in chunks], metadatas=[{"chunk_id": c.chunk_id} for c in chunks], k=K)


def build_ensemble(session: Session, bm25_retriever: Any, chunks: list[Chunk], vectors: np.ndarray) -> Any:
    """EnsembleRetriever(BM25, Chroma) with equal weights over a Chroma collection as the original design
    stored it: the same vectors, with each chunk's text as its document (ours holds vectors only). Built
    once beside ours in the home and reused while it has as many rows."""
    import chromadb
    from chromadb.config import Settings as ChromaSettings
    from langchain_classic.retrievers import EnsembleRetriever
    from langchain_community.vectorstores import Chroma

    client = chromadb.PersistentClient(
        path=str(session.settings.chroma_path), settings=ChromaSettings(anonymized_telemetry=False)
    )
    name = f"{session.settings.collection}-langchain-baseline"
    collection = client.get_or_create_collection(name, embedding_function=None, metadata={"hnsw:space": "cosine"})
    if collection.count() != len(chunks):
        client.delete_collection(name)
        collection = client.create_collection(name, embedding_function=None, metadata={"hnsw:space": "cosine"})
        for begin in range(0, len(chunks), BATCH):
            part = chunks[begin : begin + BATCH]
            collection.add(
                ids=[c.chunk_id for c in part],
                embeddings=vectors[begin : begin + BATCH].tolist(),
                documents=[c.text for c in part],
                metadatas=[{"chunk_id": c.chunk_id, "source": c.source} for c in part],
            )
    with warnings.catch_warnings():
        warnings.simplefilter("ignore")  # langchain_community's Chroma is deprecated in favour of langchain-chroma
        store = Chroma(client=client, collection_name=name, embedding_function=ServiceEmbeddings(session.app.embedder))
    dense = store.as_retriever(search_kwargs={"k": K})
    return EnsembleRetriever(retrievers=[bm25_retriever, dense], weights=[0.5, 0.5])


def baseline_ids(ensemble: Any, by_text: dict[str, str], query: str) -> list[str]:
    """Chunk ids of the ensemble's top k (Chroma's LangChain documents carry no id: matched by text)."""
    docs = ensemble.invoke(query)
    return [d.metadata.get("chunk_id") or by_text.get(d.page_content, "?") for d in docs][:K]


# ---- quality -------------------------------------------------------------------------------------
def ndcg(ranked: list[str], rels: dict[str, int]) -> float:
    dcg = sum(rels.get(cid, 0) / math.log2(i + 2) for i, cid in enumerate(ranked[:K]))
    ideal = sum(g / math.log2(i + 2) for i, g in enumerate(sorted(rels.values(), reverse=True)[:K]))
    return dcg / ideal if ideal else 0.0


def recall(ranked: list[str], rels: dict[str, int]) -> float:
    relevant = {cid for cid, g in rels.items() if g > 0}
    return len(relevant & set(ranked[:K])) / len(relevant) if relevant else 0.0


def mrr(ranked: list[str], rels: dict[str, int]) -> float:
    return next((1.0 / (i + 1) for i, cid in enumerate(ranked[:K]) if rels.get(cid, 0) > 0), 0.0)


def evaluate(search: Callable[[str], list[str]], data: Dataset) -> dict[str, float]:
    rows = [(search(data.queries[qid]), rels) for qid, rels in data.qrels.items()]
    return {
        "ndcg": float(np.mean([ndcg(r, g) for r, g in rows])),
        "recall": float(np.mean([recall(r, g) for r, g in rows])),
        "mrr": float(np.mean([mrr(r, g) for r, g in rows])),
    }


def session_search(session: Session, weight: float, rerank: bool = False) -> Callable[[str], list[str]]:
    def search(query: str) -> list[str]:
        return [h.chunk.chunk_id for h in session.search(query, k=K, bm25_weight=weight, rerank=rerank).hits]

    return search


def quality_settings(home: Path, args: argparse.Namespace, fusion: str = "rrf") -> Any:
    return get_settings(
        home=home,
        reranker_dir=args.reranker_dir,
        reranker_model=args.reranker_model,
        candidates=CANDIDATES,
        fusion=fusion,
    )


DEFAULT_HYBRID = f"hybrid-{Settings.model_fields['fusion'].default} (w=0.5)"


def quality_modes(session: Session, convex: Session) -> list[tuple[str, Callable[[str], list[str]]]]:
    return [
        ("bm25", session_search(session, 1.0)),
        ("dense", session_search(session, 0.0)),
        ("hybrid-rrf (w=0.5)", session_search(session, 0.5)),
        ("hybrid-rrf (w=0.3)", session_search(session, 0.3)),
        ("hybrid-rrf (w=0.7)", session_search(session, 0.7)),
        ("hybrid-convex (w=0.5)", session_search(convex, 0.5)),
    ]


def run_quality(data: Dataset, args: argparse.Namespace) -> list[tuple[str, dict[str, float] | str]]:
    log(f"quality: {data.name}: {len(data.chunks)} chunks, {len(data.qrels)} queries")
    with temporary_home(data.name.replace(":", "-")) as home:
        session = open_session(quality_settings(home, args))
        started = time.perf_counter()
        vectors = np.asarray(session.app.embedder.embed([c.text for c in data.chunks]), dtype=np.float32)
        log(f"  embedded {len(data.chunks)} chunks in {time.perf_counter() - started:.1f} s")
        bulk_load(session, data.chunks, vectors)
        convex = open_session(quality_settings(home, args, fusion="convex"))
        rows: list[tuple[str, dict[str, float] | str]] = []
        for label, search in quality_modes(session, convex):
            log(f"  {label}")
            rows.append((label, evaluate(search, data)))
        reranker = session.models().reranker
        if reranker.startswith("none"):
            rows.append(("hybrid+rerank (w=0.5)", f"n/a — {reranker}"))
        else:
            log("  hybrid+rerank")
            rows.append((f"hybrid+rerank (w=0.5, {reranker})", evaluate(session_search(session, 0.5, True), data)))
        log("  baseline (LangChain BM25Retriever + Chroma, EnsembleRetriever)")
        by_text = {c.text: c.chunk_id for c in data.chunks}
        ensemble = build_ensemble(session, build_langchain_bm25(data.chunks), data.chunks, vectors)
        rows.append(("baseline (LangChain ensemble)", evaluate(lambda q: baseline_ids(ensemble, by_text, q), data)))
    return rows


def print_quality(data: Dataset, rows: list[tuple[str, dict[str, float] | str]], reranker_dir: Path | None) -> None:
    print(f"\n### Quality: {data.name} ({data.note})\n")
    print(f"{len(data.chunks)} chunks, {len(data.qrels)} queries with relevance judgements; k={K}, ", end="")
    print(f"candidates={CANDIDATES} per retriever")
    if reranker_dir and reranker_dir.resolve() == TOY_RERANKER.resolve():
        print("\n**Warning: the reranker is the toy lexical test model; its row is not a quality figure.**")
    print("\n| mode | nDCG@10 | Recall@10 | MRR@10 |\n|---|---:|---:|---:|")
    for label, metrics in rows:
        if isinstance(metrics, str):
            print(f"| {label} | {metrics} | | |")
        else:
            print(f"| {label} | {metrics['ndcg']:.3f} | {metrics['recall']:.3f} | {metrics['mrr']:.3f} |")
    scored = {label: m["ndcg"] for label, m in rows if not isinstance(m, str)}
    hybrid = scored[DEFAULT_HYBRID]
    best_label = max(("bm25", "dense"), key=lambda label: scored[label])
    print(
        f"\nhybrid (the default setting, {DEFAULT_HYBRID}) vs best single retriever ({best_label}): "
        f"{relative(hybrid, scored[best_label])} nDCG@10"
    )
    print(f"hybrid (default) vs baseline: {relative(hybrid, scored['baseline (LangChain ensemble)'])} nDCG@10")
    best_hybrid = max((label for label in scored if label.startswith("hybrid-")), key=lambda label: scored[label])
    print(
        f"best hybrid setting, {best_hybrid}: {relative(scored[best_hybrid], scored[best_label])} vs {best_label}, "
        f"{relative(scored[best_hybrid], scored['baseline (LangChain ensemble)'])} vs baseline"
    )


def relative(value: float, reference: float) -> str:
    return f"{100 * (value - reference) / reference:+.1f}%" if reference else "n/a"


# ---- synthetic corpus ----------------------------------------------------------------------------
def made_up_words(count: int, seed: int) -> list[str]:
    rng = random.Random(seed)
    syllables = [c + v for c in "bcdfghklmnprstvz" for v in "aeiou"]
    words: set[str] = set()
    while len(words) < count:
        words.add("".join(rng.choice(syllables) for _ in range(rng.randint(2, 4))))
    return sorted(words)


def vocabulary(seed: int) -> tuple[list[str], np.ndarray]:
    """English words first (the frequent ranks), then made-up ones; cumulative Zipf probabilities."""
    words = list(dict.fromkeys(ENGLISH)) + made_up_words(FAKE_VOCABULARY, seed)
    weights = 1.0 / np.arange(1, len(words) + 1) ** ZIPF_EXPONENT
    return words, np.cumsum(weights) / weights.sum()


def synthetic_chunks(n: int, seed: int) -> list[Chunk]:
    words, cdf = vocabulary(seed)
    rng = np.random.default_rng(seed)
    lengths = rng.integers(WORDS_PER_CHUNK[0], WORDS_PER_CHUNK[1] + 1, size=n)
    ids = np.searchsorted(cdf, rng.random(int(lengths.sum()))).tolist()
    chunks: list[Chunk] = []
    position = 0
    for i, length in enumerate(lengths.tolist()):
        text = " ".join(map(words.__getitem__, ids[position : position + length]))
        position += length
        source = f"synthetic-{i // CHUNKS_PER_DOC:05d}.txt"
        chunks.append(make_chunk(f"syn{i:021d}", source, i % CHUNKS_PER_DOC, text))
    return chunks


def random_vectors(n: int, seed: int) -> np.ndarray:
    vectors = np.random.default_rng(seed + 1).standard_normal((n, DIM), dtype=np.float32)
    return vectors / np.linalg.norm(vectors, axis=1, keepdims=True)


def synthetic_queries(chunks: list[Chunk], count: int, seed: int) -> list[str]:
    """2-5 words taken from a random chunk, so every query has BM25 hits."""
    rng = random.Random(seed + 2)
    queries: list[str] = []
    for _ in range(count):
        words = rng.choice(chunks).text.split()
        queries.append(" ".join(rng.sample(words, rng.randint(2, 5))))
    return queries


# ---- speed ---------------------------------------------------------------------------------------
def percentiles(samples_s: list[float]) -> tuple[float, float]:
    ms = np.asarray(samples_s) * 1000
    return float(np.percentile(ms, 50)), float(np.percentile(ms, 95))


def timed(fn: Callable[[str], object], queries: list[str], budget_s: float | None = None) -> list[float]:
    """Wall time per query after 2 warm-ups; with a budget, stops after 20 queries once it is spent."""
    for query in queries[:2]:
        fn(query)
    samples: list[float] = []
    began = time.perf_counter()
    for query in queries:
        started = time.perf_counter()
        fn(query)
        samples.append(time.perf_counter() - started)
        if budget_s is not None and len(samples) >= 20 and time.perf_counter() - began > budget_s:
            break
    return samples


def search_latencies(session: Session, queries: list[str]) -> dict[str, Any]:
    out: dict[str, Any] = {}
    for mode, weight in (("hybrid", 0.5), ("bm25", 1.0), ("dense", 0.0)):
        out[mode] = percentiles(timed(lambda q, w=weight: session.search(q, k=K, bm25_weight=w, rerank=False), queries))
    parts: dict[str, list[float]] = {}
    for query in queries:
        for key, value in session.search(query, k=K, bm25_weight=0.5, rerank=False).timings_ms.items():
            parts.setdefault(key, []).append(value)
    out["hybrid_parts_ms"] = {key: float(np.median(values)) for key, values in parts.items()}
    out["bm25_alone"] = percentiles(timed(lambda q: session.document_index.bm25.search(q, CANDIDATES), queries))
    out["registry_read_ms"] = percentiles(
        timed(lambda _q: session.document_index.registry.live_versions(), queries[:20])
    )[0]
    return out


STARTUP_PROBE = """
import json, sys, time
t0 = time.perf_counter()
from ragchat.application import open_session
from core.settings import get_settings
t1 = time.perf_counter()
session = open_session(get_settings())
parts = {}
if sys.argv[2] == "parts":  # one step at a time (the session may overlap some of them on its own)
    mark = time.perf_counter()
    bm25_rows = len(session.document_index.bm25)
    parts["bm25_s"], mark = time.perf_counter() - mark, time.perf_counter()
    import chromadb
    parts["chromadb_import_s"], mark = time.perf_counter() - mark, time.perf_counter()
    chroma_rows = session.document_index.store.count()
    parts["chroma_open_s"], mark = time.perf_counter() - mark, time.perf_counter()
    import fastembed
    parts["fastembed_import_s"], mark = time.perf_counter() - mark, time.perf_counter()
    session.app.embedder
    parts["embedder_s"], mark = time.perf_counter() - mark, time.perf_counter()
    from core.language import LanguageDetector
    LanguageDetector.from_settings(session.settings)("warm")
    parts["langid_s"], mark = time.perf_counter() - mark, time.perf_counter()
    parts.update(bm25_rows=bm25_rows, chroma_rows=chroma_rows)
mark = time.perf_counter()
hits = session.search(sys.argv[1], k=10, rerank=False).hits
t2 = time.perf_counter()
print(json.dumps({"import_s": t1 - t0, "startup_s": t2 - t1, "first_search_s": t2 - mark, "hits": len(hits), **parts}))
"""


def probe(env: dict[str, str], query: str, mode: str, tree: Path = PROJECT_ROOT) -> dict[str, Any]:
    started = time.perf_counter()
    done = subprocess.run(
        [sys.executable, "-c", STARTUP_PROBE, query, mode],
        env=env | {"PYTHONPATH": str(tree)},
        cwd=tree,
        capture_output=True,
        text=True,
    )
    if done.returncode != 0:
        raise SystemExit(f"start-up probe failed:\n{done.stderr[-3000:]}")
    return {**json.loads(done.stdout.strip().splitlines()[-1]), "process_s": time.perf_counter() - started}


def startup(home: Path, query: str, reranker_dir: Path | None, reference: Path | None) -> dict[str, Any]:
    """The real path (construct, then search) in fresh interpreters: once cold, then WARM_STARTS times with a warm
    OS cache (median kept: single runs vary by +-30% here); then once step by step for the breakdown, and once
    without cached bytecode. With a reference tree, its code starts as often, alternately with this code's.

    Python may write its bytecode caches, as a user's Python does: with PYTHONDONTWRITEBYTECODE=1 (set on
    this machine) and no `__pycache__` yet, every start compiled the sources of chromadb, fastembed and
    the rest again (~0.9 s of a 3.6 s start under load); the last figure shows that case."""
    env = {k: v for k, v in os.environ.items() if k != "PYTHONDONTWRITEBYTECODE"} | {"RAGCHAT_HOME": str(home)}
    if reranker_dir:
        env["RAGCHAT_RERANKER_DIR"] = str(reranker_dir)
    trees = {"current": PROJECT_ROOT} | ({"reference": reference} if reference else {})
    cold = {name: probe(env, query, "total", tree) for name, tree in trees.items()}
    warm: dict[str, list[dict[str, Any]]] = {name: [] for name in trees}
    for _ in range(WARM_STARTS):
        for name, tree in trees.items():
            warm[name].append(probe(env, query, "total", tree))
    middle = {name: sorted(runs, key=lambda run: run["startup_s"])[len(runs) // 2] for name, runs in warm.items()}
    with tempfile.TemporaryDirectory(prefix="ragchat-bench-no-pycache-") as empty:
        uncached = probe(env | {"PYTHONDONTWRITEBYTECODE": "1", "PYTHONPYCACHEPREFIX": empty}, query, "total")
    return {
        **middle["current"],
        "cold_startup_s": cold["current"]["startup_s"],
        "warm_range_s": (min(r["startup_s"] for r in warm["current"]), max(r["startup_s"] for r in warm["current"])),
        "uncached_startup_s": uncached["startup_s"],
        "reference_startup_s": middle["reference"]["startup_s"] if reference else None,
        "parts": probe(env, query, "parts"),
    }


def baseline_speed(session: Session, chunks: list[Chunk], vectors: np.ndarray, queries: list[str]) -> dict[str, Any]:
    started = time.perf_counter()
    bm25_retriever = build_langchain_bm25(chunks)
    build_s = time.perf_counter() - started
    ensemble = build_ensemble(session, bm25_retriever, chunks, vectors)
    samples = timed(ensemble.invoke, queries, budget_s=BASELINE_BUDGET_S)
    del ensemble, bm25_retriever
    gc.collect()
    return {"build_s": build_s, "latency": percentiles(samples), "queries": len(samples)}


def real_embedder_rate(session: Session, chunks: list[Chunk]) -> float:
    """Chunks/s of the real embedder on 64 synthetic chunks, to show why the bench uses random vectors."""
    sample = [c.text for c in chunks[:64]]
    session.app.embedder.embed(sample[:2])
    started = time.perf_counter()
    session.app.embedder.embed(sample)
    return len(sample) / (time.perf_counter() - started)


def run_size(n: int, args: argparse.Namespace, largest: bool) -> dict[str, Any]:
    log(f"speed: {n:,} chunks")
    started = time.perf_counter()
    chunks = synthetic_chunks(n, SEED)
    vectors = random_vectors(n, SEED)
    queries = synthetic_queries(chunks, args.queries, SEED)
    log(f"  generated in {time.perf_counter() - started:.1f} s")
    result: dict[str, Any] = {"n": n, "docs": len({c.doc_id for c in chunks}), "load_avg": [os.getloadavg()[0]]}
    with speed_home(n, args.keep_home) as (home, kept_load), reference_tree(args.reference_rev) as reference:
        session = open_session(get_settings(home=home, reranker_dir=args.reranker_dir, candidates=CANDIDATES))
        result["reused"] = kept_load is not None
        result["load"] = kept_load or bulk_load(session, chunks, vectors)
        if args.keep_home and kept_load is None:
            save_load_times(home, result["load"])
        log("  search latency")
        result["latency"] = search_latencies(session, queries)
        if reference:
            log(f"  side by side with {args.reference_rev}: latency and ranking")
            result["ranking"] = side_by_side(home, queries, reference, args.reference_rev)
        result["embedder_rate"] = real_embedder_rate(session, chunks)
        log("  start-up (subprocess, twice)")
        result["startup"] = startup(home, queries[0], args.reranker_dir, reference)
        log("  baseline (LangChain)")
        result["baseline"] = baseline_speed(session, chunks, vectors, queries)
        if largest and not args.keep_home:  # libraries first: they must see the same corpus as our index
            log("  BM25 libraries")
            result["libraries"] = compare_bm25_libraries(session, chunks, queries, result["load"].bm25_s)
            log("  20-page PDF into this home and into an empty one")
            result["pdf"] = pdf_ingest(session, home.parent, args)
        del session
    result["load_avg"].append(os.getloadavg()[0])
    return result


@contextmanager
def speed_home(n: int, keep: Path | None) -> Iterator[tuple[Path, LoadTimes | None]]:
    """A temporary home, or with --keep-home one kept in DIR/size-N and reused by later runs (a home whose
    bulk load did not finish has no load.json and is built again). Yields the home and, when it was
    reused, the load times measured when it was built."""
    if keep is None:
        with temporary_home(f"speed-{n}") as home:
            yield home, None
        return
    home = keep / f"size-{n}" / "home"
    times = home.parent / "load.json"
    if not times.exists():
        shutil.rmtree(home.parent, ignore_errors=True)
    try:
        yield home, LoadTimes(**json.loads(times.read_text(encoding="utf-8"))) if times.exists() else None
    finally:
        release_chroma()


def save_load_times(home: Path, load: LoadTimes) -> None:
    (home.parent / "load.json").write_text(json.dumps(asdict(load)), encoding="utf-8")


SEARCH_PROBE = """
import json, sys, time
from ragchat.application import open_session
from core.settings import get_settings
session = open_session(get_settings(retrieval_candidates=int(sys.argv[1])))
queries = json.loads(sys.stdin.read())
search = lambda q: session.search(q, k=10, bm25_weight=0.5, rerank=False).hits
for query in queries[:2]:
    search(query)
ids, seconds = [], []
for query in queries:
    started = time.perf_counter()
    hits = search(query)
    seconds.append(time.perf_counter() - started)
    ids.append([h.chunk.chunk_id for h in hits])
print(json.dumps({"ids": ids, "seconds": seconds}))
"""


@contextmanager
def reference_tree(rev: str) -> Iterator[Path | None]:
    """The code of git revision `rev`, exported to a temporary folder (None when rev is empty): run in
    subprocesses with this venv, on the same home, beside this code."""
    if not rev:
        yield None
        return
    with tempfile.TemporaryDirectory(prefix="ragchat-bench-reference-") as tmp:
        archive = subprocess.run(["git", "archive", rev], cwd=PROJECT_ROOT, capture_output=True, check=True)
        subprocess.run(["tar", "-x", "-C", tmp], input=archive.stdout, check=True)
        yield Path(tmp)


def probe_searches(tree: Path, home: Path, queries: list[str]) -> dict[str, Any]:
    """Hybrid top-10 ids and wall time per query, from the code in `tree`, in a fresh process."""
    env = dict(os.environ, RAGCHAT_HOME=str(home), PYTHONPATH=str(tree))
    done = subprocess.run(
        [sys.executable, "-c", SEARCH_PROBE, str(CANDIDATES)],
        input=json.dumps(queries),
        cwd=tree,
        env=env,
        capture_output=True,
        text=True,
    )
    if done.returncode != 0:
        raise SystemExit(f"search probe in {tree} failed:\n{done.stderr[-3000:]}")
    return json.loads(done.stdout.strip().splitlines()[-1])


def side_by_side(home: Path, queries: list[str], tree: Path, rev: str, rounds: int = 3) -> dict[str, Any]:
    """`rev`'s code and this code, each in its own process on the same home, alternately (`rounds` each,
    so a change in the machine's load touches both): hybrid latency, and whether they rank alike."""
    runs: dict[str, list[dict[str, Any]]] = {"reference": [], "current": []}
    for _ in range(rounds):
        runs["reference"].append(probe_searches(tree, home, queries))
        runs["current"].append(probe_searches(PROJECT_ROOT, home, queries))
    ours, reference = runs["current"][0]["ids"], runs["reference"][0]["ids"]
    overlaps = [len(set(a) & set(b)) / max(len(b), 1) for a, b in zip(ours, reference, strict=True)]
    return {
        "rev": rev,
        "rounds": rounds,
        "overlap": float(np.mean(overlaps)),
        "same_order": sum(a == b for a, b in zip(ours, reference, strict=True)) / len(queries),
        **{f"{name}_latency": percentiles([t for run in r for t in run["seconds"]]) for name, r in runs.items()},
    }


# ---- incremental ingest at the largest size -------------------------------------------------------
def write_pdf(path: Path, pages: int, seed: int) -> Path:
    """About 2,500 characters of varied sentences per page, with a heading (fpdf2, core font)."""
    rng = random.Random(seed)
    words, _ = vocabulary(seed)
    pdf = FPDF(format="A4")
    pdf.set_auto_page_break(auto=True, margin=12)
    pdf.set_margins(15, 12, 15)
    for number in range(1, pages + 1):
        pdf.add_page()
        pdf.set_font("Helvetica", style="B", size=13)
        heading = f"{number}. {rng.choice(ENGLISH).title()} {rng.choice(words).title()} report"
        pdf.multi_cell(0, 7, heading, new_x="LMARGIN")
        pdf.set_font("Helvetica", size=10)
        sentences = []
        while sum(len(s) for s in sentences) < 2500:
            picked = [rng.choice(ENGLISH if rng.random() < 0.6 else words) for _ in range(rng.randint(8, 18))]
            sentences.append(" ".join(picked).capitalize() + f" in week {rng.randint(1, 52)}.")
        pdf.multi_cell(0, 5, " ".join(sentences), new_x="LMARGIN")
    pdf.output(str(path))
    return path


def bm25_files(session: Session) -> dict[str, int]:
    return {p.name: p.stat().st_mtime_ns for p in session.settings.bm25_path.iterdir()}


def timed_ingest(session: Session, name: str, data: bytes) -> tuple[float, IngestResult]:
    started = time.perf_counter()
    result = session.ingest_bytes(name, data)
    seconds = time.perf_counter() - started
    if result.status != "indexed":
        raise SystemExit(f"PDF ingest failed: {result.error}")
    return seconds, result


def warm_embedder(session: Session, texts: list[str]) -> None:
    """One indexer-sized batch of the PDF's own chunks, so ONNX has seen such inputs before the clock starts."""
    session.app.embedder.embed(texts[: session.settings.embed_batch_size * 4])
    session.document_index.indexer  # noqa: B018 - opens Chroma and BM25 (and checks they are in step) before the clock starts


def ingest_into_empty(path: Path, texts: list[str], args: argparse.Namespace) -> float:
    with temporary_home("empty") as empty_home:
        empty = open_session(get_settings(home=empty_home, reranker_dir=args.reranker_dir))
        warm_embedder(empty, texts)
        seconds, _ = timed_ingest(empty, path.name, path.read_bytes())
        del empty
    return seconds


def pdf_ingest(session: Session, scratch: Path, args: argparse.Namespace) -> dict[str, Any]:
    """Two samples each way (the big home gets the PDF under a second name the second time); minimums kept."""
    path = write_pdf(scratch / "bench-20-pages.pdf", 20, SEED)
    data = path.read_bytes()
    settings = session.settings
    texts = [
        c.text for c in chunk_document(parse_document(path.name, data), settings.chunk_size, settings.chunk_overlap)
    ]
    empty_s = min(ingest_into_empty(path, texts, args) for _ in range(2))
    warm_embedder(session, texts)
    before_files, before_count = bm25_files(session), session.document_index.store.count()
    before_segments = session.document_index.bm25.segment_count
    seconds, result = timed_ingest(session, path.name, data)
    after_files = bm25_files(session)
    count_delta = session.document_index.store.count() - before_count
    segments_after = session.document_index.bm25.segment_count
    second_s, _ = timed_ingest(session, f"copy-{path.name}", data)
    segments = [name for name in before_files if name.endswith(".npz")]
    return {
        "pages": result.pages,
        "chunks": result.chunks,
        "seconds": min(seconds, second_s),
        "empty_seconds": empty_s,
        "count_delta": count_delta,
        "segments_before": before_segments,
        "segments_after": segments_after,
        "segments_untouched": sum(after_files.get(s) == before_files[s] for s in segments),
        "segments_removed": sum(s not in after_files for s in segments),
        "segments_rewritten": sum(s in after_files and after_files[s] != before_files[s] for s in segments),
        "segment_count_files": len(segments),
        "other_changed": sorted(
            n for n in after_files if not n.endswith(".npz") and after_files[n] != before_files.get(n)
        ),
    }


# ---- BM25 libraries ------------------------------------------------------------------------------
def compare_bm25_libraries(
    session: Session, chunks: list[Chunk], queries: list[str], ours_build_s: float
) -> dict[str, Any]:
    started = time.perf_counter()
    corpus_tokens = [tokenize(c.text) for c in chunks]
    tokenize_s = time.perf_counter() - started
    ours_top = {q: session.document_index.bm25.search(q, K) for q in queries}
    ours = {
        "build_s": ours_build_s,
        "latency": percentiles(timed(lambda q: session.document_index.bm25.search(q, K), queries)),
    }
    log("    rank_bm25")
    okapi = bench_rank_bm25(chunks, corpus_tokens, queries, ours_top)
    gc.collect()
    log("    bm25s")
    fast = bench_bm25s(chunks, corpus_tokens, queries, ours_top)
    return {"tokenize_s": tokenize_s, "ours": ours, "rank_bm25": okapi, "bm25s": fast}


def bench_rank_bm25(
    chunks: list[Chunk], corpus_tokens: list[list[str]], queries: list[str], ours_top: dict[str, Ranked]
) -> dict[str, Any]:
    from rank_bm25 import BM25Okapi

    started = time.perf_counter()
    okapi = BM25Okapi(corpus_tokens, k1=1.2, b=0.75)
    build_s = time.perf_counter() - started

    def search(query: str) -> Ranked:
        scores = okapi.get_scores(tokenize(query))
        top = np.argpartition(-scores, K)[:K]
        return [(chunks[i].chunk_id, float(scores[i])) for i in top[np.argsort(-scores[top])] if scores[i] > 0]

    samples = timed(search, queries, budget_s=BASELINE_BUDGET_S)
    return {
        "build_s": build_s,
        "latency": percentiles(samples),
        "queries": len(samples),
        **agreement(ours_top, search, 1.0),
    }


def bench_bm25s(
    chunks: list[Chunk], corpus_tokens: list[list[str]], queries: list[str], ours_top: dict[str, Ranked]
) -> dict[str, Any]:
    import bm25s

    started = time.perf_counter()
    index = bm25s.BM25(k1=1.2, b=0.75, method="lucene")
    index.index(corpus_tokens, show_progress=False)
    build_s = time.perf_counter() - started

    def search(query: str) -> Ranked:
        docs, scores = index.retrieve([tokenize(query)], k=K, show_progress=False)
        return [(chunks[int(i)].chunk_id, float(s)) for i, s in zip(docs[0], scores[0], strict=True) if s > 0]

    # bm25s's "lucene" scores leave out the constant factor (k1 + 1)
    samples = timed(search, queries)
    return {"build_s": build_s, "latency": percentiles(samples), **agreement(ours_top, search, 1.2 + 1)}


def agreement(ours: dict[str, Ranked], other: Callable[[str], Ranked], scale: float) -> dict[str, float]:
    """Share of our top-k ids the other library also returns (ties at the cut-off may differ), and share of
    queries whose top-k score lists are equal (after scaling the other's scores) - a check that all score alike."""
    shares: list[float] = []
    same_scores = 0
    for query, top in ours.items():
        theirs = other(query)
        if top:
            shares.append(len({cid for cid, _ in top} & {cid for cid, _ in theirs}) / len(top))
        mine, their = [s for _, s in top], [s * scale for _, s in theirs]
        same_scores += len(mine) == len(their) and bool(np.allclose(mine, their, rtol=1e-4, atol=1e-6))
    return {"overlap": float(np.mean(shares)) if shares else 0.0, "same_scores": same_scores / max(len(ours), 1)}


# ---- report --------------------------------------------------------------------------------------
def speed_rows(r: dict[str, Any]) -> list[tuple[str, str]]:
    load: LoadTimes = r["load"]
    lat, start, base = r["latency"], r["startup"], r["baseline"]
    steps = start["parts"]
    parts = lat["hybrid_parts_ms"]
    return [
        ("1-min load average at start → end of this size (2 CPUs)", f"{r['load_avg'][0]:.1f} → {r['load_avg'][1]:.1f}"),
        (
            "synthetic documents (registry rows)",
            f"{r['docs']:,}" + (" (home reused: load figures from its build)" if r["reused"] else ""),
        ),
        ("Chroma add, chunks/s", f"{r['n'] / load.store_s:,.0f}"),
        ("BM25 add, chunks/s", f"{r['n'] / load.bm25_s:,.0f}"),
        ("BM25 add, first / last batch s", f"{load.bm25_batches_s[0]:.2f} / {load.bm25_batches_s[-1]:.2f}"),
        ("registry, s (chunk texts, one row per document)", f"{load.registry_s:.2f}"),
        ("hybrid p50 / p95 ms", f"{lat['hybrid'][0]:.1f} / {lat['hybrid'][1]:.1f}"),
        ("bm25-only p50 / p95 ms", f"{lat['bm25'][0]:.1f} / {lat['bm25'][1]:.1f}"),
        ("dense-only p50 / p95 ms", f"{lat['dense'][0]:.1f} / {lat['dense'][1]:.1f}"),
        (
            "hybrid median parts ms: embed+registry / dense / bm25 / fuse+get",
            f"{parts.get('embed_ms', 0):.1f} / {parts.get('dense_ms', 0):.1f} / "
            f"{parts.get('bm25_ms', 0):.1f} / {parts.get('fuse_ms', 0):.1f}",
        ),
        ("BM25 index search alone p50 / p95 ms", f"{lat['bm25_alone'][0]:.1f} / {lat['bm25_alone'][1]:.1f}"),
        ("registry.live_versions() median ms", f"{lat['registry_read_ms']:.1f}"),
        (
            f"start-up s: warm median of {WARM_STARTS} (range; cold 1st run)",
            f"{start['startup_s']:.2f} ({start['warm_range_s'][0]:.2f}-{start['warm_range_s'][1]:.2f}; "
            f"{start['cold_startup_s']:.2f})",
        ),
        (
            "  step by step (last run): BM25 load / chromadb import + open / fastembed import + model load / "
            "language model / first search s",
            f"{steps['bm25_s']:.2f} / {steps['chromadb_import_s']:.2f} + {steps['chroma_open_s']:.2f} / "
            f"{steps['fastembed_import_s']:.2f} + {steps['embedder_s']:.2f} / {steps['langid_s']:.2f} / "
            f"{steps['first_search_s']:.2f} (sum {steps['startup_s']:.2f})",
        ),
        ("  start-up without cached bytecode (every source compiled again) s", f"{start['uncached_startup_s']:.2f}"),
        *reference_rows(r),
        (
            "  rows the start-up probe saw: BM25 / Chroma / hits",
            f"{steps['bm25_rows']:,} / {steps['chroma_rows']:,} / {start['hits']}",
        ),
        ("Python import s (ragchat.session)", f"{start['import_s']:.2f}"),
        ("whole subprocess s (interpreter to exit)", f"{start['process_s']:.2f}"),
        ("baseline BM25Retriever.from_texts build s", f"{base['build_s']:.2f}"),
        (
            "baseline EnsembleRetriever p50 / p95 ms (queries)",
            f"{base['latency'][0]:.1f} / {base['latency'][1]:.1f} ({base['queries']})",
        ),
        ("baseline p95 / hybrid p95", f"{base['latency'][1] / lat['hybrid'][1]:.1f}×"),
    ]


def reference_rows(r: dict[str, Any]) -> list[tuple[str, str]]:
    """The reference revision's figures from the same run, beside this code's (empty without one)."""
    if "ranking" not in r:
        return []
    rank, start = r["ranking"], r["startup"]
    ref, cur = rank["reference_latency"], rank["current_latency"]
    return [
        (
            f"side by side ({rank['rounds']} alternating processes each): hybrid p50 / p95 ms, {rank['rev']} → this",
            f"{ref[0]:.1f} / {ref[1]:.1f} → {cur[0]:.1f} / {cur[1]:.1f}",
        ),
        (
            f"side by side: warm start-up s (median of {WARM_STARTS}, alternating), {rank['rev']} → this code",
            f"{start['reference_startup_s']:.2f} → {start['startup_s']:.2f}",
        ),
    ]


def print_speed(results: list[dict[str, Any]], queries: int) -> None:
    print("\n### Speed against corpus size (synthetic chunks, random unit vectors)\n")
    rate = results[0]["embedder_rate"]
    print(
        f"Vectors are random: the real embedder ran at {rate:.0f} chunks/s on these ~150-word chunks, so embedding "
        f"100,000 of them would take about {100_000 / rate / 60:.0f} min. Each query is still embedded by the "
        f"real embedder inside the search timings. {queries} queries per size (2-5 corpus words each), "
        f"k={K}, candidates={CANDIDATES}, hybrid = w 0.5 with the default fusion "
        f"({Settings.model_fields['fusion'].default}), rerank off, no LLM.\n"
    )
    print("| figure | " + " | ".join(f"{r['n']:,}" for r in results) + " |")
    print("|---|" + "---:|" * len(results))
    table = [speed_rows(r) for r in results]
    for i, (label, _) in enumerate(table[0]):
        print(f"| {label} | " + " | ".join(rows[i][1] for rows in table) + " |")
    print_targets(results)
    largest = results[-1]
    if "pdf" in largest:
        print_pdf(largest["pdf"], largest["n"])
        print_libraries(largest["libraries"], largest["n"], queries)


def print_targets(results: list[dict[str, Any]]) -> None:
    at = next((r for r in results if r["n"] == TARGET_SIZE), results[-1])
    note = "" if at["n"] == TARGET_SIZE else f" (measured at {at['n']:,}: no {TARGET_SIZE:,} run)"
    hybrid_p95 = at["latency"]["hybrid"][1]
    startup_s = at["startup"]["startup_s"]
    ratio = at["baseline"]["latency"][1] / hybrid_p95
    print(f"\nTargets at {TARGET_SIZE:,} chunks{note}:\n")
    limit, low, least = TARGETS["hybrid_p95_ms"], TARGETS["startup_s"], TARGETS["baseline_ratio"]
    print(f"- hybrid p95 ≤ {limit:.0f} ms: {hybrid_p95:.1f} ms — {verdict(hybrid_p95, limit)}")
    print(f"- start-up ≤ {low:.1f} s: {startup_s:.2f} s — {verdict(startup_s, low)}")
    print(f"- baseline p95 / hybrid p95 ≥ {least:.0f}×: {ratio:.1f}× — {verdict(least, ratio)}")
    if "ranking" in at:
        rank = at["ranking"]
        print(
            f"- hybrid top-10 as {rank['rev']} ranks it: overlap {rank['overlap']:.0%} — "
            f"{verdict(1.0, rank['overlap'])} (same order in {rank['same_order']:.0%} of the queries)"
        )


def verdict(value: float, limit: float) -> str:
    return "met" if value <= limit else "NOT met"


def print_pdf(pdf: dict[str, Any], n: int) -> None:
    ratio = pdf["seconds"] / pdf["empty_seconds"]
    print(f"\n### Adding one {pdf['pages']}-page PDF at {n:,} chunks\n")
    print("| figure | value |\n|---|---:|")
    print(f"| ingest_bytes into the {n:,}-chunk home, s (best of 2) | {pdf['seconds']:.2f} |")
    print(f"| same PDF into an empty home, s (best of 2) | {pdf['empty_seconds']:.2f} |")
    print(f"| ratio (≈1: nothing else is re-indexed) | {ratio:.2f} |")
    print(f"| PDF pages / chunks / Chroma count grew by | {pdf['pages']} / {pdf['chunks']} / {pdf['count_delta']} |")
    print(f"| BM25 segments before → after | {pdf['segments_before']} → {pdf['segments_after']} |")
    print(
        f"| existing segment files untouched / merged away / rewritten in place | {pdf['segments_untouched']} / "
        f"{pdf['segments_removed']} / {pdf['segments_rewritten']} (of {pdf['segment_count_files']}) |"
    )
    print(f"| other BM25 files written | {', '.join(pdf['other_changed']) or 'none'} |")


def print_libraries(lib: dict[str, Any], n: int, queries: int) -> None:
    print(f"\n### BM25 libraries at {n:,} chunks (same corpus, same tokenizer, k1=1.2, b=0.75, top {K})\n")
    print(f"Tokenizing the corpus once with core.text.tokenize: {lib['tokenize_s']:.1f} s.\n")
    print(
        "| library | build s | search p50 / p95 ms (queries) | top-10 id overlap with ours | queries with equal "
        "top-10 scores |\n|---|---:|---:|---:|---:|"
    )
    ours = lib["ours"]
    print(
        f"| ingestion.bm25_index (incremental segments; build = the bulk load above, tokenizing + disk writes) | "
        f"{ours['build_s']:.1f} | {ours['latency'][0]:.1f} / {ours['latency'][1]:.1f} ({queries}) | 1.00 | 1.00 |"
    )
    okapi, fast = lib["rank_bm25"], lib["bm25s"]
    print(
        f"| rank_bm25 BM25Okapi (get_scores + top-k; build excludes tokenizing) | {okapi['build_s']:.1f} | "
        f"{okapi['latency'][0]:.1f} / {okapi['latency'][1]:.1f} ({okapi['queries']}) | {okapi['overlap']:.2f} | "
        f"{okapi['same_scores']:.2f} |"
    )
    print(
        f"| bm25s (lucene; build excludes tokenizing) | {fast['build_s']:.1f} | "
        f"{fast['latency'][0]:.1f} / {fast['latency'][1]:.1f} ({queries}) | {fast['overlap']:.2f} | "
        f"{fast['same_scores']:.2f} |"
    )
    print(
        "\n(search times include tokenizing the query; ids can differ where scores tie at the 10th place; "
        "rank_bm25 uses another IDF (log((N - df + 0.5) / (df + 0.5)), floored), so its scores differ; bm25s's "
        "lucene scores are compared after multiplying by k1 + 1)"
    )


def code_version() -> str:
    """HEAD and the files changed since, so a table can be matched to the code it measured."""
    try:
        head = subprocess.run(["git", "rev-parse", "--short", "HEAD"], cwd=PROJECT_ROOT, capture_output=True, text=True)
        dirty = subprocess.run(["git", "diff", "--name-only", "HEAD"], cwd=PROJECT_ROOT, capture_output=True, text=True)
    except OSError:
        return "unknown (no git)"
    changed = ", ".join(dirty.stdout.split())
    return f"commit {head.stdout.strip() or '?'}" + (f" plus uncommitted changes to {changed}" if changed else "")


def log(message: str) -> None:
    print(message, file=sys.stderr, flush=True)


def parse_args() -> argparse.Namespace:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0] if __doc__ else None)
    parser.add_argument("--squad", type=Path, default=DEFAULT_SQUAD, help=f"default: {DEFAULT_SQUAD}")
    parser.add_argument("--beir", type=Path, default=None, help="BEIR folder: corpus.jsonl, queries.jsonl, qrels/")
    parser.add_argument("--sizes", default="1000,10000,100000", help="corpus sizes for the speed part")
    parser.add_argument("--queries", type=int, default=100, help="latency queries per size (default 100)")
    parser.add_argument("--reranker-dir", type=Path, default=None, help="FlashRank cache: <dir>/<model name>/")
    parser.add_argument("--reranker-model", default=None, help="FlashRank model name (default: the setting)")
    parser.add_argument("--skip-quality", action="store_true")
    parser.add_argument("--skip-speed", action="store_true")
    parser.add_argument(
        "--keep-home",
        type=Path,
        default=None,
        help="build each size's home once in DIR/size-N and reuse it in later runs (the PDF ingest and the BM25 "
        "libraries, which need a fresh home or a long tokenizing pass, are left out)",
    )
    parser.add_argument(
        "--reference-rev",
        default=REFERENCE_REV,
        help=f"git revision whose hybrid top-10 the ranking check compares with (default {REFERENCE_REV}; '' skips)",
    )
    args = parser.parse_args()
    args.size_list = sorted({int(s.replace("_", "")) for s in args.sizes.split(",") if s.strip()})
    if args.queries < 1 or not args.size_list or min(args.size_list) < CHUNKS_PER_DOC:
        parser.error(f"--queries must be >= 1 and every size >= {CHUNKS_PER_DOC}")
    return args


def main() -> None:
    args = parse_args()
    began = time.perf_counter()
    print("## Retrieval benchmark (bench/retrieval.py)\n")
    print(
        f"{platform.platform()}, Python {platform.python_version()}, {os.cpu_count()} CPUs, "
        f"load average {os.getloadavg()[0]:.2f} at start; command: `{' '.join([Path(sys.executable).name, *sys.argv])}`"
    )
    print(f"Code under test: {code_version()}")
    if not args.skip_quality:
        datasets: list[Dataset] = []
        if (args.squad / "questions.jsonl").exists():
            datasets.append(load_squad(args.squad))
        else:
            print(f"\nSQuAD data not found in {args.squad}: that dataset is skipped.")
        if args.beir:
            datasets.append(load_beir(args.beir))
        for data in datasets:
            print_quality(data, run_quality(data, args), args.reranker_dir)
    if not args.skip_speed:
        results = [run_size(n, args, n == args.size_list[-1]) for n in args.size_list]
        print_speed(results, args.queries)
    print(f"\nWall time {time.perf_counter() - began:.0f} s; load average {os.getloadavg()[0]:.2f} at end.")


if __name__ == "__main__":
    main()
