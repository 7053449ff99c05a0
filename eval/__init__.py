"""Evaluation: `ragchat eval`, the Eval page, RAGAS and our own metrics (issue #8).

ragas sends usage analytics unless RAGAS_DO_NOT_TRACK is true; a private, offline assistant must not
phone home, so it is set here, before any module of this package imports ragas.
"""

import os

os.environ.setdefault("RAGAS_DO_NOT_TRACK", "true")
