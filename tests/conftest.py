"""Shared fixtures: every test runs against a temporary RAGCHAT_HOME, never the project root."""

from __future__ import annotations

import contextlib
import gc
import os
import uuid
from collections.abc import Iterator
from pathlib import Path

import pytest
import xllamacpp
from xdist.scheduler import LoadScopeScheduling

from ragchat.card_writer import stop_all_writers
from tests.chroma_process import ChromaServer

TEST_LLM = "qwen2.5-coder-0.5b"
# A real FlashRank model folder the project builds itself (scripts/build_tiny_cross_encoder.py).
TINY_RERANKER_DIR = Path(__file__).parent / "fixtures" / "flashrank"
# Screenshots and server logs of the browser tests (tests/browser/conftest.py).
BROWSER_ARTIFACTS = Path(__file__).resolve().parents[1] / "test-artifacts" / "browser"


def pytest_addoption(parser: pytest.Parser) -> None:
    parser.addoption(
        "--readme-screenshot",
        action="store_true",
        help="the browser tests also write the README's docs/screenshot.png (make screenshot)",
    )


def pytest_configure(config: pytest.Config) -> None:
    """The browser tests' artifacts are emptied once, by the controller (or the only process), so
    under pytest-xdist (`make test` runs two workers) one worker does not delete another's files.

    The models keep their configured threads under xdist: with one llama.cpp thread the 0.5B wrote
    different answers (its sums run in another order), and three end-to-end tests failed."""
    if not hasattr(config, "workerinput") and BROWSER_ARTIFACTS.is_dir():
        for old in BROWSER_ARTIFACTS.iterdir():
            if old.is_file():
                old.unlink()


# The end-to-end modules that run no model in the test's process: ingest processes, kills, servers, the
# weather tool. Every other end-to-end and browser test runs the 0.5B (in this process, a subprocess or
# the app server) and they all go to one pytest-xdist worker: two llama.cpp instances on two cores at
# once each ran at a third of their speed (their threads wait on each other's cores), so the suite
# took as long on two workers as on one. These modules and the unit tests share the other worker.
MODEL_FREE_MODULES = frozenset(
    {
        "test_app_ingest",
        "test_chroma_server",
        "test_chunk_texts",
        "test_cli_ingest",
        "test_ingest_consistency",
        "test_ingest_kill",
        "test_kill_points",
        "test_many_processes",
        "test_multilingual_embedder",
        "test_page_image",
        "test_weather_cli",
        "test_weather_client",
        "test_weather_sandbox",
    }
)


def runs_a_model(nodeid: str) -> bool:
    path = Path(nodeid.split("::", 1)[0])
    return path.parent.name in {"e2e", "browser"} and path.stem not in MODEL_FREE_MODULES


def pytest_xdist_make_scheduler(config: pytest.Config, log: object) -> LoadScopeScheduling:
    """Under pytest-xdist: the tests that run a model are one unit of work, given to one worker; every
    other test is a unit of its own. (xdist's own `loadgroup` cannot be used: it renames a test's
    nodeid, which pytest 9 no longer lets it do.)"""

    class ModelTestsOnOneWorker(LoadScopeScheduling):
        def _split_scope(self, nodeid: str) -> str:
            return "model" if runs_a_model(nodeid) else nodeid

    return ModelTestsOnOneWorker(config, log)


@pytest.hookimpl(wrapper=True)
def pytest_runtest_teardown(item: pytest.Item) -> Iterator[None]:
    """After a test that had a data directory, and its fixtures, are torn down: its apps' card writers
    stopped (a writer left running would write cards with that test's model while later tests run),
    then a full garbage collection. Its Session (a loaded GGUF, ONNX sessions, a Chroma client) sits in reference cycles
    that only a full collection frees, and a test run seldom makes one: in CI the suite's process had
    grown to 10 GB of earlier tests' models (13 GB here), against ~1 GB with this."""
    try:
        return (yield)
    finally:
        if "home" in getattr(item, "fixturenames", ()):
            stop_all_writers()
            gc.collect()


_LOAD_LLAMA_SERVER = xllamacpp.Server
_LLAMA_SERVERS: dict[tuple[object, ...], xllamacpp.Server] = {}


# The niceness a test that runs no model has under pytest-xdist (its process and the processes it starts).
MODEL_FREE_NICENESS = 19


