"""Whether a question asks for a yes or a no ("Is a special flight permit required?").

A small model answers such a question "Yes" whatever its evidence says, and its hidden phrase line
(rag/answer_format.py) holds "Yes" instead of the evidence's words, which the abstention score reads
as an invented phrase. A yes/no question is answered another way (rag/polar_answer.py), so it must be
told apart from the requests and open questions that share its first word: "Can you list the dates?"
and "Do you know when it opened?" ask for something else; "Is it paid monthly or yearly?" offers a
choice. The rules are the grammar of yes/no questions in the languages the product answers in: a
finite auxiliary or verb first (English, German, French inversion), "est-ce que", a tag ("…,
right?", "n'est-ce pas ?", "¿verdad?"), an embedded "whether" / "if", or, in the Romance languages
that mark a yes/no question by its question mark alone, a question that opens with no question word.
Measured on the frozen eval/datasets/polar/detect.jsonl (bench/polar_detection.py).
"""

from __future__ import annotations

import re


def _words(text: str) -> frozenset[str]:
    return frozenset(text.split())


_EN_AUX = _words(
    "is are was were am do does did can could may might must shall should will would has have had need "
    "isn't aren't wasn't weren't don't doesn't didn't can't cannot couldn't mustn't shouldn't won't "
    "wouldn't hasn't haven't hadn't needn't"
)
_EN_WH = r"what|which|who|whom|whose|when|where|why|how|what's|whats|who's|whos|where's|wheres|how's|hows"
# "Can you list …", "Could you tell me who …", "Would you mind …": a request phrased as a question
# ("Can you pay by card?" is not one: its verb asks nothing of the reader).
_EN_REQUEST = re.compile(
    r"^(can|could|would|will|won't|might)\s+(you|u|ya)\s+((please|kindly|just|quickly|also)\s+)?(be\s+able\s+to\s+)?"
    r"(list|tell|give|show|summari[sz]e|sum|explain|find|pull|translate|walk|break|help|provide|check|compare|describe|send|"
    r"write|make|get|extract|look|go|point|outline|name|identify|count|read|draft|rewrite|recap|clarify|detail|recomm?end|"
    r"suggest)\b"
    r"|^do\s+you\s+(mind|want|have)\b|^would\s+you\s+mind\b|^would\s+it\s+be\s+possible\b",
    re.IGNORECASE,
)
# "Is there a way / any way to …", "Is it possible to …" ask how.
_EN_HOW = re.compile(
    r"^(is|are)\s+there\s+(a|any)\s+(way|option|method|possibility)\b|^is\s+it\s+possible\s+to\b", re.IGNORECASE
)
# "Is the fee refundable, and if so, how do I claim it?": the yes/no part leads to an open question.
_THEN_OPEN = re.compile(
    r",?\s+(and|or|but)\s+(if\s+(so|not),?\s+)?(then\s+)?(what|which|who|whom|when|where|why|how)\b", re.IGNORECASE
)
# "Tell me whether …", "Can you tell me if …": an embedded yes/no question.
_EMBEDDED = re.compile(
    r"\b(whether|ob|si|se|se\s+[ée])\b|\b(tell|let)\s+me\s+know\s+if\b|\b(tell\s+me|know|ask|check|confirm|see)\s+if\b",
    re.IGNORECASE,
)
_EMBEDDED_ROMANCE = re.compile(
    r"\b(sais|savez|sabe|sabes|sai|sapete|dites-moi|dis-moi|dime|diga|dimmi)\s+(si|se)\b", re.IGNORECASE
)
_TAG = re.compile(
    r",\s*(right|correct|isn't it|aren't they|doesn't it|don't they|didn't it|didn't they|wasn't it|weren't they|"
    r"isn't that so|is that right|no|yes|yeah|eh|true|n'est-ce pas|non|hein|oder|nicht wahr|ne|stimmt's|verdad|"
    r"no es así|cierto|não é|né|certo|vero|giusto)\s*\??\s*$",
    re.IGNORECASE,
)
_FR_INVERSION = re.compile(r"^(\S+\s+){0,4}?\S+-(t-)?(il|elle|on|ils|elles|je|tu|nous|vous)\b", re.IGNORECASE)
_FR_QUESTION_WORD = re.compile(
    r"^(que|qu'|quel|quelle|quels|quelles|qui|quoi|quand|où|ou|comment|combien|pourquoi|lequel|laquelle)\b",
    re.IGNORECASE,
)
_FR_HOW = re.compile(r"^(est-ce qu'il y a|est ce qu'il y a|y a-t-il|y a t il)\s+(un|des)\s+(moyen|façon|manière)")
_FR_WH = _words("que quel quelle quels quelles qui quoi quand où comment combien pourquoi lequel laquelle")
_DE_WH = _words(
    "was wer wen wem wessen wie wo wann warum weshalb wieso welche welcher welches welchen welchem woher wohin wozu "
    "womit wofür worüber wieviel wieviele"
)
_DE_SUBJECT = _words("es ich du er sie wir ihr man der die das den dem ein eine einen mein meine dieser diese dieses")
_ROMANCE_WH = {
    "es": _words(
        "qué que cuál cual cuáles cuales quién quien quiénes quienes cuándo cuando dónde donde cómo como cuánto "
        "cuanto cuánta cuántos cuantos cuántas cuantas por para adónde"
    ),
    "pt": _words("que qual quais quem quando onde como quanto quanta quantos quantas por porque aonde"),
    "it": _words("che cosa cos' quale quali chi quando dove come quanto quanta quanti quante perché perche"),
}
_ROMANCE_REQUEST = re.compile(
    r"^((me|nos|mi|ci|te|ti|mir|uns)\s+)?(puedes|podrías|podrias|puede|podría|podria|pode|poderia|você pode|"
    r"voce pode|puoi|potresti|può|potrebbe|peux-tu|pouvez-vous|pourriez-vous|pourrais-tu|kannst du|können sie|"
    r"könnten sie|koenntest du|könntest du)\s+"
    r"(\w+\s+)?(listar|decir|dizer|dar|mostrar|resumir|explicar|enumerar|indicar|elencare|dire|dirmi|mostrare|"
    r"riassumere|spiegare|lister|donner|montrer|résumer|expliquer|indiquer|auflisten|sagen|zeigen|zusammenfassen|"
    r"erklären|nennen|me|mir|uns)\b",
    re.IGNORECASE,
)
# A choice between two named things ("… monthly or yearly?"), not "… or not?" nor "… or more".
_CHOICE_TAIL = (
    r")\s(?!not\b|pas\b|nicht\b|no\b|não\b|non\b|more\b|less\b|fewer\b|over\b|under\b|above\b|"
    r"below\b|older\b|younger\b|later\b|earlier\b|plus\b|mehr\b|más\b|mais\b|più\b)\S"
)
_OR = {"en": "or", "fr": "ou", "de": "oder", "es": "o|u", "pt": "ou", "it": "o|oppure"}
_CHOICE = {lang: re.compile(rf"\s({words}{_CHOICE_TAIL}", re.IGNORECASE) for lang, words in _OR.items()}
# Words a question can open with after a statement: an auxiliary, a question word, "if".
_OPENERS = _EN_AUX | _words(_EN_WH.replace("|", " ")) | _words("if and so but")
# An opening phrase before the asking clause ("According to table 2, …", "In the minutes, …").
_LEADING = _words(
    "according in on for per under from as so ok okay also and but then well hey quick if selon dans pour laut "
    "im según segun en segundo no na secondo nel nella alors donc entonces então quindi"
)
# A clause of any length before the asking clause ("When I quit and save, does R keep …?").
_SUBORDINATE = _words(
    "for when if after before once since while because although given with without under in on at by during as "
    "assuming suppose supposing"
)
# A question mark after these words asks for the word that follows ("The practice was called?").
_CLOZE_END = _words("called named known to of for by with as from in on at is are was were be been than the a an")
_FOLLOW_UP = _words("and or plus also")
_NOUN_BEFORE = _words("the a an of in on for to at by with from all any some these those its their our your my")
_IMPERATIVE = _words("name list give state identify describe explain summarize summarise tell show find define")


