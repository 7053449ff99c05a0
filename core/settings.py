"""All configuration in one place: environment variables (RAGCHAT_*), then a .env file, then defaults.

Every tunable the pipeline reads lives here, so a newcomer finds a parameter in one guess.
"""

from __future__ import annotations

import ipaddress
from pathlib import Path
from typing import Literal
from urllib.parse import urlsplit

from pydantic import Field, SecretStr, field_validator
from pydantic_settings import BaseSettings, SettingsConfigDict

from ragchat.users import user_name

PROJECT_ROOT = Path(__file__).resolve().parent.parent

REFUSAL_TEXT = "I don't have enough information in the uploaded documents to answer this question."

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


class Settings(BaseSettings):
    """Runtime settings; names follow the contract in shared/design.md."""

    # Errors name the setting and the reason but never echo the value: some values are secrets (tokens, keys).
    model_config = SettingsConfigDict(
        env_prefix="RAGCHAT_", env_file=".env", env_file_encoding="utf-8", extra="ignore", hide_input_in_errors=True
    )

    home: Path = Field(default=PROJECT_ROOT, description="Data directory: chroma_db/, memory files, SQLite.")
    model_dir: Path = Field(
        default=Path.home() / ".cache" / "ragchat" / "models",
        description="Where packaged models are assembled (GGUF) or copied (embedder folder).",
    )

    # LLM
    llm_provider: Literal["auto", "llamacpp", "ollama", "openai"] = "auto"
    llm_model: str | None = Field(
        default=None,
        description="Model for the chosen provider. llamacpp: a packaged name "
        "(qwen2.5-coder-1.5b, qwen2.5-coder-0.5b) or a path to a .gguf file; "
        "ollama: a model tag (default llama3.2); openai: the served model name.",
    )
    ollama_host: str = Field(default="http://127.0.0.1:11434", validation_alias="OLLAMA_HOST")
    openai_base_url: str = "http://127.0.0.1:8000/v1"
    openai_api_key: str = ""
    llm_threads: int = 2
    llm_context: int = 4096
    llm_max_tokens: int = 384
    llm_temperature: float = 0.0
    llm_queue_limit: int = Field(
        default=8,
        ge=0,
        description="Embedded model: questions that may wait for it at once (it generates one reply at a time); "
        "more are told the model is busy.",
    )
    llm_queue_timeout_s: float = Field(
        default=300.0, gt=0, description="Embedded model: longest wait in its queue before the question is refused."
    )

    # Embeddings
    embed_model: str = "sentence-transformers/all-MiniLM-L6-v2"
    embed_model_path: Path | None = Field(
        default=None, description="A local fastembed-compatible folder (model.onnx + tokenizer files)."
    )
    embed_threads: int = 2
    embed_batch_size: int = 16
    embed_max_tokens: int | None = Field(
        default=256,
        description="Truncate texts to this many model tokens (MiniLM was trained on 256); None: no extra limit.",
    )

    # Vector store: embedded Chroma in RAGCHAT_HOME, or a Chroma server when chroma_host is set.
    # BM25 and the registry stay in RAGCHAT_HOME either way (ARCHITECTURE.md, "Server mode").
    chroma_host: str | None = Field(default=None, description="Chroma server host; unset: embedded Chroma.")
    chroma_port: int = Field(default=8000, ge=1, le=65535)
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
    collection: str = "ragchat"

    # Several users on one deployment (ragchat/users.py)
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

    # Chunking
    chunk_size: int = Field(default=200, description="Target chunk size in tokens (LlamaIndex tokenizer).")
    chunk_overlap: int = 30

    # Ingestion
    ingest_batch: int = Field(default=64, description="Chunks embedded and stored per step; cancel is checked between.")
    max_file_mb: float = Field(default=500, description="Larger files are refused with a message, before parsing.")
    redact_pii: bool = Field(default=False, description="Replace e-mails, phones, IPs, long tokens at ingest (opt-in).")
    ocr: bool = Field(default=True, description="OCR pages without text when the tesseract program is installed.")
    tesseract_cmd: str = "tesseract"
    ocr_language: str = Field(default="eng", description="Tesseract language(s), e.g. eng+deu (needs their data).")
    ocr_dpi: int = 300
    ocr_timeout_s: float = 120.0

    # Retrieval (hybrid BM25 + dense, then an optional cross-encoder)
    top_k: int = Field(default=4, description="Chunks given to the answering model.")
    candidates: int = Field(default=20, description="Chunks each retriever returns for fusion and reranking.")
    bm25_weight: float = Field(default=0.5, ge=0.0, le=1.0, description="Share of BM25 in fusion; 0 is dense-only.")
    fusion: Literal["rrf", "convex"] = Field(
        default="convex", description="convex: min-max normalized scores (measured best); rrf: weighted ranks."
    )
    reranker_model: str = Field(
        default="ms-marco-MiniLM-L-12-v2",
        description="FlashRank model: ms-marco-MiniLM-L-12-v2, or ms-marco-TinyBERT-L-2-v2 (faster); none: off.",
    )
    reranker_dir: Path = Field(
        default=Path.home() / ".cache" / "ragchat" / "flashrank", description="FlashRank cache: <dir>/<model name>/."
    )
    reranker_download: bool = Field(default=False, description="Let FlashRank download a missing model.")
    reranker_max_length: int = 512

    # Answering
    context_tokens: int = Field(
        default=1500,
        description="Most tokens of sources in a prompt (also capped by llm_context): predictable first-token time.",
    )
    min_relevance: float = Field(
        default=0.25,
        description="Cosine similarity the best chunk must reach; below it the answer is the refusal and no LLM runs.",
    )
    memory_enabled: bool = Field(default=True, description="Run the memory graph after each chat turn.")
    memory_min_confidence: float = Field(
        default=0.7, ge=0.0, le=1.0, description="The memory model's confidence a fact needs to be written."
    )
    memory_min_relevance: float = Field(
        default=0.2,
        description="Cosine similarity a first-person question needs to its closest memory entry (and more than to "
        "any passage) to be answered from memory.",
    )
    memory_context_tokens: int = Field(
        default=200, description="Most tokens of memory entries in a prompt; beyond it, the closest to the question."
    )

    # Trust: input guardrails (before any retrieval) and the output support check
    max_question_chars: int = Field(default=2000, ge=1, description="Longer questions are rejected with the limit.")
    rate_limit_per_minute: int = Field(
        default=10, ge=0, description="Questions per session (app tab, or `ask --session` id) per minute; 0: no limit."
    )
    support_min_overlap: float = Field(
        default=0.7, ge=0.0, le=1.0, description="Share of a sentence's terms its sources must hold to support it."
    )
    support_min_similarity: float = Field(
        default=0.7,
        ge=0.0,
        le=1.0,
        description="Or: cosine similarity to one sentence of its sources that supports a paraphrase.",
    )
    min_confidence: float = Field(
        default=0.6, ge=0.0, le=1.0, description="Answers whose support score is below it get a low-confidence notice."
    )

    # Weather tool (tools/): the three Open-Meteo endpoints are the only hosts it may reach. They are
    # set here (environment or .env) and nowhere else: no page, chat or CLI flag can change them.
    openmeteo_forecast_url: str = "https://api.open-meteo.com/v1/forecast"
    openmeteo_archive_url: str = "https://archive-api.open-meteo.com/v1/archive"
    openmeteo_geocoding_url: str = "https://geocoding-api.open-meteo.com/v1/search"
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

    # Evaluation (`ragchat eval`, the Eval page)
    eval_judge: Literal["none", "self", "openai"] = Field(
        default="none",
        description="LLM judge for ragas's faithfulness and answer relevancy: none (skip them), self (the "
        "answering model), openai (the OpenAI-compatible server at eval_judge_url).",
    )
    eval_judge_url: str = "http://127.0.0.1:8000/v1"
    eval_judge_model: str | None = Field(default=None, description="The judge's model name on that server.")
    eval_judge_api_key: str = ""
    eval_judge_timeout_s: float = Field(default=120.0, description="Longest one judge call may take.")
    eval_judge_max_tokens: int = 512
    eval_reports_dir: Path = Field(default=PROJECT_ROOT / "reports", description="Where `ragchat eval` writes.")
    eval_squad_dir: Path = Field(
        default=PROJECT_ROOT.parent / "shared" / "data" / "squad2-normans",
        description="The SQuAD 2.0 'Normans' set (Normans.md + questions.jsonl), offered when present.",
    )

    @field_validator("chroma_token")
    @classmethod
    def _token_chars(cls, value: SecretStr) -> SecretStr:
        """A token goes into an HTTP header: visible ASCII only (the message never repeats it)."""
        token = value.get_secret_value()
        if any(not (33 <= ord(char) <= 126) for char in token):
            raise ValueError("the Chroma token must be printable ASCII without spaces")
        return value

    @field_validator("ollama_host")
    @classmethod
    def _with_scheme(cls, value: str) -> str:
        """OLLAMA_HOST is often given as host:port; the client needs a URL."""
        return value if "://" in value else f"http://{value}"

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


def get_settings(**overrides: object) -> Settings:
    """Fresh settings from the environment; overrides win (the CLI and UI pass their flags here)."""
    return Settings(**{k: v for k, v in overrides.items() if v is not None})
