"""OCR for PDF pages without a text layer: the page is rendered with pypdfium2 and read by the
`tesseract` command line program (Debian: `apt-get install tesseract-ocr`) through a pipe.

A subprocess rather than a Python binding: Tesseract is a system program either way, and the pipe
needs nothing beyond the binary. When it is missing, ingestion says which pages had no text and how to
install it; nothing is downloaded.
"""

from __future__ import annotations

import io
import shutil
import subprocess
from typing import Any

from core.settings import Settings

INSTALL_HINT = "install Tesseract to read scanned pages (Debian/Ubuntu: apt-get install tesseract-ocr)"


class OcrError(RuntimeError):
    """Tesseract ran but could not read the page."""


class Tesseract:
    def __init__(self, command: str, language: str, dpi: int, timeout_s: float) -> None:
        self.command = command
        self.language = language
        self.dpi = dpi
        self.timeout_s = timeout_s
        self.path = shutil.which(command)

    @classmethod
    def from_settings(cls, settings: Settings) -> Tesseract | None:
        """None when OCR is turned off (RAGCHAT_OCR=false)."""
        if not settings.ocr:
            return None
        return cls(settings.tesseract_cmd, settings.ocr_language, settings.ocr_dpi, settings.ocr_timeout_s)

    @property
    def available(self) -> bool:
        return self.path is not None

    def read_page(self, page: Any) -> str:
        """Text of a pypdfium2 page, rendered at `dpi` in grey scale."""
        bitmap = page.render(scale=self.dpi / 72, grayscale=True)
        try:
            image = bitmap.to_pil()
            buffer = io.BytesIO()
            image.save(buffer, format="PNG")
        finally:
            bitmap.close()
        return self.read_png(buffer.getvalue())

    def word_boxes(self, page: Any) -> list[tuple[str, float, float, float, float]]:
        """The words Tesseract reads on a pypdfium2 page, each with its box in PDF points
        (left, bottom, right, top), in reading order: what a cited OCR page highlights."""
        bitmap = page.render(scale=self.dpi / 72, grayscale=True)
        try:
            buffer = io.BytesIO()
            bitmap.to_pil().save(buffer, format="PNG")
        finally:
            bitmap.close()
        points = 72 / self.dpi
        height = page.get_height()
        words = []
        for line in self.read_png(buffer.getvalue(), "tsv").splitlines()[1:]:
            cells = line.split("\t")
            if len(cells) < 12 or cells[0] != "5" or not cells[11].strip():
                continue  # level 5 rows are words
            left, top, width, tall = (int(cells[i]) * points for i in (6, 7, 8, 9))
            words.append((cells[11].strip(), left, height - top - tall, left + width, height - top))
        return words

    def read_png(self, png: bytes, *config: str) -> str:
        """Tesseract's output for a page image: its text, or with config `tsv` a table of its words."""
        if self.path is None:
            raise OcrError(f"{self.command!r} is not installed; {INSTALL_HINT}")
        try:
            done = subprocess.run(
                [self.path, "stdin", "stdout", "-l", self.language, "--dpi", str(self.dpi), *config],
                input=png,
                capture_output=True,
                timeout=self.timeout_s,
                check=False,
            )
        except subprocess.TimeoutExpired as exc:
            raise OcrError(f"Tesseract took longer than {self.timeout_s:g} s") from exc
        if done.returncode != 0:
            detail = done.stderr.decode("utf-8", "replace").strip().splitlines()
            raise OcrError(f"Tesseract failed: {detail[-1] if detail else f'exit code {done.returncode}'}")
        return done.stdout.decode("utf-8", "replace")
