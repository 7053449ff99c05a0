"""Text measures shared by every layer: BM25 terms and estimated LLM tokens.

Terms for BM25: the same function tokenizes chunks at ingest and queries at search time.

Case, accents and punctuation are folded away ("Café," → "cafe"); words are stemmed (Snowball, in
the text's language: English unless told otherwise) so "limitations" finds "limitation" and
"logements" finds "logement"; English stop words are dropped from English text only (BM25's IDF
weighs down the function words of other languages); numbers and codes stay whole and are also split into
their parts, so "$50M" matches "50M" and "50 million", "Q4 2025" matches "Q4", "v2.3" matches
"version 2.3", and "1,000" matches "1000".
"""

from __future__ import annotations

import re
import unicodedata
from functools import lru_cache

import Stemmer

from core.language import stemmer_algorithm

# Runs of letters/digits, joined by '.', ',', '-', '/' or "'" only *inside* the run ("v2.3", "1,000",
# "covid-19"); a currency or percent sign is dropped by the fold below.
_RAW = re.compile(r"\w+(?:[.,\-/'’]\w+)*")
_PARTS = re.compile(r"\d+(?:\.\d+)?|[^\W\d_]+")
_THOUSANDS = re.compile(r"(?<=\d),(?=\d{3}\b)")

STOPWORDS = frozenset(
    """a an and are as at be but by for from has have he her his i if in into is it its of on or our she
    so than that the their them then there these they this to was we were what when where which who whom
    why will with you your do does did not no can could would should may might must shall been being am
    how about over under again further once here all any both each few more most other some such only own
    same too very s t just don now""".split()
)


@lru_cache(maxsize=64)
def _stemmer(lang: str) -> Stemmer.Stemmer | None:
    """PyStemmer (the Snowball C library; nltk's pure-Python stemmer takes ~4 s just to import) for
    this language, or None for a language Snowball has no stemmer for."""
    algorithm = stemmer_algorithm(lang)
    return Stemmer.Stemmer(algorithm) if algorithm else None


def _stem(word: str, lang: str) -> str:
    stemmer = _stemmer(lang)
    return stemmer.stemWord(word) if stemmer is not None else word


def _fold(text: str) -> str:
    """Lower case without accents: NFKD, then drop combining marks."""
    decomposed = unicodedata.normalize("NFKD", text.lower())
    return "".join(ch for ch in decomposed if not unicodedata.combining(ch))


@lru_cache(maxsize=262_144)
def _word_terms(word: str, lang: str) -> tuple[str, ...]:
    """The terms of one run of letters and digits. Cached whole: words repeat, and each costs a fold,
    two regular expressions and a stem (the per-word caches before this one left BM25's tokenizing at
    ~2.3 s of a 2,415-page manual's keyword pass)."""
    raw = _THOUSANDS.sub("", _fold(word))
    parts = _PARTS.findall(raw)
    stop = STOPWORDS if lang == "en" else frozenset()
    if len(parts) == 1 and parts[0] == raw:
        if raw.isdigit() or raw not in stop:
            return (raw if raw[0].isdigit() else _stem(raw, lang),)
        return ()
    # A compound ("q4", "v2.3", "covid-19", "50m"): keep it whole, and add its meaningful parts.
    return (
        raw.replace("_", ""),
        *(
            part if part[0].isdigit() else _stem(part, lang)
            for part in parts
            if part[0].isdigit() or (len(part) > 1 and part not in stop)
        ),
    )


def tokenize(text: str, lang: str = "en") -> list[str]:
    """BM25 terms of `text`, written in `lang` (ISO 639-1)."""
    terms: list[str] = []
    for match in _RAW.finditer(text):
        terms.extend(_word_terms(match.group(), lang))
    return terms


# LLM tokens are estimated as UTF-8 bytes ÷ 3. That over-counts English for the Qwen and Llama BPE
# vocabularies (about 4 bytes a token) and is about right for CJK (3 bytes a character, about one
# token each), so the estimate errs on the safe side; bench/time_to_first_token.py prints the ratio
# of estimated to actual prompt tokens.
BYTES_PER_TOKEN = 3


def estimate_tokens(text: str) -> int:
    return len(text.encode("utf-8")) // BYTES_PER_TOKEN + 1


_DIGIT = re.compile(r"\d")


def estimate_prompt_tokens(text: str) -> int:
    """`estimate_tokens` with one token per digit, as Qwen writes them: for budgets whose point is the
    time the model takes to read a long prompt (a document's chosen passages, a document given whole).
    A table of figures ("2,236,457") costs up to three times its bytes ÷ 3: against the packaged
    model's tokenizer on 1,228 pieces of the real-documents PDFs' pages, bytes ÷ 3 under-counted 34% of
    them (by up to 3.0x), this 19% (by up to 1.5x: leader dots and empty table cells). A question's
    evidence keeps `estimate_tokens`: its budget was measured in it, and counted this way it holds fewer
    table rows (a reference answer in the evidence 0.608 → 0.577 on the real-documents set)."""
    digits = len(_DIGIT.findall(text))
    return (len(text.encode("utf-8")) - digits) // BYTES_PER_TOKEN + digits + 1


# Words written with a full stop that does not end the sentence: months, titles, numbering and legal
# references ("Oct. 28, 1998", "Pub. L. No. 105-304", "Dr. Smith", "Fig. 3"), in English, French,
# German and Spanish. A single letter ("J. Smith", "L.") and initials ("U.S.") count too; a company's
# "Inc." is left out (as often the end of a sentence as not).
ABBREVIATIONS = frozenset(
    "jan feb mar apr jun jul aug sep sept oct nov dec mr mrs ms dr prof st no nos nr vol pp fig figs eq "
    "sec secs art arts ch chap para pub stat approx dept est cf al vs e.g i.e resp "
    "mme mlle av bd env cie éd abs bzw ca evtl ggf inkl usw vgl sr sra srta núm pág".split()
)
_LAST_WORD = re.compile(r"([^\W\d_]+(?:\.[^\W\d_]+)*)\.$")


def ends_sentence(before: str) -> bool:
    """Whether a full stop at the end of `before` ends a sentence: not after an abbreviation or a
    single letter. (A "!" or "?" always does.)"""
    if not before.endswith("."):
        return True
    found = _LAST_WORD.search(before)
    if found is None:
        return True
    word = found.group(1)
    initials = all(len(part) == 1 for part in word.split("."))
    return not initials and word.casefold() not in ABBREVIATIONS