def is_polar(question: str, lang: str = "en") -> bool:
    """Whether `question` (in language `lang`) asks to be answered yes or no."""
    text = _main_clause(question)
    if not text or _opens_with_wh(text):
        return False
    if _TAG.search(text):
        return True
    choice = _CHOICE.get(lang, _CHOICE["en"])
    if _EMBEDDED_ROMANCE.search(text) or (lang == "en" and _EMBEDDED.search(text)):
        return not choice.search(text)
    if choice.search(text) or _THEN_OPEN.search(text):
        return False
    if lang == "fr":
        return _french(text)
    if lang == "de":
        return _german(text)
    if lang in _ROMANCE_WH:
        return _romance(text, lang)
    return _english(text)


def _main_clause(question: str) -> str:
    """The last question of the message ("I typed … and lost it. Can I get it back?"), without a
    leading "According to the report," / "Quick question:" / "When I quit," and outer marks."""
    text = question.strip()
    asked = [s for s in re.split(r"(?<=\?)\s+", text) if "?" in s]
    text = (asked or [text])[-1]
    # A statement before the question, never an abbreviation ("How long is the St. Lawrence River?").
    for match in reversed(list(re.finditer(r"[.!]\s+(\S+)", text))):
        if match.group(1).lower().strip(",") in _OPENERS:
            text = text[match.start(1) :]
            break
    text = text.strip().strip("¿¡").strip()
    head, sep, rest = text.partition(":")
    if sep and rest.strip() and len(head.split()) <= 4:
        text = rest.strip()
    parts = re.split(r",\s+", text, maxsplit=1)
    if len(parts) == 2 and parts[1] and _leads(parts[0], parts[1]):
        text = parts[1]
    return text.strip().strip("¿¡").strip()