@pytest.fixture(autouse=True)
def model_tests_first_on_the_cores(request: pytest.FixtureRequest) -> Iterator[None]:
    """Under pytest-xdist, a test that runs no model runs at a lower CPU priority: the worker running
    the model tests has llama.cpp's two threads wait for each other at every step, so a core taken by
    the other worker's ingest processes stalled both (the model tests took 753 s beside them, 562 s
    alone). The niceness is put back after the test where the system allows it."""
    if "PYTEST_XDIST_WORKER" not in os.environ or runs_a_model(request.node.nodeid):
        yield
        return
    before = os.getpriority(os.PRIO_PROCESS, 0)
    os.setpriority(os.PRIO_PROCESS, 0, max(before, MODEL_FREE_NICENESS))
    try:
        yield
    finally:
        with contextlib.suppress(PermissionError):  # an unprivileged user cannot raise a priority again
            os.setpriority(os.PRIO_PROCESS, 0, before)


@pytest.fixture(autouse=True)
def one_llama_server_per_worker(monkeypatch: pytest.MonkeyPatch) -> None:
    """Each test's app gets its own LlamaCppLLM (its queue, label and timings), but the llama.cpp
    server under it, the loaded GGUF with its cache of earlier prompts, is loaded once per test
    process for each set of parameters and shared, as one app process shares it between its users.
    Loading is a second; the saving is the prompts: every fresh model read the answer's and the
    memory extractor's long system prompts again before its first word (~5 s on the 0.5B)."""

    def shared(params: xllamacpp.CommonParams) -> xllamacpp.Server:
        key = (
            params.model.path,
            params.n_ctx,
            params.n_parallel,
            params.cpuparams.n_threads,
            params.cpuparams_batch.n_threads,
            params.cache_ram_mib,
            params.embedding,
        )
        if key not in _LLAMA_SERVERS:
            _LLAMA_SERVERS[key] = _LOAD_LLAMA_SERVER(params)
        return _LLAMA_SERVERS[key]

    monkeypatch.setattr(xllamacpp, "Server", shared)


@pytest.fixture
def home(tmp_path: Path, monkeypatch: pytest.MonkeyPatch, request: pytest.FixtureRequest) -> Path:
    """A fresh data directory, with the embedded 0.5B test model selected and no reranker installed
    (a developer's FlashRank cache must not change what the tests see).

    A test that runs no model embeds on one thread, in its process and the ingest processes it starts:
    it shares two cores with the worker running the model tests, and its ingests on two threads had
    slowed those by half again (the long-document summary 24 s alone, 86 s beside them)."""
    data = tmp_path / "home"
    if not runs_a_model(request.node.nodeid):
        monkeypatch.setenv("RAGCHAT_EMBED_THREADS", "1")
    monkeypatch.setenv("RAGCHAT_HOME", str(data))
    monkeypatch.setenv("RAGCHAT_RERANKER_DIR", str(tmp_path / "flashrank-cache"))
    monkeypatch.setenv("RAGCHAT_LLM_PROVIDER", "llamacpp")
    monkeypatch.setenv("RAGCHAT_LLM_MODEL", TEST_LLM)
    monkeypatch.chdir(tmp_path)  # no stray .env from the working tree
    return data


@pytest.fixture(scope="module")
def chroma_server(tmp_path_factory: pytest.TempPathFactory) -> Iterator[ChromaServer]:
    """A real `chroma run` on 127.0.0.1, one per test module (it starts in about a second)."""
    server = ChromaServer(tmp_path_factory.mktemp("chroma-server") / "data")
    server.start()
    try:
        yield server
    finally:
        server.stop()


@pytest.fixture
def server_mode(home: Path, chroma_server: ChromaServer, monkeypatch: pytest.MonkeyPatch) -> ChromaServer:
    """RAGCHAT_* pointing at the module's server, with a collection of this test's own."""
    if not chroma_server.running:  # a test that failed while the server was stopped
        chroma_server.start()
    monkeypatch.setenv("RAGCHAT_CHROMA_HOST", "127.0.0.1")
    monkeypatch.setenv("RAGCHAT_CHROMA_PORT", str(chroma_server.port))
    monkeypatch.setenv("RAGCHAT_COLLECTION", f"test-{uuid.uuid4().hex[:12]}")
    return chroma_server


@pytest.fixture(params=["embedded", "chroma-server"])
def index_store(request: pytest.FixtureRequest, home: Path) -> str:
    """The test runs twice: on the embedded Chroma, and on a real Chroma server."""
    if request.param == "chroma-server":
        request.getfixturevalue("server_mode")
    return str(request.param)
