"""Check the polar (yes/no) eval set against the PDFs it was written from.

    .venv/bin/python eval/datasets/polar/check.py [--docs DIR]

It reads questions.jsonl, opens every document listed in its header (paths relative to this folder;
the ten fetched ones live in ../real_documents/pdfs/, so run ../real_documents/fetch.py first, or pass
--docs DIR to look the files up by name in DIR instead), extracts each page's text with pypdfium2 and
collapses whitespace runs to single spaces. Then, for every row:

- answerable rows: `reference` and `polar` are both "yes" or both "no"; every gold passage is an exact
  (case-sensitive) substring of its page's collapsed text, holds no U+FFFE/U+0002 artefact and has
  8-40 words (unless the row has `short_gold`); every string in `references` occurs in a gold passage;
  a row marked `"paraphrased": true` shares no content word with its gold passages (lower case,
  stopwords removed, words of 4+ letters, compared on their first 5 letters; the same rule as
  ../real_documents/check.py, eval/paraphrase.py);
- unanswerable rows carry no gold and name a `trap`;
- ids and question texts are unique.

It prints counts by document, yes/no and category, and exits 1 on any failure. It runs no retriever
and no model; it needs pypdfium2 and this project on the path (it puts it there).
"""

from __future__ import annotations

import argparse
import json
import sys
from collections import Counter, defaultdict
from pathlib import Path

import pypdfium2 as pdfium

HERE = Path(__file__).resolve().parent
sys.path.insert(0, str(HERE.parents[2]))

from eval.paraphrase import shared_words  # noqa: E402

DATASET = HERE / "questions.jsonl"
DETECT = HERE / "detect.jsonl"


def collapse(text: str) -> str:
    return " ".join(text.split())


def page_texts(path: Path) -> list[str]:
    try:
        pdf = pdfium.PdfDocument(str(path))
    except pdfium.PdfiumError:
        pdf = pdfium.PdfDocument(str(path), password="")  # enc_rc4_40_empty_userpw.pdf
    try:
        texts = []
        for page in pdf:
            textpage = page.get_textpage()
            texts.append(collapse(textpage.get_text_range()))
            textpage.close()
            page.close()
        return texts
    finally:
        pdf.close()


