"""Fetch the long PDFs of the document-answers long set (requests-long.jsonl) that are not in ../shared/.

Each PDF ships inside a pinned Debian package. This script downloads those packages with
``apt-get download NAME=VERSION`` into a temporary directory, unpacks them with ``dpkg-deb -x``,
copies the named files into ``long/`` next to this file (git-ignored; a ``.gz`` member is
decompressed) and checks each file's sha256. It is idempotent: a file already present with the right
hash is left alone, and a package is only downloaded when one of its files is missing or wrong. If
``apt-get download`` fails (stale or missing package lists) it runs ``apt-get update`` once and
tries again. Standard library only, plus apt-get and dpkg-deb run as subprocesses.

    .venv/bin/python eval/datasets/document_answers/fetch_long.py

The fourth document, R-intro.pdf, is read in place from ../shared/data/pdfs/ (the same file as the
one in r-doc-pdf 4.2.2.20221110-2); this script only checks its sha256. fetch_mid.py runs the same
steps (fetch(), pinned()) for the mid-size set.
"""

from __future__ import annotations

import gzip
import hashlib
import shutil
import subprocess
import sys
import tempfile
from collections.abc import Iterable
from pathlib import Path

HERE = Path(__file__).resolve().parent
LONG = HERE / "long"

# Debian package, version, licence of the files as their package states it, and its files:
# (path inside the package, file name in long/, sha256 of the file as copied)
Source = tuple[str, str, str, list[tuple[str, str, str]]]
SOURCES: list[Source] = [
    (
        "r-doc-pdf",
        "4.2.2.20221110-2",
        "R manuals: verbatim copies permitted (R is GPL-2 | GPL-3)",
        [
            (
                "usr/share/R/doc/manual/R-exts.pdf",
                "R-exts.pdf",
                "792220b273d40e8629664d5dd0d6ae4151419d14f613a949aebe85b8c2a1f85c",
            ),
            (
                "usr/share/R/doc/manual/R-data.pdf",
                "R-data.pdf",
                "9381a39ffeb8545a745c2618ba955b4ae4e10b9c8373cd5bc1984fff8318f8ca",
            ),
        ],
    ),
    (
        "libcfitsio-doc",
        "4.2.0-3",
        "US Government work (NASA/GSFC HEASARC): no copyright claimed in the US; free use with notice",
        [
            (
                "usr/share/doc/libcfitsio-dev/cfitsio.pdf.gz",
                "cfitsio.pdf",
                "d81a83a848b78ecfa02b32dae131a71cf3175578fe601e8338428390a59b34a3",
            ),
        ],
    ),
]

# Documents read in place from shared/: (path relative to this folder, sha256)
SHARED: list[tuple[str, str]] = [
    (
        "../../../../shared/data/pdfs/R-intro.pdf",
        "337ccd0b490b1e66f7e783b45f4588d0599730b4206c0c051edfe1419c568c51",
    ),
]


def sha256(path: Path) -> str:
    digest = hashlib.sha256()
    with path.open("rb") as f:
        for block in iter(lambda: f.read(1 << 20), b""):
            digest.update(block)
    return digest.hexdigest()


def pinned(
    folder: Path = LONG, sources: list[Source] = SOURCES, in_place: Iterable[tuple[str, ...]] = SHARED
) -> dict[str, str]:
    """File name (as the jsonl's doc field names it) -> expected sha256, for check_long.py.

    fetch_mid.py passes its own folder, packages and documents read in place (path and sha256 first).
    """
    pins = {f"{folder.name}/{name}": digest for *_, files in sources for _, name, digest in files}
    pins.update({relative: digest for relative, digest, *_ in in_place})
    return pins


def apt_download(package: str, version: str, into: Path, script: str) -> Path:
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
        f"{script}: apt-get download of {package}={version} failed:\n{result.stderr.strip()}\n"
        "(the pinned version may have left the archive: the set's labels hold for these exact files only)"
    )


def fetch(
    script: str,
    folder: Path,
    sources: list[Source],
    in_place: list[tuple[str, str, str]],
    in_place_as: str,
    in_place_total: str,
) -> int:
    """Check the documents read in place, fetch the missing or wrong files of `sources` into `folder`.

    `in_place` holds (path relative to this folder, sha256, what a missing one's line says of where it
    comes from); `in_place_as` names them on their ok lines, `in_place_total` in the last line. The
    script's name starts its error messages. Returns the exit code: 0 when every file matches its sha256.
    Shared with fetch_mid.py.
    """
    for tool in ("apt-get", "dpkg-deb"):
        if shutil.which(tool) is None:
            sys.exit(f"{script}: {tool} not found (a Debian-based machine is needed)")
    folder.mkdir(exist_ok=True)
    problems = 0
    for relative, expected, whence in in_place:
        path = (HERE / relative).resolve()
        if not path.exists():
            problems += 1
            print(f"MISSING  {relative} ({whence})")
        elif sha256(path) != expected:
            problems += 1
            print(f"MISMATCH {relative}: sha256 {sha256(path)}, expected {expected}")
        else:
            print(f"ok       {path.name} ({in_place_as}, sha256 matches)")
    for package, version, licence, files in sources:
        missing = [f for f in files if not (folder / f[1]).exists() or sha256(folder / f[1]) != f[2]]
        for _, name, _ in files:
            if all(name != m[1] for m in missing):
                print(f"ok       {name} (already present, sha256 matches)")
        if not missing:
            continue
        print(f"{package}={version} ({licence}): {len(missing)} file(s) to fetch")
        with tempfile.TemporaryDirectory(prefix=f"ragchat-{folder.name}-docs-") as tmp:
            deb = apt_download(package, version, Path(tmp), script)
            root = Path(tmp) / "root"
            subprocess.run(["dpkg-deb", "-x", str(deb), str(root)], check=True)
            for inner, name, expected in missing:
                source = root / inner
                if not source.exists():
                    sys.exit(f"{script}: {inner} not found in {deb.name}")
                target = folder / name
                if inner.endswith(".gz") and not name.endswith(".gz"):
                    with gzip.open(source, "rb") as src, target.open("wb") as dst:
                        shutil.copyfileobj(src, dst)
                else:
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
    fetched = sum(len(f) for *_, f in sources)
    print(f"all {fetched} fetched PDFs present in {folder} (+ {len(in_place)} {in_place_total})")
    return 0


def main() -> int:
    whence = "it comes with shared/; it is also in r-doc-pdf 4.2.2.20221110-2"
    shared = [(relative, digest, whence) for relative, digest in SHARED]
    return fetch("fetch_long.py", LONG, SOURCES, shared, "shared", "from shared/")


if __name__ == "__main__":
    sys.exit(main())
