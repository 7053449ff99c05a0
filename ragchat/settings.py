"""All configuration in one place: environment variables (RAGCHAT_*), then a .env file, then defaults.

Every tunable the pipeline reads lives here, so a newcomer finds a parameter in one guess.
"""

from __future__ import annotations

from pathlib import Path
from typing import Literal

from pydantic import Field, field_validator
from pydantic_settings import BaseSettings, SettingsConfigDict

PROJECT_ROOT = Path(__file__).resolve().parent.parent

REFUSAL_TEXT = "I don't have enough information in the uploaded documents to answer this question."


class Settings(BaseSettings):
    """Runtime settings; names follow the contract in shared/design.md."""

    model_config = SettingsConfigDict(env_prefix="RAGCHAT_", env_file=".env", env_file_encoding="utf-8", extra="ignore")

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

    # Embeddings
    embed_model: str = "sentence-transformers/all-MiniLM-L6-v2"
    embed_model_path: Path | None = Field(
        default=None, description="A local fastembed-compatible folder (model.onnx + tokenizer files)."
    )
    embed_threads: int = 2
    embed_batch_size: int = 16

    # Vector store
    chroma_host: str | None = None
    chroma_port: int = 8000
    collection: str = "ragchat"

    # Chunking
    chunk_size: int = Field(default=200, description="Target chunk size in tokens (LlamaIndex tokenizer).")
    chunk_overlap: int = 30

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
