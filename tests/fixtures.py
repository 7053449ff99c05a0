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


def sqlite_bytes(db: Path) -> bytes:
    """The raw bytes of a SQLite file and any journal or WAL beside it: what a disk image would hold."""
    return b"".join(path.read_bytes() for path in sorted(db.parent.glob(db.name + "*")))
