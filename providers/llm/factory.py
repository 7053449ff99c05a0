"""Choose and build the LLM from settings (or from a choice made in the app). `auto`: Ollama when it
answers and has the model, else the embedded llama.cpp model. The choice is never silent: the
returned LLM's label says what runs."""

from __future__ import annotations

from pathlib import Path

from core.schemas import LLMChoice
from core.settings import Settings
from providers.llm.base import LLM, LLMError
from providers.llm.llamacpp import LlamaCppLLM
from providers.llm.ollama_provider import DEFAULT_OLLAMA_MODEL, OllamaLLM, ollama_has_model
from providers.llm.openai_compat import OpenAICompatLLM
from providers.packaged_models import (
    DEFAULT_APP_GGUF,
    PACKAGED_GGUFS,
    ModelNotInstalled,
    best_installed_gguf,
    ensure_gguf,
    gguf_installed,
)


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


def resolve_llm(settings: Settings) -> LLMChoice:
    """Which provider and model the settings select; `auto` asks Ollama (0.5 s at most) whether it
    serves the model, and `note` says why it fell back to the embedded one."""
    provider = settings.llm_provider
    if provider == "openai":
        if not settings.llm_model:
            raise LLMError("RAGCHAT_LLM_MODEL must name the served model for the openai provider.")
        return LLMChoice(provider="openai", model=settings.llm_model)
    ollama_model = settings.llm_model or DEFAULT_OLLAMA_MODEL
    if provider == "ollama" or (provider == "auto" and ollama_has_model(settings.ollama_host, ollama_model)):
        return LLMChoice(provider="ollama", model=ollama_model)
    if provider == "llamacpp":
        return _installed(LLMChoice(provider="llamacpp", model=settings.llm_model or DEFAULT_APP_GGUF), settings)
    choice = LLMChoice(
        provider="llamacpp",
        model=_auto_gguf_name(settings.llm_model) or DEFAULT_APP_GGUF,
        note=f"auto: no Ollama serving {ollama_model} at {settings.ollama_host}",
    )
    return _installed(choice, settings)


def _installed(choice: LLMChoice, settings: Settings) -> LLMChoice:
    """A packaged model that is not installed gives way to the best installed one (a newcomer who ran
    only `make test` has the 0.5B), and `fallback` says so with the command that installs the
    configured one. ModelNotInstalled when no packaged model is installed at all."""
    spec = PACKAGED_GGUFS.get(choice.model)
    if spec is None or gguf_installed(spec.name, settings.model_dir):
        return choice
    best = best_installed_gguf(settings.model_dir)
    if best is None:
        raise ModelNotInstalled(
            f"No packaged language model is installed (configured: {spec.name}). Run `{spec.install_hint}`."
        )
    fallback = f"{spec.name} is not installed, so {best} answers; run `{spec.install_hint}` to install {spec.name}."
    return choice.model_copy(update={"model": best, "fallback": fallback})


def build_llm(settings: Settings, choice: LLMChoice | None = None) -> LLM:
    """The LLM for `choice` (default: what the settings select). Its label says what runs."""
    choice = choice or resolve_llm(settings)
    if choice.provider == "openai":
        return OpenAICompatLLM(settings.openai_base_url, choice.model, settings.openai_api_key)
    if choice.provider == "ollama":
        return OllamaLLM(settings.ollama_host, choice.model)
    path, label = resolve_gguf(choice.model, settings.model_dir)
    if choice.note:
        label += f" ({choice.note})"
    return LlamaCppLLM(
        path,
        label,
        n_ctx=settings.llm_context,
        threads=settings.llm_threads,
        queue_limit=settings.llm_queue_limit,
        queue_timeout_s=settings.llm_queue_timeout_s,
        cache_ram_mib=settings.llm_cache_ram_mib,
    )


def _auto_gguf_name(model: str | None) -> str | None:
    """In auto mode RAGCHAT_LLM_MODEL may be an Ollama tag (llama3.2) that llama.cpp cannot load;
    fall back to the packaged default then, and keep a GGUF name or path as given."""
    if model is None or model in PACKAGED_GGUFS or model.lower().endswith(".gguf"):
        return model
    return None
