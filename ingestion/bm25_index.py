"""A persistent, incremental BM25 index over the same chunks as the vector store.

Built like a small Lucene: the index is a list of immutable *segments*. Each segment is a sparse
term-frequency matrix in CSC form (one column per term, so a query term is one slice) with the chunk
ids, document ids and document-version hashes of its rows, saved as one `.npz`. Adding a document
writes one new segment and never touches the others; deleting one flips rows off in the segment's
`alive` mask. When there are more than `MAX_SEGMENTS`, the smallest are merged (rows are copied, no
text is re-tokenized). BM25 itself is computed at query time from the live rows, so IDF and average
length are always exact after deletes.

Every write commits by atomically replacing `manifest.json`; files it does not name are leftovers of
an interrupted write (or of a replaced state) and are removed on the next commit. Start-up loads the
vocabulary and the segments with numpy: nothing is re-read from Chroma.

Several processes may share the directory: one writes at a time (the caller holds the home's write
lock, ingestion/write_lock.py) and calls `reload_if_changed()` first, so it commits on top of what
the previous writer left; a reader never writes, and reloads when the manifest was replaced. A reader
that finds a file gone between reading the manifest and loading it (a writer committed meanwhile)
reads the new manifest and loads again.

Each row keeps its chunk's language (detected at ingest) and was tokenized with that language's
stemmer; a query is tokenized for its own language and for every language the live rows hold, and
the union of those terms is searched. An English-only index and an English query give exactly the
terms they always did. Segments written before languages were kept read as English.

Why not rank-bm25 or bm25s: both index a fixed corpus (an add or delete rebuilds everything), and
rank-bm25 scores with a Python loop over every document; bench/retrieval.py measures all three.
"""

from __future__ import annotations

import json
import mmap
import os
import struct
import threading
import uuid
import zipfile
from collections.abc import Callable, Collection, Iterable
from dataclasses import dataclass, field
from pathlib import Path

import numpy as np
from scipy import sparse

from core.text import tokenize

MAX_SEGMENTS = 8
FORMAT_VERSION = 1


@dataclass
class Segment:
    name: str
    tf: sparse.csc_matrix  # rows: chunks, columns: term ids (may be fewer than the vocabulary)
    lengths: np.ndarray  # terms per chunk
    chunk_ids: np.ndarray
    doc_ids: np.ndarray
    hashes: np.ndarray
    alive: np.ndarray  # bool per row
    langs: np.ndarray  # the language each row was tokenized for (ISO 639-1)
    mask_file: str = ""  # where `alive` is saved; empty until the next commit writes it
    _language_counts: dict[str, int] = field(default_factory=dict, repr=False)
    _languages_for: np.ndarray | None = field(default=None, repr=False)

    @property
    def live_count(self) -> int:
        return int(self.alive.sum())

    def language_counts(self) -> dict[str, int]:
        """How many live rows each language holds, cached until `alive` is replaced (it is never edited
        in place): a search needs the languages, and np.unique over 100k rows takes ~13 ms."""
        if self._languages_for is not self.alive:
            self._language_counts = _counts(self.langs[self.alive])
            self._languages_for = self.alive
        return self._language_counts


@dataclass
class _Stats:
    """What every search needs of the live rows besides the postings, the same for every query until a
    commit: each was recomputed per query over all 100k rows (~1 ms of a 2 ms search)."""

    alive: list[np.ndarray]  # the masks these figures were computed from
    languages: frozenset[str]
    language_counts: dict[str, int]  # live rows per language
    total: int  # live rows
    norms: list[np.ndarray]  # per segment: k1 * (1 - b + b * length / average length)
    dead: list[np.ndarray | None]  # per segment: rows turned off, None when there are none

    @classmethod
    def of(cls, segments: list[Segment], k1: float, b: float) -> _Stats:
        total = sum(s.live_count for s in segments)
        avg_length = sum(float(s.lengths[s.alive].sum()) for s in segments) / total if total else 1.0
        counts = _summed(s.language_counts() for s in segments)
        return cls(
            alive=[s.alive for s in segments],
            languages=frozenset(counts),
            language_counts=counts,
            total=total,
            norms=[k1 * (1 - b + b * s.lengths / avg_length) for s in segments],
            dead=[None if s.alive.all() else np.flatnonzero(~s.alive) for s in segments],
        )

    def describes(self, segments: list[Segment]) -> bool:
        return len(segments) == len(self.alive) and all(
            s.alive is alive for s, alive in zip(segments, self.alive, strict=True)
        )


