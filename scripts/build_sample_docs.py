"""Build sample_docs/nimbus_service_plans.pdf, the starter evaluation set's PDF with a table.

The PDF is committed; run this only to change it:

    .venv/bin/python scripts/build_sample_docs.py

Its text is the gold evidence of eval/datasets/starter.jsonl (the loader checks every gold text is
found in the indexed pages, so an edit here that breaks a question fails the evaluation loudly).
fpdf2 writes the same bytes for the same input (creation date pinned), so rebuilding is a no-op diff.
"""

from __future__ import annotations

from datetime import UTC, datetime
from pathlib import Path

from fpdf import FPDF

OUTPUT = Path(__file__).resolve().parent.parent / "sample_docs" / "nimbus_service_plans.pdf"

PLANS = [
    ("Plan", "Monthly price", "Annual price", "Video history", "Hubs included", "Support"),
    ("Basic", "free", "free", "7 days", "1", "email"),
    ("Plus", "4.99 EUR", "49 EUR", "30 days", "3", "email and chat"),
    ("Pro", "9.99 EUR", "99 EUR", "60 days", "10", "24/7 phone"),
]


def build(path: Path = OUTPUT) -> Path:
    pdf = FPDF()
    pdf.set_creation_date(datetime(2025, 3, 1, tzinfo=UTC))
    pdf.set_title("Nimbus service plans 2025")
    pdf.set_font("Helvetica", size=12)

    pdf.add_page()
    pdf.set_font("Helvetica", style="B", size=16)
    pdf.multi_cell(0, 10, "Nimbus service plans 2025", new_x="LMARGIN", new_y="NEXT")
    pdf.set_font("Helvetica", size=12)
    pdf.multi_cell(
        0,
        8,
        "This price list describes the optional service plans for the Nimbus Home Hub. Every hub works "
        "without a plan; a plan adds cloud video history for connected cameras, more hubs per account "
        "and faster support. Prices are valid from 1 March 2025 until 28 February 2026.",
    )

    pdf.add_page()
    intro = "Plan prices and what each plan includes are listed in the table below."
    pdf.multi_cell(0, 8, intro, new_x="LMARGIN", new_y="NEXT")
    pdf.ln(4)
    with pdf.table() as table:
        for row in PLANS:
            cells = table.row()
            for value in row:
                cells.cell(value)

    pdf.add_page()
    pdf.multi_cell(
        0,
        8,
        "Notes. All prices include VAT. The Plus and Pro plans extend the hardware warranty of every "
        "hub in the account by one year. Switching from a monthly to an annual plan takes effect at "
        "the next billing date. Students get 20 percent off the Plus plan with a valid student card.",
    )
    pdf.output(str(path))
    return path


if __name__ == "__main__":
    print(build())
