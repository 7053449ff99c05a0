"""Choose and build the LLM from settings. `auto`: Ollama when it answers and has the model, else
the embedded llama.cpp model. The choice is never silent: the returned LLM's label says what runs."""

from __future__ import annotations

from pathlib import Path

from rag.llm.base import LLM, LLMError
from rag.llm.llamacpp import LlamaCppLLM
from rag.llm.ollama_provider import DEFAULT_OLLAMA_MODEL, OllamaLLM, ollama_has_model
from rag.llm.openai_compat import OpenAICompatLLM
from rag.packaged_models import DEFAULT_APP_GGUF, PACKAGED_GGUFS, ensure_gguf
from ragchat.settings import Settings


def resolve_gguf(model: str | None, model_dir: Path) -> tuple[Path, str]:
    """A packaged model name or a path to a local .gguf file → (path, label)."""
    name = model or DEFAULT_APP_GGUF
    if name in PACKAGED_GGUFS:
        return ensure_gguf(name, model_dir), f"llama.cpp · {name} (Q4_K_M, packaged)"
    path = Path(name).expanduser()
    if path.suffix.lower() == ".gguf" and path.is_file():
        return path, f"llama.cpp · {path.name}"
    raise LLMError(
        f"RAGCHAT_LLM_MODEL={name!r} is neither a packaged model ({', '.join(PACKAGED_GGUFS)}) "
        "nor an existing .gguf file."
    )


def build_llm(settings: Settings) -> LLM:
    provider = settings.llm_provider
    if provider == "openai":
        if not settings.llm_model:
            raise LLMError("RAGCHAT_LLM_MODEL must name the served model for the openai provider.")
        return OpenAICompatLLM(settings.openai_base_url, settings.llm_model, settings.openai_api_key)
    ollama_model = settings.llm_model or DEFAULT_OLLAMA_MODEL
    if provider == "ollama":
        return OllamaLLM(settings.ollama_host, ollama_model)
    if provider == "auto" and ollama_has_model(settings.ollama_host, ollama_model):
        return OllamaLLM(settings.ollama_host, ollama_model)
    gguf_model = settings.llm_model if provider == "llamacpp" else _auto_gguf_name(settings.llm_model)
    path, label = resolve_gguf(gguf_model, settings.model_dir)
    if provider == "auto":
        label += f" (auto: no Ollama serving {ollama_model} at {settings.ollama_host})"
    return LlamaCppLLM(path, label, n_ctx=settings.llm_context, threads=settings.llm_threads)


def _auto_gguf_name(model: str | None) -> str | None:
    """In auto mode RAGCHAT_LLM_MODEL may be an Ollama tag (llama3.2) that llama.cpp cannot load;
    fall back to the packaged default then, and keep a GGUF name or path as given."""
    if model is None or model in PACKAGED_GGUFS or model.lower().endswith(".gguf"):
        return model
    return None