def _counts(langs: np.ndarray) -> dict[str, int]:
    """How many rows each language holds."""
    values, n = np.unique(langs, return_counts=True)
    return {str(value): int(count) for value, count in zip(values, n, strict=True)}


def _summed(counts: Iterable[dict[str, int]]) -> dict[str, int]:
    total: dict[str, int] = {}
    for part in counts:
        for lang, n in part.items():
            total[lang] = total.get(lang, 0) + n
    return total


class BM25Index:
    """Okapi BM25 (k1, b) with Lucene's non-negative IDF. Thread-safe; writes are serialized."""

    def __init__(self, directory: Path, k1: float = 1.2, b: float = 0.75) -> None:
        self.directory = directory
        self.k1 = k1
        self.b = b
        self._lock = threading.RLock()
        self._terms: dict[str, int] = {}
        self._vocab: list[str] = []
        self._segments: list[Segment] = []
        self._loaded_manifest: tuple[int, int, int] | None = None
        self._vocab_bytes = 0  # size of vocab.txt holding exactly the committed terms
        self._stats: _Stats | None = None
        self._load()

    # ---- reading -------------------------------------------------------------------------------
    def __len__(self) -> int:
        return sum(s.live_count for s in self._segments)

    @property
    def segment_count(self) -> int:
        return len(self._segments)

    def languages(self, doc_ids: Collection[str] | None = None) -> dict[str, int]:
        """How many live chunks each language holds, of the documents `doc_ids` (all when None: kept
        between commits, as a question asks for them every time)."""
        with self._lock:
            segments = list(self._segments)
        if doc_ids is None:
            return dict(self._stats_of(segments).language_counts)
        wanted = list(doc_ids)
        return _summed(_counts(s.langs[s.alive & np.isin(s.doc_ids, wanted)]) for s in segments)

    def live_ids(self) -> set[str]:
        """Ids of every live chunk (consistency checks against the vector store)."""
        with self._lock:
            return {str(cid) for s in self._segments for cid in s.chunk_ids[s.alive]}

    def search(
        self, query: str, k: int, query_lang: str | None = None, doc_ids: Collection[str] | None = None
    ) -> list[tuple[str, float]]:
        """The k best (chunk_id, score) pairs, best first; chunks sharing no term are not returned, nor,
        when `doc_ids` is given, chunks of other documents. The query is tokenized for `query_lang` and
        for each language the index holds (the statistics stay those of the whole index)."""
        with self._lock:
            segments = list(self._segments)
        stats = self._stats_of(segments)
        langs = stats.languages | ({query_lang} if query_lang else set())
        terms = {t for lang in sorted(langs or {"en"}) for t in tokenize(query, lang)}
        term_ids = sorted({self._terms[t] for t in terms if t in self._terms})
        total = stats.total
        if not term_ids or total == 0:
            return []
        results: list[tuple[float, str]] = []
        scores = [np.zeros(s.tf.shape[0], dtype=np.float32) for s in segments]
        for term_id in term_ids:
            postings = [_column(s, term_id) for s in segments]
            df = sum(
                len(rows) if dead is None else int(s.alive[rows].sum())
                for s, dead, (rows, _) in zip(segments, stats.dead, postings, strict=True)
            )
            if df == 0:
                continue
            idf = np.log(1 + (total - df + 0.5) / (df + 0.5))
            for segment_scores, norm, (rows, tf) in zip(scores, stats.norms, postings, strict=True):
                segment_scores[rows] += idf * tf * (self.k1 + 1) / (tf + norm[rows])
        for segment, dead, segment_scores in zip(segments, stats.dead, scores, strict=True):
            if dead is not None:
                segment_scores[dead] = 0
            if doc_ids is not None:
                segment_scores[~np.isin(segment.doc_ids, list(doc_ids))] = 0
            candidates = np.flatnonzero(segment_scores > 0)
            if candidates.size > k:
                candidates = candidates[np.argpartition(-segment_scores[candidates], k - 1)[:k]]
            results.extend((float(segment_scores[i]), str(segment.chunk_ids[i])) for i in candidates)
        results.sort(key=lambda pair: (-pair[0], pair[1]))
        return [(chunk_id, score) for score, chunk_id in results[:k]]

    def _stats_of(self, segments: list[Segment]) -> _Stats:
        """The search statistics of these segments, computed again only when a segment or its `alive`
        mask was replaced (a commit or a reload; masks are never edited in place)."""
        stats = self._stats
        if stats is None or not stats.describes(segments):
            stats = self._stats = _Stats.of(segments, self.k1, self.b)
        return stats

    # ---- writing -------------------------------------------------------------------------------
    def add(
        self,
        chunk_ids: list[str],
        texts: list[str],
        doc_ids: list[str],
        hashes: list[str],
        langs: list[str] | None = None,
    ) -> None:
        """Index new chunks as one segment, each tokenized for its language (`langs`, English when
        None). Re-adding a chunk id replaces the old row."""
        if not chunk_ids:
            return
        langs = langs or ["en"] * len(chunk_ids)
        tokenized = [tokenize(text, lang) for text, lang in zip(texts, langs, strict=True)]
        self.directory.mkdir(parents=True, exist_ok=True)
        with self._lock:
            vocab_before = len(self._vocab)
            rows: list[int] = []
            cols: list[int] = []
            for row, terms in enumerate(tokenized):
                for term in terms:
                    term_id = self._terms.get(term)
                    if term_id is None:
                        term_id = self._terms[term] = len(self._vocab)
                        self._vocab.append(term)
                    rows.append(row)
                    cols.append(term_id)
            tf = sparse.csc_matrix(
                (np.ones(len(rows), dtype=np.float32), (rows, cols)), shape=(len(chunk_ids), len(self._vocab))
            )
            tf.sum_duplicates()
            self._kill(lambda s: np.isin(s.chunk_ids, chunk_ids))
            self._segments.append(
                Segment(
                    name=_new_name(),
                    tf=tf,
                    lengths=np.array([len(t) for t in tokenized], dtype=np.float32),
                    chunk_ids=np.array(chunk_ids),
                    doc_ids=np.array(doc_ids),
                    hashes=np.array(hashes),
                    alive=np.ones(len(chunk_ids), dtype=bool),
                    langs=np.array(langs),
                )
            )
            self._merge_small_segments()
            self._append_vocab(self._vocab[vocab_before:])
            self._commit()

    def delete_document(self, doc_id: str, keep_hash: str | None = None, only_hash: str | None = None) -> int:
        """Remove a document's chunks; with keep_hash, only those of its other versions; with
        only_hash, only those of that version."""

        def match(segment: Segment) -> np.ndarray:
            hit = segment.doc_ids == doc_id
            if keep_hash is not None:
                hit &= segment.hashes != keep_hash
            if only_hash is not None:
                hit &= segment.hashes == only_hash
            return hit

        with self._lock:
            removed = self._kill(match)
            if removed:
                self._commit()
            return removed

    def clear(self) -> None:
        with self._lock:
            self._segments = []
            self._terms, self._vocab = {}, []
            self._commit()
            (self.directory / "vocab.txt").write_text("", encoding="utf-8")
            self._vocab_bytes = 0

    # ---- internals -----------------------------------------------------------------------------
    def _kill(self, predicate: Callable[[Segment], np.ndarray]) -> int:
        """Turn matching live rows off. Masks are replaced, never edited, so a reader or an
        uncommitted write never sees half a change; each changed mask gets a new file at commit."""
        removed = 0
        for segment in self._segments:
            match = predicate(segment) & segment.alive
            if match.any():
                removed += int(match.sum())
                segment.alive = segment.alive & ~match
                segment.mask_file = ""
        return removed

    def _merge_small_segments(self) -> None:
        """Keep at most MAX_SEGMENTS: merge the smallest ones (by live rows) into one, dropping dead rows."""
        self._segments = [s for s in self._segments if s.live_count > 0]
        if len(self._segments) <= MAX_SEGMENTS:
            return
        by_size = sorted(self._segments, key=lambda s: s.live_count)
        merging = by_size[: len(self._segments) - MAX_SEGMENTS + 1]
        width = len(self._vocab)
        merged = Segment(
            name=_new_name(),
            tf=sparse.vstack([_widen(s.tf[s.alive], width) for s in merging], format="csc"),
            lengths=np.concatenate([s.lengths[s.alive] for s in merging]),
            chunk_ids=np.concatenate([s.chunk_ids[s.alive] for s in merging]),
            doc_ids=np.concatenate([s.doc_ids[s.alive] for s in merging]),
            hashes=np.concatenate([s.hashes[s.alive] for s in merging]),
            alive=np.ones(sum(s.live_count for s in merging), dtype=bool),
            langs=np.concatenate([s.langs[s.alive] for s in merging]),
        )
        names = {s.name for s in merging}
        self._segments = [s for s in self._segments if s.name not in names] + [merged]

    def _append_vocab(self, terms: list[str]) -> None:
        """Add new terms to vocab.txt after the committed ones; terms a killed write appended and never
        committed are cut off first, so line n is always term id n."""
        path = self.directory / "vocab.txt"
        if path.exists() and path.stat().st_size != self._vocab_bytes:
            committed = _vocab_text(self._vocab[: len(self._vocab) - len(terms)])
            tmp = path.with_suffix(".tmp-vocab")
            tmp.write_bytes(committed)
            os.replace(tmp, path)
        if terms:
            added = _vocab_text(terms)
            with path.open("ab") as handle:
                handle.write(added)
                handle.flush()
                os.fsync(handle.fileno())
            self._vocab_bytes += len(added)

    def _commit(self) -> None:
        """Write new segments and masks under fresh names, then switch the manifest to them."""
        self.directory.mkdir(parents=True, exist_ok=True)
        for segment in self._segments:
            if not (self.directory / f"{segment.name}.npz").exists():
                tf = segment.tf
                np.savez(
                    self.directory / f"{segment.name}.npz",
                    indptr=tf.indptr,
                    indices=tf.indices,
                    data=tf.data,
                    shape=np.array(tf.shape),
                    lengths=segment.lengths,
                    chunk_ids=segment.chunk_ids,
                    doc_ids=segment.doc_ids,
                    hashes=segment.hashes,
                    langs=segment.langs,
                )
            if not segment.mask_file:
                segment.mask_file = f"{segment.name}.{uuid.uuid4().hex[:8]}.alive.npy"
                np.save(self.directory / segment.mask_file, segment.alive)
        manifest = {
            "format": FORMAT_VERSION,
            "vocab_size": len(self._vocab),
            "segments": [{"name": s.name, "mask": s.mask_file} for s in self._segments],
        }
        path = self.directory / "manifest.json"
        tmp = path.with_suffix(".tmp")
        tmp.write_text(json.dumps(manifest), encoding="utf-8")
        os.replace(tmp, path)
        self._loaded_manifest = _signature(path)
        keep = {"manifest.json", "vocab.txt"}
        keep |= {name for s in self._segments for name in (f"{s.name}.npz", s.mask_file)}
        for leftover in self.directory.iterdir():
            if leftover.name not in keep:
                leftover.unlink(missing_ok=True)

    def reload_if_changed(self) -> bool:
        """Load the committed state again when another process replaced the manifest since this one
        loaded or wrote it. Returns whether it did."""
        with self._lock:
            if _signature(self.directory / "manifest.json") == self._loaded_manifest:
                return False
            self._load()
            return True

    def _load(self, attempts: int = 5) -> None:
        """The committed state, read without writing anything. A file the manifest names can vanish
        while it is read (a writer in another process committed and removed it): read the new
        manifest and start again."""
        for attempt in range(attempts):
            try:
                self._read_committed()
                return
            except FileNotFoundError:
                if attempt == attempts - 1:
                    raise

    def _read_committed(self) -> None:
        path = self.directory / "manifest.json"
        signature = _signature(path)
        segments: list[Segment] = []
        if signature is None:
            self._vocab, self._terms, self._segments, self._loaded_manifest = [], {}, [], None
            self._vocab_bytes = 0
            return
        manifest = json.loads(path.read_text(encoding="utf-8"))
        if manifest.get("format") != FORMAT_VERSION:
            raise ValueError(f"BM25 index format {manifest.get('format')} in {self.directory} is not supported")
        # Terms past vocab_size were appended by a write that has not committed (or never will): ignored
        # here, and cut off by the next commit.
        vocab = (self.directory / "vocab.txt").read_text(encoding="utf-8").split("\n")[: manifest["vocab_size"]]
        for entry in manifest["segments"]:
            data = _map_npz(self.directory / f"{entry['name']}.npz")
            tf = sparse.csc_matrix(
                (data["data"], data["indices"], data["indptr"]), shape=tuple(int(x) for x in data["shape"])
            )
            segments.append(
                Segment(
                    name=entry["name"],
                    tf=tf,
                    lengths=data["lengths"],
                    chunk_ids=data["chunk_ids"],
                    doc_ids=data["doc_ids"],
                    hashes=data["hashes"],
                    langs=data["langs"] if "langs" in data else np.full(len(data["chunk_ids"]), "en"),
                    alive=np.load(self.directory / entry["mask"]),
                    mask_file=entry["mask"],
                )
            )
        with self._lock:
            self._vocab, self._terms = vocab, {term: i for i, term in enumerate(vocab)}
            self._vocab_bytes = len(_vocab_text(vocab))
            self._segments, self._loaded_manifest = segments, signature


