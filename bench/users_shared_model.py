"""What several users cost one process: N users each state a fact at the same moment (one thread per
user, started by a barrier) through `App.session(...).ask` and the real memory graph, on a
temporary RAGCHAT_HOME.

It prints the process's resident memory after the model is loaded and after the N turns (a second
copy of the model would show as hundreds of MB), how many distinct LLM objects served the users, each
turn's latency and the wall time (the llama.cpp instance runs one generation at a time, so the turns
queue), and whether every user's USER_MEMORY.md holds exactly its own fact.

    .venv/bin/python bench/users_shared_model.py                 # 4 users, the 0.5B test model
    .venv/bin/python bench/users_shared_model.py --users 8 --model qwen2.5-coder-1.5b
"""

from __future__ import annotations

import argparse
import os
import resource
import tempfile
import threading
import time
from concurrent.futures import ThreadPoolExecutor
from pathlib import Path

from core.settings import get_settings
from rag.pipeline import AskOptions
from ragchat.application import open_session

# Each user's fact, and a word its summary must keep (and no other user's file may hold).
FACTS = [
    ("I'm a Project Finance Analyst.", "Finance"),
    ("I prefer weekly summaries on Mondays.", "Mondays"),
    ("I work in the Lisbon office.", "Lisbon"),
    ("I'm responsible for the quarterly audit.", "audit"),
    ("I prefer answers in bullet points.", "bullet"),
    ("I joined the data platform team.", "platform"),
    ("I manage the vendor contracts.", "vendor"),
    ("I live in Porto.", "Porto"),
]


def rss_mb() -> float:
    """Current resident set size (Linux /proc), in MB."""
    pages = int(Path("/proc/self/statm").read_text().split()[1])
    return pages * resource.getpagesize() / 2**20


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__, formatter_class=argparse.RawDescriptionHelpFormatter)
    parser.add_argument("--users", type=int, default=4, help=f"1 to {len(FACTS)}")
    parser.add_argument("--model", default="qwen2.5-coder-0.5b")
    args = parser.parse_args()
    users = [f"user{n}" for n in range(1, min(max(args.users, 1), len(FACTS)) + 1)]
    with tempfile.TemporaryDirectory() as home:
        root = open_session(
            get_settings(home=Path(home), llm_provider="llamacpp", llm_model=args.model, reranker_model="none")
        )
        root.app.llm()
        root.app.embedder.embed(["warm-up"])
        loaded = rss_mb()
        start = threading.Barrier(len(users))

        def turn(user: str, fact: str) -> float:
            session = root.app.session(user)
            start.wait(timeout=60)
            began = time.perf_counter()
            session.ask(fact, AskOptions(session_id=f"{user}-1"))
            return time.perf_counter() - began

        began = time.perf_counter()
        with ThreadPoolExecutor(max_workers=len(users)) as pool:
            latencies = list(pool.map(turn, users, [fact for fact, _ in FACTS]))
        wall = time.perf_counter() - began
        models = {id(root.app.session(user).llm()) for user in users} | {id(root.app.llm())}
        files = {user: root.app.session(user).memory.files["USER"].path.read_text(encoding="utf-8") for user in users}
        own = all(
            (FACTS[n][1] in files[user]) and not any(FACTS[m][1] in files[user] for m in range(len(users)) if m != n)
            for n, user in enumerate(users)
        )
        load = ", ".join(f"{x:.2f}" for x in os.getloadavg())
        print(f"model {args.model}, {len(users)} users stating one fact each at the same moment (load average {load})")
        print(f"RSS after loading the model: {loaded:.0f} MB; after the {len(users)} turns: {rss_mb():.0f} MB")
        print(f"distinct LLM objects that served them: {len(models)}")
        print("turn latencies (s): " + ", ".join(f"{t:.1f}" for t in sorted(latencies)) + f"; wall {wall:.1f} s")
        print(f"each USER_MEMORY.md holds its own fact and no other user's: {own}")


if __name__ == "__main__":
    main()