def main() -> int:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--docs", type=Path, help="look documents up by file name in this folder")
    args = parser.parse_args()

    lines = DATASET.read_text(encoding="utf-8").splitlines()
    header = json.loads(lines[0])
    rows = [json.loads(line) for line in lines[1:] if line.strip()]
    failures: list[str] = []
    warnings: list[str] = []

    pages: dict[str, list[str]] = {}
    for rel in header["documents"]:
        path = (args.docs / Path(rel).name) if args.docs else (HERE / rel)
        if not path.exists():
            failures.append(f"missing document {path} (run eval/datasets/real_documents/fetch.py, or pass --docs)")
            continue
        pages[Path(rel).name] = page_texts(path)
    if failures:
        print("\n".join(failures))
        return 1

    ids = Counter(r["id"] for r in rows)
    questions = Counter(r["question"] for r in rows)
    failures += [f"duplicate id {i}" for i, n in ids.items() if n > 1]
    failures += [f"duplicate question {q!r}" for q, n in questions.items() if n > 1]

    by_doc: dict[str, Counter] = defaultdict(Counter)
    paraphrased = 0
    languages: Counter = Counter()
    used_docs: set[str] = set()
    for row in rows:
        rid, cat = row["id"], row["category"]
        prefix = rid.split("-")[1]
        if cat == "answerable":
            ans = row.get("reference")
            if ans not in ("yes", "no") or row.get("polar") != ans:
                got = f"got {ans!r}, {row.get('polar')!r}"
                failures.append(f"{rid}: reference and polar must be the same 'yes' or 'no' ({got})")
            by_doc[prefix][ans] += 1
            golds = row.get("gold") or []
            if not golds:
                failures.append(f"{rid}: no gold")
            for g in golds:
                src, page, text = g["source"], g["page"], g["text"]
                if src not in pages:
                    failures.append(f"{rid}: unknown source {src}")
                    continue
                used_docs.add(src)
                if not 1 <= page <= len(pages[src]):
                    failures.append(f"{rid}: page {page} out of range for {src}")
                    continue
                if text != collapse(text):
                    failures.append(f"{rid}: gold text has uncollapsed whitespace")
                if "\ufffe" in text or "\x02" in text:
                    failures.append(f"{rid}: gold text holds a U+FFFE/U+0002 artefact")
                if text not in pages[src][page - 1]:
                    where = [i + 1 for i, t in enumerate(pages[src]) if text in t]
                    failures.append(f"{rid}: gold not on {src} p{page}" + (f" (found on p{where})" if where else ""))
                n = len(text.split())
                if not 8 <= n <= 40 and not row.get("short_gold"):
                    failures.append(f"{rid}: gold passage has {n} words (want 8-40)")
            for ref in row.get("references") or []:
                if not any(ref in g["text"] for g in golds):
                    failures.append(f"{rid}: reference {ref!r} not in its gold passages")
            if row.get("paraphrased"):
                paraphrased += 1
                overlap = set().union(*(shared_words(row["question"], g["text"]) for g in golds))
                if overlap:
                    failures.append(f"{rid}: marked paraphrased but shares {sorted(overlap)} with its gold")
            languages[row.get("question_language", "en")] += 1
        elif cat == "unanswerable":
            by_doc[prefix]["unanswerable"] += 1
            if row.get("gold") or row.get("reference") not in (None,):
                failures.append(f"{rid}: unanswerable row must have no gold and no reference")
            if not row.get("trap"):
                failures.append(f"{rid}: unanswerable row names no trap")
        else:
            failures.append(f"{rid}: unexpected category {cat!r}")

    total: Counter[str] = Counter()
    print(f"{'doc':<10} {'yes':>4} {'no':>4} {'unans':>6}")
    for prefix in sorted(by_doc, key=lambda p: -sum(by_doc[p].values())):
        c = by_doc[prefix]
        total.update(c)
        print(f"{prefix:<10} {c['yes']:>4} {c['no']:>4} {c['unanswerable']:>6}")
    print(f"{'total':<10} {total['yes']:>4} {total['no']:>4} {total['unanswerable']:>6}")
    answerable = total["yes"] + total["no"]
    print(f"answerable {answerable} over {len(used_docs)} documents; unanswerable {total['unanswerable']}")
    print(f"paraphrased (no content word shared with gold): {paraphrased}")
    print(f"question languages (answerable): {dict(languages)}")
    print("traps:", dict(Counter(r["trap"] for r in rows if r["category"] == "unanswerable")))
    for w in warnings:
        print("warning:", w)
    if failures:
        print(f"\nFAILED ({len(failures)}):")
        print("\n".join(failures))
        return 1
    print("OK: every gold passage is on its page")
    return check_detect()


def check_detect() -> int:
    """detect.jsonl: fields, languages, unique texts; prints the polar share."""
    if not DETECT.exists():
        return 0
    rows = [json.loads(line) for line in DETECT.read_text(encoding="utf-8").splitlines() if line.strip()]
    bad = [
        r
        for r in rows
        if not isinstance(r.get("text"), str)
        or not isinstance(r.get("polar"), bool)
        or r.get("lang") not in {"en", "fr", "de", "es", "pt", "it"}
    ]
    dups = [t for t, n in Counter(r["text"] for r in rows).items() if n > 1]
    polar = sum(r["polar"] for r in rows)
    langs = Counter(r["lang"] for r in rows)
    print(
        f"\ndetect.jsonl: {len(rows)} lines, polar=true {polar} ({polar / len(rows):.0%}), "
        f"non-English {sum(n for code, n in langs.items() if code != 'en')} {dict(langs)}"
    )
    if bad or dups:
        print(f"FAILED: {len(bad)} malformed rows, duplicate texts: {dups}")
        return 1
    return 0


if __name__ == "__main__":
    sys.exit(main())
