"""What part of a message asks or supposes rather than states: memory keeps only what was said.

A question holds first-person words ("how do I export my chat history", "Does our NDA template cover
subcontractors?") and a condition holds a whole clause ("If I move to Lisbon, would my contract
change?"), yet neither says anything about the user or the company. A line the memory model wrote from
such a clause is not a fact of theirs (the real-documents eval showed the 1.5B storing "The company's
WARN report is updated every month." from a question about how often it is updated).

A message is cut into sentences, and each sentence into clauses at commas, dashes and colons. A clause
is asked when it opens a question: a wh-word, or an auxiliary before its subject ("am I allowed",
"do we have"), in a sentence that ends in "?" or has no end mark (messages typed without one); the
last clause before a "?" is asked whatever its form ("I'm based in Lyon, what are the parking
rules?"); so is a request to the assistant ("show me my contract's notice period", "book me a table",
"I'd like you to draft …"), unless an adverb makes it standing ("from now on", "always": a wish about
answers, which memory keeps). A request verb that is also a noun opens a statement when no object
follows it ("Work starts at 8", "Email is our main channel"), and "remind me that …" asks to keep. A clause is
supposed when it opens with a conditional ("if", "si", "falls"). A clause with a verb of keeping
("can you store that I need a standing desk") asks to remember what it says: it is said. The words
are each language's closed classes and its verbs of asking and of keeping, not phrasings of any
message.
"""

from __future__ import annotations

import re
import unicodedata
from functools import lru_cache

