"""Evaluation: `ragchat eval` (a question set scored, reports written) and `ragchat sanity` (the judge artifact)."""

from __future__ import annotations

import argparse
import sys
from pathlib import Path
from typing import TYPE_CHECKING

from core.settings import get_settings
from eval.dataset import STARTER_DATASET
from ragchat.cli.common import add_strictness_flag, print_json

if TYPE_CHECKING:
    from core.settings import Settings
    from providers.llm.base import LLM
    from ragchat.cli.common import Subcommands
    from ragchat.session import Session


def add_eval(sub: Subcommands) -> None:
    p = sub.add_parser("eval", help="score answers on a question set: our metrics and RAGAS, reports/eval.md")
    p.add_argument("--dataset", type=Path, default=STARTER_DATASET, help="JSONL question set (default: starter set)")
    p.add_argument("--docs", nargs="+", help="documents to index instead of those the dataset's header names")
    p.add_argument("--sample", type=int, help="evaluate a seeded random subset of about N questions")
    p.add_argument("--seed", type=int, default=8, help="seed for --sample (default 8)")
    p.add_argument(
        "--compare", nargs="+", metavar="KEY=VALUE", help="also run with these settings changed and print the deltas"
    )
    p.add_argument("--out", type=Path, help="report folder (default RAGCHAT_EVAL_REPORTS_DIR, reports/)")
    p.add_argument("--name", default="eval", help="report file name stem (default eval)")
    p.add_argument("--no-ragas", action="store_true", help="skip the RAGAS metrics")
    p.add_argument(
        "--memory", type=Path, help="a folder whose USER_MEMORY.md and COMPANY_MEMORY.md the evaluation starts with"
    )
    add_strictness_flag(p)
    p.add_argument("--json", action="store_true", help="print the whole result as JSON")
    p.set_defaults(func=cmd_eval)


def cmd_eval(args: argparse.Namespace) -> int:
    """Run a question set through the pipeline; write reports/eval.md, .json and plots."""
    from eval.dataset import DatasetError, load_dataset
    from eval.report import deltas_text, summary_text, write_report
    from eval.results import Comparison, EvalRun
    from eval.runner import EvalError, run_comparison, run_eval

    settings = get_settings(strictness=args.strictness)
    try:
        dataset = load_dataset(args.dataset)
        if args.docs:
            dataset = dataset.model_copy(update={"documents": [Path(p).resolve() for p in args.docs]})
        if args.sample:
            dataset = dataset.sample(args.sample, args.seed)
        overrides = dict(_key_value(item) for item in args.compare or [])

        def progress(done: int, total: int, what: str) -> None:
            print(f"[{done}/{total}] {what}", file=sys.stderr, flush=True)

        result: EvalRun | Comparison
        if overrides:
            result = run_comparison(
                dataset,
                settings,
                overrides,
                _eval_subject,
                progress=progress,
                ragas=not args.no_ragas,
                memory=args.memory,
            )
        else:
            result = run_eval(
                dataset, settings, _eval_subject, progress=progress, ragas=not args.no_ragas, memory=args.memory
            )
    except (DatasetError, EvalError, ValueError) as exc:
        print(f"ragchat eval: {exc}", file=sys.stderr)
        return 2
    paths = write_report(result, args.out or settings.eval_reports_dir, args.name)
    if args.json:
        print_json(result.model_dump(mode="json"))
    elif isinstance(result, Comparison):  # run with --compare
        print(deltas_text(result))
    else:
        print(summary_text(result))
    print(f"report: {paths['markdown']} (+ {paths['json'].name}, plots)", file=sys.stderr)
    return 0


def _eval_subject(settings: Settings, llm: LLM | None) -> Session:
    """A fresh App and its default user's Session for one evaluation run."""
    from ragchat.application import open_session

    return open_session(settings, llm=llm)


def _key_value(item: str) -> tuple[str, str]:
    key, sep, value = item.partition("=")
    if not sep or not key.strip():
        raise ValueError(f"--compare expects KEY=VALUE, got {item!r}")
    return key.strip(), value.strip()


def add_sanity(sub: Subcommands) -> None:
    p = sub.add_parser(
        "sanity", help="the judge artifact: sample docs, questions, memory, weather → artifacts/sanity_output.json"
    )
    p.add_argument("--out", type=Path, help="where to write it (default artifacts/sanity_output.json)")
    p.set_defaults(func=cmd_sanity)


def cmd_sanity(args: argparse.Namespace) -> int:
    """The judge artifact (make sanity): ingest the samples, ask, remember, one weather analysis."""
    from ragchat.sanity import ARTIFACT, run_sanity

    payload = run_sanity(args.out or ARTIFACT, say=lambda line: print(line, file=sys.stderr, flush=True))
    print(f"wrote {args.out or ARTIFACT}: features {', '.join(payload['implemented_features']) or 'none'}")
    return 0
