"""A question in one language over documents in another: the question is also searched in the
documents' language.

Keyword search finds nothing of "At what time was the meeting closed?" in French minutes ("La séance
est levée à 16h05"), and the packaged MiniLM is an English model; the English question over the French,
German, Spanish and Portuguese documents of the real-documents set found its passage among the top 4
for 9 of 24 questions. Searched as the question followed by its translation, 21 (translations written by
hand, `bench/real_documents_retrieval.py`); the model's translations are measured in
bench/results-real-documents.md. The translation is searched beside the question, never instead of it:
names and figures the model mistranslates are still matched as asked, and the model answering still
reads the question as the user wrote it.
"""

from __future__ import annotations

from core.language import language_name
from providers.llm.base import ChatMessage

# Asked as a bare instruction ("Translate the user's question into German"), the 1.5B answered 2 of 7
# questions in German instead ("Ja, die Zariski Topologie auf R hat disjunkte offene Mengen."); with
# the question framed as the thing to translate, none.
TRANSLATE_SYSTEM = (
    "You translate questions into {language}. Never answer them. Keep names, numbers, dates and codes as "
    "they are. Reply with the translated question only."
)
TRANSLATE_USER = "Translate this question into {language}: {question}"


def translation_messages(question: str, target_lang: str) -> list[ChatMessage]:
    """The prompt that asks for `question` in the language `target_lang` (ISO 639-1)."""
    language = language_name(target_lang)
    return [
        ChatMessage(role="system", content=TRANSLATE_SYSTEM.format(language=language)),
        ChatMessage(role="user", content=TRANSLATE_USER.format(language=language, question=question)),
    ]


def clean_translation(reply: str, question: str) -> str | None:
    """The reply's first line without quotes or a label ("Translation: …"); None when it is empty, the
    question itself, or far longer than it (the model answered instead of translating)."""
    line = next((part.strip() for part in reply.splitlines() if part.strip()), "")
    if ":" in line[:20] and not any(ch.isdigit() for ch in line[: line.index(":")]):
        line = line.split(":", 1)[1].strip()
    line = line.strip("\"'«»“”„ ")
    if not line or line.casefold() == question.strip().casefold() or len(line) > 3 * len(question) + 20:
        return None
    return line