# Words that open a question, per language: wh-words, save those that also open a statement ("come",
# "como": "as"; "por", "que"). A Spanish question's "¿" opens one in any language.
INTERROGATIVES: dict[str, str] = {
    "en": "who whom whose what what's whats when where where's which why how how's",
    "fr": "qui que quoi quand où pourquoi comment quel quelle quels quelles combien lequel laquelle est-ce qu'est-ce",
    "de": "wer wen wem wessen was wann wo woher wohin warum weshalb wie welche welcher welches welchen wieso",
    "es": "quién quiénes qué cuándo dónde cuál cuáles cómo cuánto cuánta cuántos cuántas",
    "it": "chi cosa quando dove perché quale quali quanto quanta quanti quante",
    "pt": "quem quando onde qual quais quanto quanta quantos quantas",
    "nl": "wie wat wanneer waar waarom hoe welke welk hoeveel",
}
# English auxiliaries: one before a subject pronoun opens a question ("can I", "is our", "do we").
AUXILIARIES = "am is are was were do does did can could should would will shall may might must have has had"
SUBJECTS = "i we you our my it there the this that they he she"
# Verbs that open a request to the assistant, for information, a piece of writing or an errand ("show me
# …", "summarise my review", "write a limerick", "email this form to …", "book me a table"): asked, like
# a question. "Remember", "note" are not among them: they open what the user states.
REQUESTS: dict[str, str] = {
    "en": "tell show give find list summarise summarize explain compare describe search look translate draft "
    "write rewrite compose proofread edit email send forward reply text calculate compute convert estimate "
    "book schedule remind set make create prepare generate put work turn draw order plan help",
    "fr": "dis dites montre montrez donne donnez trouve trouvez liste listez résume résumez explique expliquez "
    "compare comparez décris décrivez cherche cherchez écris écrivez rédige rédigez envoie envoyez calcule "
    "calculez traduis traduisez réserve réservez prépare préparez fais faites crée créez rappelle rappelez",
    "de": "sag sage zeig zeige gib finde liste fasse erkläre erklär vergleiche beschreibe such suche schreib "
    "schreibe schick schicke sende berechne rechne übersetz übersetze buch buche erinnere erstell erstelle "
    "bereite mach",
    "es": "dime dame muestra muéstrame encuentra lista resume explica explícame compara describe busca escribe "
    "redacta envía manda calcula traduce reserva prepara crea haz agenda",
    "it": "dimmi dammi mostra mostrami trova elenca riassumi spiega spiegami confronta descrivi cerca scrivi "
    "redigi invia manda calcola converti traduci prenota prepara crea fai",
    "pt": "diga diz mostre mostra dê encontre liste resuma resume explique explica compare descreva procure "
    "escreva escreve redija envie envia manda mande calcule calcula traduza traduz reserve reserva prepare "
    "prepara crie cria marca marque",
    "nl": "vertel toon geef vind noem vat leg vergelijk beschrijf zoek schrijf stuur bereken reken vertaal "
    "reserveer boek maak",
}
# Adverbs of time that make a request standing ("give me tables from now on", "never start with a
# summary"): such a request states how the user wants answers, and is kept as said.
STANDING: dict[str, str] = {
    "en": "always|never|from now on|going forward|in future|in the future|every time|each time|by default|anymore",
    "fr": "toujours|jamais|désormais|dorénavant|à l'avenir|à partir de maintenant|chaque fois",
    "de": "immer|nie|niemals|ab jetzt|ab sofort|künftig|zukünftig|in zukunft|jedes mal",
    "es": "siempre|nunca|de ahora en adelante|en adelante|a partir de ahora|cada vez",
    "it": "sempre|mai|d'ora in poi|da ora in poi|in futuro|ogni volta",
    "pt": "sempre|nunca|daqui em diante|a partir de agora|de agora em diante|cada vez",
    "nl": "altijd|nooit|voortaan|vanaf nu|in de toekomst|elke keer",
}
# Verbs of keeping, addressed to the assistant ("remember that …", "can you store that I need a
# standing desk"): the clause asks to remember what it says, so it is said, however it is phrased.
KEEPING: dict[str, str] = {
    "en": "remember store note save memorise memorize",
    "fr": "retiens retenez retenir note notez noter enregistre enregistrez enregistrer garde gardez garder "
    "mémorise mémorisez mémoriser",
    "de": "merk merke merken speicher speichere speichern notier notiere notieren behalte behalten",
    "es": "recuerda recuerde recordar guarda guarde guardar anota anote anotar apunta apunte apuntar memoriza",
    "it": "ricorda ricordati ricordare salva salvare annota annotare memorizza memorizzare",
    "pt": "lembra lembre lembrar guarda guarde guardar anota anote anotar memoriza memorize memorizar",
    "nl": "onthoud onthouden bewaar bewaren noteer noteren",
}
# Who a request is addressed to: "you" in each language (also the end of "peux-tu", "können Sie").
ADDRESSED = {"you", "u", "tu", "vous", "du", "sie", "jij", "je", "você", "lei", "usted", "ustedes"}
# Pronouns joined to an imperative by a hyphen ("résume-moi", "donnez-nous").
_CLITICS = {"moi", "toi", "lui", "nous", "vous", "leur", "le", "la", "les", "en", "y", "me", "te"}
# Pronouns joined to the end of a Spanish, Italian or Portuguese imperative ("escríbeme", "envíale",
# "scrivimi", "convertimi"), longest first.
_ENCLITICS = (
    "melo",
    "mela",
    "selo",
    "sela",
    "glielo",
    "nos",
    "les",
    "los",
    "las",
    "me",
    "te",
    "le",
    "lo",
    "la",
    "mi",
    "ti",
    "ci",
    "vi",
    "gli",
)
_ENCLITIC_LANGUAGES = {"es", "it", "pt"}
# English request verbs that are also common nouns opening a statement ("Work starts at 8 for me", "Order
# volume doubled", "Help desk tickets go to Maria", "Book club meets on Tuesdays"): a request only with
# an object after them ("book me a table", "order the toner").
_NOUN_VERBS = set(
    "list search look draft edit email reply text estimate book schedule set make put work turn draw order plan "
    "help".split()
)
_PARTICLES = {"out", "up", "together", "down", "back", "over"}
# A request put to "you" in English, wherever it stands in the clause.
_ASKED_OF_YOU = re.compile(
    r"\b(?:like|want|need|if|please)\s+you\s+(?:to|could|can|would|will)\s+(?:please\s+|kindly\s+)?([a-z]+)"
)
# "Remind me that …", "rappelle-toi que …", "ricordami che …": what follows is to keep, not to do.
_THAT = {"that", "que", "che", "dass", "dat"}
_PERSONS = {"me", "us", "him", "her", "them", "everyone", "mich", "uns", "mir", "nos", "mi", "ci"}
# What follows an imperative: its object ("book me", "email this form", "tell them"), a number, or a
# question word ("explain why …"). A clause that opens with a request verb followed by anything else and
# holds an auxiliary states something ("Email is our main channel", "Draft budgets are due in October").
_OBJECTS = set(
    "me us him her them it this that these those the a an my our your his their its some all every each any "
    "what why how when where which who whether "
    "een het de ein eine einen den die das le la les un une el los las il lo uno una o um uma mij ons".split()
)
# Words that may come before an imperative without changing it ("just send it", "now write …").
_LEADS = {"just", "also", "now", "then", "quickly", "quick", "simply"}
_POLITE = {
    "please",
    "thank",
    "pls",
    "kindly",
    "thanks",
    "thx",
    "bitte",
    "danke",
    "merci",
    "svp",
    "stp",
    "por",
    "favor",
    "gracias",
    "per",
    "piacere",
    "grazie",
    "obrigado",
    "obrigada",
    "alsjeblieft",
    "aub",
    "bedankt",
}
# Words that complete a phrase of politeness ("thank you", "thanks a lot", "s'il te plaît", "vielen Dank").
_THANKS = {
    "thank",
    "you",
    "a",
    "lot",
    "so",
    "very",
    "much",
    "beaucoup",
    "s'il",
    "te",
    "vous",
    "plaît",
    "plait",
    "vielen",
    "herzlichen",
    "muchas",
    "mille",
    "favore",
    "dank",
    "je",
    "wel",
    "muito",
}
# Words that open a supposition. Ambiguous ones are left out ("wenn" is also "when", "als" also "as").
CONDITIONALS: dict[str, str] = {
    "en": "if unless suppose supposing assuming",
    "fr": "si supposons",
    "de": "falls angenommen sofern",
    "es": "si suponiendo",
    "it": "se supponiamo",
    "pt": "se caso supondo",
    "nl": "indien stel",
}
_SENTENCE = re.compile(r"(?:[^.!?\n]|\.(?=\d))+[.!?]*|[.!?]+")  # "12.5" ends no sentence
_CLAUSE = re.compile(r"(?:,(?!\d)|[;:—–()])+|\s-\s")  # nor does "2,340" a clause
_WORD = re.compile(r"[^\W_][\w'’-]*|¿")


