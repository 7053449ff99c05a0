"""Documents the tests build themselves (no files from ../shared are needed)."""

from __future__ import annotations

from pathlib import Path

from fpdf import FPDF

TABLE_ROWS = [
    ("Region", "Q1 revenue", "Q2 revenue"),
    ("North", "4.2 million", "4.9 million"),
    ("South", "3.1 million", "3.6 million"),
    ("Westland", "7.35 million", "8.15 million"),
]


def write_report_pdf(path: Path) -> Path:
    """A 3-page report; page 2 holds a ruled table whose cells answer questions nothing else does."""
    pdf = FPDF()
    pdf.set_font("Helvetica", size=12)
    pdf.add_page()
    pdf.multi_cell(
        0,
        8,
        "Annual Operations Report of the Harbor Logistics Company.\n\n"
        "This report describes the warehouse network, staffing, and the safety programme. "
        "The company operates eleven warehouses along the northern coast and employs 640 people. "
        "Forklift operators complete a two-day certification before their first shift.",
    )
    pdf.add_page()
    pdf.multi_cell(0, 8, "Regional revenue by quarter is listed in the table below.")
    with pdf.table() as table:
        for row in TABLE_ROWS:
            cells = table.row()
            for value in row:
                cells.cell(value)
    pdf.add_page()
    pdf.multi_cell(
        0,
        8,
        "Outlook. Next year the company plans to open a cold-storage facility for seafood exports. "
        "The board approved a recycling initiative that targets cardboard and pallet wrap.",
    )
    pdf.output(str(path))
    return path


WORDS = (
    "harbour crane ledger invoice pallet forklift audit schedule freight customs tariff container "
    "manifest berth vessel cargo warehouse inventory shipment courier dispatch route depot"
).split()


def long_pdf_bytes(pages: int, seed: int = 0, marker: str = "") -> bytes:
    """A text PDF of `pages` pages of varied sentences (about 1,200 characters each); `marker` is
    written on every page so a test can search for this document and no other."""
    import random

    rng = random.Random(seed)
    pdf = FPDF()
    pdf.set_font("Helvetica", size=10)
    for number in range(1, pages + 1):
        pdf.add_page()
        sentences = [
            " ".join(rng.choice(WORDS) for _ in range(rng.randint(8, 16))).capitalize() + "." for _ in range(14)
        ]
        pdf.multi_cell(0, 5, f"Page {number}. {marker} " + " ".join(sentences))
    return bytes(pdf.output())


TOPICS = ("harbour cranes", "customs forms", "warehouse safety", "freight tariffs", "night shifts", "berth booking")


def chaptered_pdf_bytes(pages: int, per_chapter: int = 5) -> bytes:
    """A manual of `pages` pages in chapters of `per_chapter` pages, each chapter under a heading set
    larger than its text and about its own topic (TOPICS, in turn), its pages numbered in the text."""
    pdf = FPDF()
    for number in range(1, pages + 1):
        pdf.add_page()
        chapter = (number - 1) // per_chapter
        topic = TOPICS[chapter % len(TOPICS)]
        if (number - 1) % per_chapter == 0:
            pdf.set_font("Helvetica", size=18)
            pdf.multi_cell(0, 10, f"{chapter + 1} {topic.capitalize()}", new_x="LMARGIN", new_y="NEXT")
        pdf.set_font("Helvetica", size=10)
        body = " ".join(
            f"On page {number} the manual explains {topic}: rule {k} says staff check {topic} before noon."
            for k in range(1, 9)
        )
        pdf.multi_cell(0, 5, body, new_x="LMARGIN", new_y="NEXT")
    return bytes(pdf.output())


def encrypted_pdf_bytes(user_password: str, text: str) -> bytes:
    pdf = FPDF()
    pdf.set_encryption(owner_password="owner", user_password=user_password)
    pdf.set_font("Helvetica", size=12)
    pdf.add_page()
    pdf.cell(0, 10, text)
    return bytes(pdf.output())


def scanned_pdf_bytes(lines: list[str], blank_pages: int = 0) -> bytes:
    """Pages that are only an image of text (no text layer), like a scan; then blank pages."""
    from PIL import Image, ImageDraw, ImageFont

    image = Image.new("L", (1700, 300 + 110 * len(lines)), color=255)
    draw = ImageDraw.Draw(image)
    font = ImageFont.load_default(size=64)
    for row, line in enumerate(lines):
        draw.text((100, 150 + 110 * row), line, fill=0, font=font)
    pdf = FPDF()
    pdf.add_page()
    pdf.image(image, x=10, y=10, w=190)
    for _ in range(blank_pages):
        pdf.add_page()
    return bytes(pdf.output())


def sqlite_bytes(db: Path) -> bytes:
    """The raw bytes of a SQLite file and any journal or WAL beside it: what a disk image would hold."""
    return b"".join(path.read_bytes() for path in sorted(db.parent.glob(db.name + "*")))


FRENCH_MINUTES = Path(__file__).parent / "fixtures" / "fr_minutes.txt"


def write_french_minutes_pdf(path: Path) -> Path:
    """A 2-page French PDF: the minutes of a municipal demolition committee (public minutes, the text
    of shared/data/pdfs/fr_2023-06-20-PV_tagged.pdf; pages split at the form feed)."""
    pdf = FPDF()
    pdf.set_font("Helvetica", size=11)
    for page in FRENCH_MINUTES.read_text(encoding="utf-8").split("\f"):
        pdf.add_page()
        pdf.multi_cell(0, 6, page.strip())
    pdf.output(str(path))
    return path
