"""How soon a request about a whole document starts answering when it is asked N seconds after the
document became searchable, with the app's card writer running in the background (as in the app).

The card writer's first step is reading the passages every request about the document begins with
(rag/overview.py); a request that comes while or after it reads them reuses that prefix, one that comes
before does not. So the first token depends on when the request is asked: this prints it for each
`--after` delay, and once with the writer off (the cold case of `bench/document_summary.py`).

Each run is its own process (a fresh model and prompt cache, a fresh home): the document is uploaded as
the app does (a background ingest job), and "Summarize this document in 3 bullets." (a shape, so never
answered from the card) is asked `--after` seconds after the job ended.

    .venv/bin/python bench/asked_after_indexing.py --pages 30 --pdf ../shared/data/pdfs/R-intro.pdf \\
        --model qwen2.5-coder-1.5b --after 0 3 6 10 20

Prints per document and delay: first token, total, the prompt tokens the model reused, and whether the
card was written when the answer ended; and the load average.
"""

from __future__ import annotations

import argparse
import json
import os
import subprocess
import sys
import tempfile
import time
from pathlib import Path

sys.path.insert(0, str(Path(__file__).resolve().parents[1]))

REQUEST = "Summarize this document in 3 bullets."


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__.split("\n\n")[0])
    parser.add_argument("--pages", type=int, nargs="*", default=[], help="generated PDFs of these page counts")
    parser.add_argument("--pdf", type=Path, nargs="*", default=[], help="real PDFs")
    parser.add_argument("--model", default="qwen2.5-coder-0.5b")
    parser.add_argument("--after", type=float, nargs="+", default=[0, 5, 10, 20], help="seconds after searchable")
    parser.add_argument("--one", help=argparse.SUPPRESS)  # a child run: document spec
    parser.add_argument("--writer", choices=("on", "off"), default="on", help=argparse.SUPPRESS)
    args = parser.parse_args()
    if args.one:
        print(json.dumps(_one(args.one, args.model, args.after[0], args.writer == "on")))
        return
    documents = [f"pages:{n}" for n in args.pages] + [f"pdf:{path.resolve()}" for path in args.pdf]
    print(f"model {args.model}; load average {os.getloadavg()[0]:.2f}", flush=True)
    for spec in documents:
        runs = [(0.0, "off")] + [(after, "on") for after in args.after]
        for after, writer in runs:
            command = [sys.executable, __file__, "--one", spec, "--model", args.model, "--after", str(after)]
            child = subprocess.run([*command, "--writer", writer], capture_output=True, text=True, check=False)
            if child.returncode != 0:
                print(f"{spec}: failed\n{child.stderr[-2000:]}", flush=True)
                continue
            row = json.loads(child.stdout.strip().splitlines()[-1])
            when = "writer off" if writer == "off" else f"asked {after:.0f} s after searchable"
            print(
                f"{row['name']}: {row['pages']} pages, {when}: first token {row['first_token_s']:.1f} s, "
                f"total {row['total_s']:.1f} s, prompt {row['prompt_tokens']:.0f} tokens "
                f"({row['cached_tokens']:.0f} reused), card written {row['card']}; "
                f"load {os.getloadavg()[0]:.2f}",
                flush=True,
            )


def _one(spec: str, model: str, after: float, writer_on: bool) -> dict[str, object]:
    with tempfile.TemporaryDirectory() as tmp:
        os.environ.update(
            RAGCHAT_HOME=str(Path(tmp) / "home"),
            RAGCHAT_LLM_PROVIDER="llamacpp",
            RAGCHAT_LLM_MODEL=model,
            RAGCHAT_RERANKER_DIR=str(Path(tmp) / "no-reranker"),
        )
        from core.settings import get_settings
        from providers.llm.base import ChatMessage
        from rag.pipeline import AskOptions
        from ragchat.application import open_session
        from tests.fixtures import long_pdf_bytes

        kind, value = spec.split(":", 1)
        if kind == "pages":
            name, data = f"generated-{value}p.pdf", long_pdf_bytes(int(value), seed=int(value))
        else:
            name, data = Path(value).name, Path(value).read_bytes()
        session = open_session(get_settings(memory_enabled=False))
        "".join(session.app.llm().stream([ChatMessage(role="user", content="Say hi.")], 4, 0.0))  # load: not timed
        if writer_on:
            session.card_writer.start()
        job = session.jobs.submit(name, data)
        view = session.jobs.wait(job, 3600)
        searchable = time.perf_counter()
        pages = view.result.pages if view and view.result else None
        time.sleep(max(0.0, after - (time.perf_counter() - searchable)))
        started = time.perf_counter()
        answer = session.ask(REQUEST, AskOptions(documents=(name,)))
        total = time.perf_counter() - started
        card = session.document_card(session.documents()[0]) is not None
        session.card_writer.stop()
        return {
            "name": name,
            "pages": pages,
            "first_token_s": answer.timings_ms.get("first_token_ms", 0.0) / 1000,
            "total_s": total,
            "prompt_tokens": answer.timings_ms.get("prompt_tokens", 0.0),
            "cached_tokens": answer.timings_ms.get("cached_prompt_tokens", 0.0),
            "card": card,
        }


if __name__ == "__main__":
    main()