def _parsed(table: dict[str, str], separator: str | None = None) -> dict[str, frozenset[str]]:
    return {lang: frozenset(text.split(separator)) for lang, text in table.items()}


_TABLES = {
    "interrogatives": _parsed(INTERROGATIVES),
    "requests": _parsed(REQUESTS),
    "standing": _parsed(STANDING, "|"),
    "keeping": _parsed(KEEPING),
    "conditionals": _parsed(CONDITIONALS),
}


def _vocabulary(table: str, lang: str) -> frozenset[str]:
    """A table's words (or phrases) in English and in the message's language."""
    words = _TABLES[table]
    return words["en"] | words.get(lang, frozenset())


def said_part(message: str, lang: str = "en", requests_asked: bool = True) -> str:
    """The message without its asked and supposed clauses: what it states. `requests_asked` False keeps
    requests to the assistant (a standing wish is stated as one: "give me bullet points as a rule")."""
    kept: list[str] = []
    requests_asked = requests_asked and not _standing(message, lang)
    for match in _SENTENCE.finditer(message):
        sentence = match.group().strip()
        end = sentence[-1] if sentence and sentence[-1] in ".!?" else ""
        pieces = [piece for piece in _CLAUSE.split(sentence.rstrip(".!?")) if piece.strip()]
        for n, piece in enumerate(pieces):
            words = [w.lower().replace("’", "'") for w in _WORD.findall(piece)]
            if _only_thanks(words):  # "…, please.", "…, thank you." say nothing
                continue
            if _keeps(words, lang):
                kept.append(piece)
                continue
            last_of_question = end == "?" and n == len(pieces) - 1
            opens_question = end in ("?", "") and _opens_question(words, lang)
            requested = requests_asked and _requests(words, lang)
            if last_of_question or opens_question or requested or _supposes(words, lang):
                continue
            kept.append(piece)
    return " ".join(kept)


def _only_thanks(words: list[str]) -> bool:
    """The clause is a word or phrase of politeness alone ("please", "thank you", "merci beaucoup",
    "per favore", "vielen Dank")."""
    return bool(words) and all(w in _POLITE or w in _THANKS for w in words) and any(w in _POLITE for w in words)


def _keeps(words: list[str], lang: str) -> bool:
    """A verb of keeping opens the clause (after any word of politeness) or follows "you"; "make a note"
    and "take note" too."""
    verbs = _vocabulary("keeping", lang)
    words = [word for word in words if word not in _POLITE]
    if words[:3] in (["make", "a", "note"], ["take", "a", "note"]) or words[:2] == ["take", "note"]:
        return True
    return any(
        word.split("-")[0] in verbs and (n == 0 or words[n - 1].split("-")[-1] in ADDRESSED)
        for n, word in enumerate(words)
    )