def _vocab_text(terms: list[str]) -> bytes:
    """vocab.txt's bytes for these terms: one per line."""
    return "".join(f"{t}\n" for t in terms).encode("utf-8")


def _map_npz(path: Path) -> dict[str, np.ndarray]:
    """The arrays of an uncompressed .npz (what `np.savez` writes), memory-mapped read-only rather than
    read (`np.load` ignores mmap_mode for .npz): opening 100k chunks' segments copied ~100 MB at
    every start, while a search touches only its terms' postings. Segment files are never rewritten
    (a commit writes new names and unlinks old ones, which keeps a mapping valid), so a mapping
    cannot change under a reader."""
    arrays: dict[str, np.ndarray] = {}
    with path.open("rb") as handle, zipfile.ZipFile(handle) as archive:
        buffer = mmap.mmap(handle.fileno(), 0, access=mmap.ACCESS_READ)
        for info in archive.infolist():
            if info.compress_type != zipfile.ZIP_STORED:
                raise ValueError(f"{path}: {info.filename} is compressed; BM25 segments are written uncompressed")
            # local file header: 30 bytes, then the name and an extra field, whose lengths end the header
            name_length, extra_length = struct.unpack("<HH", buffer[info.header_offset + 26 : info.header_offset + 30])
            handle.seek(info.header_offset + 30 + name_length + extra_length)
            version = np.lib.format.read_magic(handle)
            read_header = (
                np.lib.format.read_array_header_1_0 if version == (1, 0) else np.lib.format.read_array_header_2_0
            )
            shape, fortran_order, dtype = read_header(handle)
            count = int(np.prod(shape))
            array = (
                np.frombuffer(buffer, dtype=dtype, count=count, offset=handle.tell()) if count else np.empty(0, dtype)
            )
            arrays[info.filename.removesuffix(".npy")] = array.reshape(shape, order="F" if fortran_order else "C")
    return arrays