def _leads(head: str, rest: str) -> bool:
    """Whether `head` only leads to the question in `rest`: a subordinate clause before an auxiliary
    ("For a single filer whose income is …, is the tax …?"), or a short opening phrase that holds no
    question word ("In what year was Charleston, North Carolina founded?" keeps its head)."""
    first = head.split()[0].lower()
    if first in _SUBORDINATE and rest.split()[0].lower().strip(",") in _EN_AUX:
        return True
    has_wh = re.search(rf"\b({_EN_WH})\b", head, re.IGNORECASE) is not None
    return len(head.split()) <= 8 and first in _LEADING and not has_wh


def _opens_with_wh(text: str) -> bool:
    return re.match(rf"^({_EN_WH})\b", text, re.IGNORECASE) is not None


def _english(text: str) -> bool:
    first = text.split()[0].lower().strip(",")
    if first in _EN_AUX:
        if _EN_REQUEST.match(text) or _EN_HOW.match(text):
            return False
        # "Do you know when it opened?": a question word after "know" embeds an open question.
        return not re.match(rf"^\S+\s+(you|u)\s+(know|remember|recall|see)\s+({_EN_WH})\b", text, re.IGNORECASE)
    # "So the deadline is Friday?": a statement asked as a question, with no question word, that is
    # not a fill-in ("The practice was called?") or an order ("Name a type of truck?").
    words = re.findall(r"[\w']+", text.lower())
    if not text.rstrip().endswith("?") or len(words) < 3 or words[-1] in _CLOZE_END or words[0] in _IMPERATIVE:
        return False
    if words[0] in _FOLLOW_UP and len(words) <= 4:  # "And in Q1?": a follow-up that leaves its question out
        return False
    # A statement has a verb ("… is Friday?", "… installed …?"); "Q2 revenue of Westland?" asks what it is.
    if not any(_verb(word, before) for before, word in zip(["", *words], words, strict=False)):
        return False
    return not re.search(rf"\b({_EN_WH})\b", text, re.IGNORECASE)


def _asks_what(text: str, question_words: frozenset[str]) -> bool:
    """A question word among the first three ("À quelle heure …", "Sous quel délai …", "In welchem Jahr …")."""
    return any(word.strip("¿¡,'") in question_words for word in text.lower().split()[:3])


def _verb(word: str, before: str) -> bool:
    """A word that may be a statement's verb: an auxiliary, a past form, or a present one ("covers")
    that no article or preposition puts before (then it is a plural noun)."""
    if word in _EN_AUX or (len(word) > 4 and word.endswith("ed")):
        return True
    return len(word) > 3 and word.endswith("s") and not word.endswith("ss") and before not in _NOUN_BEFORE


def _french(text: str) -> bool:
    lower = text.lower()
    if _FR_HOW.match(lower):
        return False
    if lower.startswith(("est-ce qu", "est ce qu")):
        return True
    if _asks_what(lower, _FR_WH):
        return False
    if _FR_QUESTION_WORD.match(lower) or _ROMANCE_REQUEST.match(lower):
        return False
    if _FR_INVERSION.match(lower) or lower.startswith(("y a-t-il", "y a t il")):
        return True
    return lower.rstrip().endswith("?")


def _german(text: str) -> bool:
    words = text.split()
    if not text.rstrip().endswith("?") and len(words) > 1 and words[1] == "Sie":
        return False  # "Fassen Sie Abschnitt 2 zusammen.": a polite imperative
    if _asks_what(text, _DE_WH) or _ROMANCE_REQUEST.match(text.lower()):
        return False
    # A verb first: anything but a question word, then a subject ("Gibt es …", "Muss ich …"), or a "?".
    second = words[1].lower() if len(words) > 1 else ""
    return second in _DE_SUBJECT or text.rstrip().endswith("?")


def _romance(text: str, lang: str) -> bool:
    """Spanish, Portuguese and Italian mark a yes/no question by its question mark alone."""
    lower = text.lower()
    if _asks_what(lower, _ROMANCE_WH[lang]) or lower.startswith("o que ") or _ROMANCE_REQUEST.match(lower):
        return False
    return lower.rstrip().endswith("?")
