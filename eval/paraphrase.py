"""The rule the frozen real-document sets check a paraphrased question by: it shares no content word
with its gold passage (lower case, stopwords out, words of 4+ letters compared on their first 5).
eval/datasets/real_documents/check.py and eval/datasets/polar/check.py both apply it."""

from __future__ import annotations

import re

STOPWORDS = set(
    """a about above according after again against all also am an and any are as at be because been before
    being below between both but by can could did do does doing down during each few for from further get
    gets got had has have having he her here hers him his how i if in into is it its itself just let like
    may me might more most must my no nor not now of off on once only or other our out over own per please
    same she should so some such than that the their them then there these they this those through to too
    under until up upon us very was we were what when where which while who whom whose why will with would
    you your yours give tell show list name many much does according document text""".split()
)
WORD = re.compile(r"[^\W\d_]+")


def content_words(text: str) -> set[str]:
    return {w for w in WORD.findall(text.casefold()) if len(w) >= 4 and w not in STOPWORDS}


def shared_words(question: str, gold: str) -> set[str]:
    """The question's content words whose first 5 letters begin a 4+ letter word of the gold passage."""
    stems = {w[:5] for w in WORD.findall(gold.casefold()) if len(w) >= 4}
    return {w for w in content_words(question) if w[:5] in stems}
