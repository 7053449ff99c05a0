"""The embedder's changes to fastembed's defaults keep its vectors: same session output, order kept
after sorting by length, truncation at the model's 256 tokens, no ONNX memory arena."""

from __future__ import annotations

import numpy as np
from fastembed import TextEmbedding

from core.settings import get_settings
from providers.embedder import Embedder
from providers.packaged_models import ensure_embedder_folder

TEXTS = ["short", "The quokka enclosure opened in June. " * 12, "Harbour cranes and freight.", "x " * 400]


def test_vectors_match_fastembed_and_keep_their_order() -> None:
    settings = get_settings()
    embedder = Embedder(settings)
    for threads in (settings.embed_query_threads, 1):  # one text's session, the one a batch is shared out on
        model = embedder._model(threads)
        options = model.model.model.get_session_options()
        assert options.get_session_config_entry("session.intra_op.allow_spinning") == "0"
        assert not options.enable_cpu_mem_arena, "the arena kept the largest batch's memory (bench/soak.py)"
        assert options.intra_op_num_threads == threads
        assert model.model.tokenizer.truncation["max_length"] == 256

    reference = TextEmbedding(
        settings.embed_model, specific_model_path=str(ensure_embedder_folder(settings.model_dir)), threads=2
    )
    reference.model.tokenizer.enable_truncation(max_length=256)
    ours = np.array(embedder.embed(TEXTS))
    one_by_one = np.array([embedder.embed([text])[0] for text in TEXTS])
    theirs = np.stack([next(iter(reference.embed([text]))) for text in TEXTS])
    assert np.allclose(ours, one_by_one, atol=1e-5), "sorting by length (or one thread for one text) changed them"
    shared = np.array(embedder.embed(TEXTS * 3))  # 12 texts: shared out among the embed_threads threads
    assert np.allclose(shared, np.tile(one_by_one, (3, 1)), atol=1e-5), "the shares were put back out of order"
    assert np.allclose(ours, theirs, atol=1e-5)
    assert np.allclose(np.linalg.norm(ours, axis=1), 1.0, atol=1e-4)