def _signature(path: Path) -> tuple[int, int, int] | None:
    """Which manifest file this is: os.replace gives every commit a new inode."""
    try:
        stat = path.stat()
    except FileNotFoundError:
        return None
    return (stat.st_ino, stat.st_mtime_ns, stat.st_size)


def _column(segment: Segment, term_id: int) -> tuple[np.ndarray, np.ndarray]:
    """Rows containing the term, and the term's frequency in each."""
    tf = segment.tf
    if term_id >= tf.shape[1]:
        return np.empty(0, dtype=np.int32), np.empty(0, dtype=np.float32)
    begin, end = tf.indptr[term_id], tf.indptr[term_id + 1]
    return tf.indices[begin:end], tf.data[begin:end]


def _widen(matrix: sparse.spmatrix, width: int) -> sparse.csc_matrix:
    """Older segments have fewer term columns than the vocabulary has now."""
    csc = sparse.csc_matrix(matrix)
    if csc.shape[1] == width:
        return csc
    indptr = np.concatenate([csc.indptr, np.full(width - csc.shape[1], csc.indptr[-1], dtype=csc.indptr.dtype)])
    return sparse.csc_matrix((csc.data, csc.indices, indptr), shape=(csc.shape[0], width))


def _new_name() -> str:
    return f"seg-{uuid.uuid4().hex[:12]}"
