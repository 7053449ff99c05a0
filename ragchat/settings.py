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
        """SQLite file holding the document registry and the conversations."""
        return self.home / "ragchat.sqlite3"

    @property
    def bm25_path(self) -> Path:
        return self.home / "bm25_index"


def get_settings(**overrides: object) -> Settings:
    """Fresh settings from the environment; overrides win (the CLI and UI pass their flags here)."""
    return Settings(**{k: v for k, v in overrides.items() if v is not None})