def _standing(message: str, lang: str) -> bool:
    text = " " + " ".join(w.lower().replace("’", "'") for w in _WORD.findall(message)) + " "
    return any(f" {phrase} " in text for phrase in _vocabulary("standing", lang))


def _requests(words: list[str], lang: str) -> bool:
    """The clause opens with a request verb (after any word of politeness), or, in English, asks "you"
    to do one ("I'd like you to draft …", "it would be great if you could write …"). Not a request: a
    verb followed by "that" ("remind me that …", "rappelle-toi que …": something to keep); in English,
    a verb that is also a common noun without an object after it ("Work starts at 8", "Order 12345 is
    mine"), and any other followed by no object in a clause with an auxiliary ("Email is our main
    channel", "Compute costs are billed monthly")."""
    words = [word for word in words if word not in _POLITE]
    if lang == "en":
        asked = _ASKED_OF_YOU.search(" ".join(words))
        if asked is not None and _imperative(asked.group(1), lang):
            return True
    opening = next((word for word in words if word not in _LEADS), "")
    rest = words[words.index(opening) + 1 :] if opening else []
    verb, _, pronoun = opening.partition("-")
    if pronoun and pronoun not in _CLITICS:  # "résume-moi" is a request, "write-offs" a noun
        return False
    if not _imperative(verb, lang) or _keeps_what_follows(opening, rest):
        return False
    has_object = bool(rest) and rest[0] in _OBJECTS
    if verb in _NOUN_VERBS:  # in any language: "work out the total", "plan een overleg"; "Plan B is …" states
        return has_object or (len(rest) > 1 and rest[0] in _PARTICLES and rest[1] in _OBJECTS)
    if lang != "en":
        return True
    auxiliary = any(word in AUXILIARIES.split() or word.endswith("n't") for word in rest)
    return has_object or not rest or rest[0][0].isdigit() or not auxiliary


def _keeps_what_follows(opening: str, rest: list[str]) -> bool:
    """ "Remind me that …", "rappelle-toi que …", "ricordami che …": a person, then "that", after the
    verb (or joined to it): what follows is to keep. "Summarise that answer" is a request."""
    if rest[:1] and rest[0] in _THAT:
        return opening != opening.partition("-")[0] or _unaccented(opening) not in _unaccented_all()
    return len(rest) > 1 and rest[0] in _PERSONS and rest[1] in _THAT


def _imperative(word: str, lang: str) -> bool:
    """`word` is a request verb of English or of `lang`, or, in Spanish, Italian or Portuguese, one of
    that language's with a pronoun joined to its end ("envíale" is "envía" + "le"); accents are ignored,
    since the pronoun moves the stress mark ("escríbeme", "escribe")."""
    if word in _vocabulary("requests", lang):
        return True
    if lang not in _ENCLITIC_LANGUAGES:
        return False
    plain = _unaccented(word)
    stems = [plain[: -len(clitic)] for clitic in _ENCLITICS if plain.endswith(clitic) and len(plain) > len(clitic) + 2]
    return any(stem in _unaccented_verbs(lang) for stem in stems)


def _unaccented(word: str) -> str:
    return "".join(c for c in unicodedata.normalize("NFD", word) if unicodedata.category(c) != "Mn")


@lru_cache(maxsize=1)
def _unaccented_all() -> frozenset[str]:
    """Every request verb of every language, without accents (a verb with no pronoun joined to it)."""
    return frozenset(_unaccented(verb) for verbs in _TABLES["requests"].values() for verb in verbs)


@lru_cache(maxsize=16)
def _unaccented_verbs(lang: str) -> frozenset[str]:
    """The request verbs of `lang` alone, without accents."""
    return frozenset(_unaccented(verb) for verb in _TABLES["requests"][lang])


def _opens_question(words: list[str], lang: str) -> bool:
    if not words:
        return False
    if words[0] in _vocabulary("interrogatives", lang) or words[0] == "¿":
        return True
    return len(words) > 1 and words[0] in AUXILIARIES.split() and words[1] in SUBJECTS.split()


def _supposes(words: list[str], lang: str) -> bool:
    first, second = [*words, "", ""][:2]
    return (
        first in _vocabulary("conditionals", lang)
        or (first, second) == ("in", "case")
        or (first == "say" and second in ("i", "we"))
    )
