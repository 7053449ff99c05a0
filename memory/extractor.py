"""The memory model's step: read the user's whole message and list the lasting facts in it, each a
clean third-person statement and the file it belongs to, with decoding constrained to a JSON schema
(an empty list when the message holds none). Then each statement is checked against the message.

The model judges by meaning what a fact is and whose it is: questions, greetings, moods, plans and
one-off remarks give an empty list; "we", "our", "the company's …" and a named company give COMPANY
lines, whatever the sentence's grammatical person. No word list is matched against the message.

What the model writes is checked, not trusted: a statement that names a person, place or number the
user did not say (the 0.5B copies its examples into unrelated messages), that keeps a first-person
word, or that holds a secret is dropped, with the reason kept for the reply.
"""

from __future__ import annotations

import functools
import json
import re
from typing import Any

from pydantic import BaseModel, Field, ValidationError

from core.language import LanguageDetector, language_name
from core.schemas import MemoryFact
from core.secrets import find_secret
from core.text import tokenize
from memory.asked import said_part
from providers.llm.base import LLM, ChatMessage, LLMError

MAX_FACTS = 4

SYSTEM_PROMPT = """You keep a memory of lasting facts about the user and the user's company, taken from \
what the user writes in a chat. List every lasting fact in the message, one per item:
- USER: about the person: name, job, team, manager, office or city, routines, standing wishes about \
answers, health or diet facts they ask you to remember.
- COMPANY: about the organisation ("we", "our", "the company", or a company's name, in any language: \
"nous", "notre", "wir", "unser" too): its name, size, sites, tools, policies, customers, calendar.
Not lasting, so {"facts": []}: questions, greetings, thanks, moods, weather, small talk, guesses and plans \
(maybe, might, thinking about), what is true only today, health remarks made in passing, passwords.
A statement is one short sentence starting with "The user" or "The company" (or the company's name), \
in the message's language. Never write I, me, my, we or our. Drop lead-ins (note that, remember that, \
for context, by the way). Keep every name, number, day, time and frequency exactly as written.

Message: hey, I'm Marta and I look after payroll at Fjellstad Transport
{"facts": [{"statement": "The user's name is Marta.", "target": "USER"}, {"statement": "The user looks \
after payroll.", "target": "USER"}, {"statement": "The company is called Fjellstad Transport.", "target": \
"COMPANY"}]}
Message: What's the deadline for expense claims?
{"facts": []}
Message: For the record, our interns get 25 vacation days a year.
{"facts": [{"statement": "The company's interns get 25 vacation days a year.", "target": "COMPANY"}]}
Message: The firm's parking permits renew every January.
{"facts": [{"statement": "The company's parking permits renew every January.", "target": "COMPANY"}]}
Message: Over at Hallberg Marine we invoice customers every quarter.
{"facts": [{"statement": "Hallberg Marine invoices customers every quarter.", "target": "COMPANY"}]}
Message: Could you make a note that I can't eat gluten?
{"facts": [{"statement": "The user cannot eat gluten.", "target": "USER"}]}
Message: thanks, that helps! long day today
{"facts": []}
Message: As the fleet planner, how many trucks may I book per week?
{"facts": [{"statement": "The user is the fleet planner.", "target": "USER"}]}
Message: we might try a four-day week next spring
{"facts": []}
Message: I'm in the Leeds office, and please always answer me in Spanish.
{"facts": [{"statement": "The user works in the Leeds office.", "target": "USER"}, {"statement": "The user \
wants answers in Spanish.", "target": "USER"}]}
Message: From now on, keep your answers under 100 words.
{"facts": [{"statement": "The user wants answers under 100 words.", "target": "USER"}]}
Message: can you put that in a table?
{"facts": []}
Message: Nous fermons l'entrepôt le samedi.
{"facts": [{"statement": "L'entreprise ferme l'entrepôt le samedi.", "target": "COMPANY"}]}
Message: Je travaille à Nantes depuis mars.
{"facts": [{"statement": "L'utilisateur travaille à Nantes depuis mars.", "target": "USER"}]}"""

# Kept to what llama.cpp's JSON-schema grammar, Ollama's `format` and OpenAI's json_schema all accept.
FACTS_SCHEMA: dict[str, Any] = {
    "type": "object",
    "properties": {
        "facts": {
            "type": "array",
            "maxItems": MAX_FACTS,
            "items": {
                "type": "object",
                # The statement first: the model names its subject ("The company …") before it files it.
                "properties": {
                    "statement": {"type": "string"},
                    "target": {"enum": ["USER", "COMPANY"]},
                },
                "required": ["statement", "target"],
            },
        }
    },
    "required": ["facts"],
}


# The two subjects a statement starts with, per language the memory writes lines in. A message in
# another language gets English lines (the checks below would not know its subjects or pronouns).
STATEMENT_SUBJECTS: dict[str, tuple[str, str]] = {
    "en": ("The user", "The company"),
    "fr": ("L'utilisateur", "L'entreprise"),
    "de": ("Der Nutzer", "Das Unternehmen"),
    "es": ("El usuario", "La empresa"),
    "it": ("L'utente", "L'azienda"),
    "pt": ("O utilizador", "A empresa"),
    "nl": ("De gebruiker", "Het bedrijf"),
}

# First-person words, per language: one left in a statement means it was copied, not restated.
FIRST_PERSON: dict[str, str] = {
    "en": "i i'm i've i'd i'll me my mine myself we we're we've we'll our ours ourselves",
    "fr": "je j' moi mon ma mes nous notre nos",
    "de": "ich mich mir mein meine meinen meinem meiner wir uns unser unsere unseren",
    "es": "yo mi mis conmigo nosotros nosotras nuestro nuestra nuestros nuestras",
    "it": "io mio mia miei mie noi nostro nostra nostri nostre",
    "pt": "eu meu minha meus minhas nós nosso nossa nossos nossas",
    "nl": "ik mij mijn wij ons onze",
}


# The first person plural of each language: a message that says "we" or "our" speaks for the company.
FIRST_PERSON_PLURAL: dict[str, str] = {
    "en": "we we're we've we'll our ours ourselves us",
    "fr": "nous notre nos",
    "de": "wir uns unser unsere unseren unserem unserer",
    "es": "nosotros nosotras nuestro nuestra nuestros nuestras",
    "it": "noi nostro nostra nostri nostre",
    "pt": "nós nosso nossa nossos nossas",
    "nl": "wij we ons onze",
}


def plural_words(lang: str) -> frozenset[str]:
    """The first person plural of English and of the language the lines of a message in `lang` are in."""
    return frozenset(FIRST_PERSON_PLURAL["en"].split()) | frozenset(
        FIRST_PERSON_PLURAL[statement_language(lang)].split()
    )


def _speaks_for_company(message: str, lang: str) -> bool:
    words = plural_words(lang)
    return any(word in words for word in re.findall(r"[^\W\d_][\w'’]*", message.lower()))


def statement_language(lang: str) -> str:
    """The language the memory's lines for a message in `lang` are written in."""
    return lang if lang in STATEMENT_SUBJECTS else "en"


def system_prompt(lang: str) -> str:
    """The extraction prompt; for a message in another language it ends by naming that language and
    its two subjects (the 1.5B wrote English lines for French and German messages when the prompt
    only said "in the message's language"). English prompts are the bare SYSTEM_PROMPT, so they stay
    identical from message to message."""
    lang = statement_language(lang)
    if lang == "en":
        return SYSTEM_PROMPT
    user, company = STATEMENT_SUBJECTS[lang]
    name = language_name(lang)
    return (
        f"{SYSTEM_PROMPT}\n\nThe next message is in {name}. Write its statements in {name}, each starting "
        f'with "{user}" or "{company}" (or the company\'s name).'
    )


class FactList(BaseModel):
    facts: list[MemoryFact] = Field(max_length=MAX_FACTS)


class Rejected(Exception):
    """Nothing from the model's reply is written; the message says why."""


class FirstPerson(Rejected):
    """The statement kept the user's own first-person words."""


class NotAbout(Rejected):
    """The statement's subject is neither the user nor the company ("The busiest month is December.")."""


def extract(llm: LLM, message: str, lang: str = "en") -> list[MemoryFact]:
    """The model's facts for `message` (written in `lang`), as it wrote them (see `checked` before
    writing one)."""
    messages = [
        ChatMessage(role="system", content=system_prompt(lang)),
        ChatMessage(role="user", content=f"Message: {message}"),
    ]
    try:
        reply = llm.complete_json(messages, FACTS_SCHEMA, max_tokens=60 * MAX_FACTS)
        return FactList.model_validate_json(reply).facts
    except LLMError as exc:
        raise Rejected(f"the memory model failed ({exc})") from exc
    except ValidationError as exc:
        raise Rejected(f"the memory model's reply was not a list of facts ({exc.error_count()} errors)") from exc


_NUMBER = re.compile(r"\d+(?:[.,:]\d+)*")
_WORD = re.compile(r"[^\W\d_][\w'’-]*")
# The statements' own subject words, which the message does not say ("The user", "L'utilisateur").
_SUBJECTS = {word.lower() for pair in STATEMENT_SUBJECTS.values() for subject in pair for word in subject.split()}
_SUBJECTS |= {"user's", "company's", "nutzers", "unternehmens"}
SUBJECT_TERMS = {term for word in _SUBJECTS for lang in STATEMENT_SUBJECTS for term in tokenize(word, lang)}


@functools.lru_cache
def _first_person(langs: frozenset[str]) -> re.Pattern[str]:
    words = {word for lang in langs for word in FIRST_PERSON[lang].split()}
    return re.compile(r"\b(" + "|".join(sorted(map(re.escape, words), key=len, reverse=True)) + r")\b")


_detector = LanguageDetector()
# "us", matched as written: in capitals it is the country ("the company's US office").
_US = re.compile(r"\bus\b")


def _keeps_first_person(statement: str, lang: str) -> bool:
    """A first-person word of English, of the message's language or of the statement's own (a copied
    "Wir haben unseren Hauptsitz in Stuttgart." under an English hint); not of every language, where
    "eu" or "io" are English words ("the company's EU entities")."""
    langs = frozenset({"en", statement_language(lang), statement_language(_detector(statement))})
    return bool(_first_person(langs).search(statement.lower()) or _US.search(statement))


def checked(fact: MemoryFact, message: str, lang: str = "en", wish: bool = False) -> MemoryFact:
    """The fact, tidied into one line, or Rejected with the reason.

    Faithfulness: every number and every capitalised word (a name, a place, a product) of the
    statement must be in the message; the target follows the statement's own subject when it names
    one ("The user …" is a USER line even if the model filed it under COMPANY). `wish`: the message
    states how the user wants answers; its requests to the assistant are then what it says.
    """
    statement = " ".join(fact.statement.split()).strip(" -*")
    if not statement:
        raise Rejected("the memory model wrote an empty statement")
    statement = statement[0].upper() + statement[1:]
    if not statement.endswith((".", "!")):
        statement += "."
    said = message.lower()
    invented = [n for n in _NUMBER.findall(statement) if n not in said]
    words = _WORD.findall(statement)
    names = [w.lower().removesuffix("'s") for w in words[1:] if w[0].isupper()]
    # A name the model put in the plural ("no-meeting wednesday afternoons" → "Wednesdays") was said.
    invented += [
        name
        for name in names
        if name not in _SUBJECTS and name not in said and not (name.endswith("s") and name[:-1] in said)
    ]
    if invented:
        raise Rejected(f"it names what the message did not say ({', '.join(invented)})")
    if _keeps_first_person(statement, lang):
        raise FirstPerson("it is not a third-person statement")
    if not _said_not_asked(statement, message, lang, requests_asked=not wish):
        raise Rejected("it is what the message asks, not what it says")
    if not _about_user_or_company(statement, fact.target, message, lang):
        raise NotAbout("it is not about you or your company")
    if secret := find_secret(statement):
        raise Rejected(f"it holds {secret}")
    target = fact.target
    if statement.lower().startswith(_USER_SUBJECTS):
        target = "USER"
    elif statement.lower().startswith(_COMPANY_SUBJECTS):
        target = "COMPANY"
    return MemoryFact(target=target, statement=statement)


def as_company(fact: MemoryFact) -> MemoryFact:
    """The fact with the company as its subject in place of the user, in the line's own language
    ("L'utilisateur utilise Teams." → "L'entreprise utilise Teams."), for a line the model filed under
    the user that restates what the message said of the company (memory/speaker.py)."""
    for old, new in STATEMENT_SUBJECTS.values():
        if fact.statement.lower().startswith(old.lower()):
            return MemoryFact(target="COMPANY", statement=new + fact.statement[len(old) :])
    return fact


SAID_TERMS_SHARE = 0.5


def _said_not_asked(statement: str, message: str, lang: str, requests_asked: bool = True) -> bool:
    """A statement keeps to what the message states: at least half its terms (its subject aside) are
    in the message without its asked and supposed clauses (memory/asked.py). "Does our NDA template
    cover subcontractors?" is no fact that it does, nor "If I move to Lisbon, …" that the user moves."""
    said_text = said_part(message, lang, requests_asked)
    if _WORD.findall(said_text) == _WORD.findall(message):
        return True  # nothing asked or supposed: the checks above judge the line
    said = set(tokenize(said_text, lang))
    terms = [t for t in tokenize(statement, lang) if t not in SUBJECT_TERMS]
    return not terms or sum(t in said for t in terms) >= SAID_TERMS_SHARE * len(terms)


_USER_SUBJECTS = ("user ", "user's", "des nutzers", *(user.lower() for user, _ in STATEMENT_SUBJECTS.values()))
_COMPANY_SUBJECTS = ("company ", "company's", "des unternehmens", *(c.lower() for _, c in STATEMENT_SUBJECTS.values()))


# "… is the user's name.", "… est le nom de l'utilisateur.": the user or the company named after the verb.
_NAMES_SUBJECT = re.compile(
    r"\b(" + "|".join(re.escape(subject.lower()) for pair in STATEMENT_SUBJECTS.values() for subject in pair) + r")\b",
    re.IGNORECASE,
)


def _about_user_or_company(statement: str, target: str, message: str, lang: str = "en") -> bool:
    """The statement's subject is the user or the company (or it names them: "Siobhan is the user's
    name."), or, for a COMPANY line, a name the message gave (the company's) or anything of a message
    that speaks for the company ("Our support desk is staffed 8–18." → "The support desk is staffed
    8–18."): the form the prompt asks for. "The weather is nice today." is neither."""
    if statement.lower().startswith(_USER_SUBJECTS + _COMPANY_SUBJECTS) or _NAMES_SUBJECT.search(statement):
        return True
    if target == "COMPANY" and _speaks_for_company(message, lang):
        return True
    first = _WORD.match(statement)
    name = first.group().removesuffix("'s").removesuffix("’s") if first else ""
    # A name, not a word any sentence may start with ("There's talk of moving …"): not a stop word.
    return target == "COMPANY" and name[:1].isupper() and bool(tokenize(name, lang)) and name in message


RESTATE_PROMPT = """Rewrite the sentence a user wrote about themselves or their company as a statement in the \
third person: "I", "me" and "my" become "{user}", "we", "us" and "our" become "{company}" ("{company}'s"). \
Keep every other word, name and number as written, in the sentence's language.

Sentence: I lead the payroll team in Oslo.
{{"statement": "{user} leads the payroll team in Oslo."}}
Sentence: We close the books on the third working day.
{{"statement": "{company} closes the books on the third working day."}}
Sentence: {user} sits in our Madrid office.
{{"statement": "{user} sits in {company_lower}'s Madrid office."}}"""

STATEMENT_SCHEMA: dict[str, Any] = {
    "type": "object",
    "properties": {"statement": {"type": "string"}},
    "required": ["statement"],
}


_STEM_PREFIX = 4  # a verb takes another ending with its new subject: the terms are compared by their start


COMPANY_SUBJECT_PROMPT = """A statement about a company lacks its subject. Rewrite it so that it starts with \
"{company}" or "{company}'s". Keep every other word, name and number as written, in the statement's language.

Statement: The parking permits renew every January.
{{"statement": "{company}'s parking permits renew every January."}}
Statement: Invoices are paid within 45 days.
{{"statement": "{company} pays invoices within 45 days."}}"""


def restate(llm: LLM, fact: MemoryFact, lang: str = "en") -> MemoryFact:
    """The fact's statement rewritten in the third person by the model, for one that kept the user's
    "I" or "we" (the 0.5B copies "We deploy every release with Terraform." as it is); see `checked`."""
    refused = FirstPerson("it is not a third-person statement")
    return _rewritten(llm, fact, lang, RESTATE_PROMPT, "Sentence", refused)


def with_company_subject(llm: LLM, fact: MemoryFact, lang: str = "en") -> MemoryFact:
    """The statement of a COMPANY fact that lacks its subject ("The fiscal year ends on 31 March."),
    rewritten by the model to start with the company; see `checked`."""
    refused = NotAbout("it is not about you or your company")
    return _rewritten(llm, fact, lang, COMPANY_SUBJECT_PROMPT, "Statement", refused)


def _rewritten(llm: LLM, fact: MemoryFact, lang: str, template: str, label: str, refused: Rejected) -> MemoryFact:
    """The statement as the model rewrites it under `template`, which must keep every term but the
    pronouns and subjects; `refused`, with why, when the rewrite fails or loses a term."""
    lang = statement_language(lang)
    user, company = STATEMENT_SUBJECTS[lang]
    prompt = template.format(user=user, company=company, company_lower=company[0].lower() + company[1:])
    try:
        statement = _one_statement(llm, prompt, f"{label}: {fact.statement}")
    except Rejected as exc:
        raise type(refused)(f"{refused} (rewriting it failed: {exc})") from exc
    if not statement:
        raise refused
    pronouns = set(tokenize(" ".join((FIRST_PERSON[lang], FIRST_PERSON["en"], FIRST_PERSON_PLURAL["en"])), lang))
    kept = {term[:_STEM_PREFIX] for term in tokenize(statement, lang)}
    terms = set(tokenize(fact.statement, lang)) - pronouns - SUBJECT_TERMS
    lost = {term for term in terms if term[:_STEM_PREFIX] not in kept}  # "schließen" → "schließt" is kept
    if lost:  # the 0.5B restated "Every Thursday I run the stock count." as "The user runs the stock count."
        raise type(refused)(f"{refused} (restated, it lost: {', '.join(sorted(lost))})")
    return MemoryFact(target=fact.target, statement=statement)


STANDING_WISH_PROMPT = """A user's message may say how they want to be answered from now on: format, length, \
order, language, units, tone. Write that lasting wish as one statement in the third person starting with \
"{user}", in the message's language, keeping every detail. A request about the current answer only, or no \
wish at all, gives an empty statement.

Message: From now on, skip the greeting and start with the figure.
{{"statement": "{user} wants answers to skip the greeting and start with the figure."}}
Message: can you make that one shorter?
{{"statement": ""}}"""


def standing_wish(llm: LLM, message: str, lang: str = "en") -> list[MemoryFact]:
    """The standing wish about answers that `message` states, as a USER line (none when the model finds
    none), for a message `extract` found nothing in; see `checked` before writing it."""
    user, _ = STATEMENT_SUBJECTS[statement_language(lang)]
    statement = _one_statement(llm, STANDING_WISH_PROMPT.format(user=user), f"Message: {message}")
    return [MemoryFact(target="USER", statement=statement)] if statement else []


def _one_statement(llm: LLM, prompt: str, text: str) -> str:
    """The statement the model writes for `text` under `prompt` ("" for none). Raises Rejected."""
    messages = [ChatMessage(role="system", content=prompt), ChatMessage(role="user", content=text)]
    try:
        reply = json.loads(llm.complete_json(messages, STATEMENT_SCHEMA, max_tokens=80))
    except (LLMError, ValueError) as exc:
        raise Rejected(f"the memory model failed ({exc})") from exc
    statement = reply.get("statement") if isinstance(reply, dict) else None
    return statement.strip() if isinstance(statement, str) else ""


RELATION_PROMPT = """Two lines of a memory file about a user or their company. Say whether the NEW line \
repeats the OLD one ("same"), changes it so that the OLD line is no longer true ("replaces"), or states \
another fact that stands beside it ("separate").

OLD: The user works in the Bergen office.
NEW: The user moved to the Trondheim office.
{"relation": "replaces"}
OLD: The company holds calls on Zoom.
NEW: The company uses Zoom for its calls.
{"relation": "same"}
OLD: The user's name is Ana.
NEW: The user works in sales.
{"relation": "separate"}
OLD: The company pays suppliers within 30 days.
NEW: The company pays suppliers within 45 days.
{"relation": "replaces"}
OLD: The user prefers short answers.
NEW: The user wants brief replies.
{"relation": "same"}
OLD: The company has 200 employees.
NEW: The company has a site in Graz.
{"relation": "separate"}
OLD: The company keeps its files on Dropbox.
NEW: The company moved its files from Dropbox to SharePoint last month.
{"relation": "replaces"}"""

RELATION_SCHEMA: dict[str, Any] = {
    "type": "object",
    "properties": {"relation": {"enum": ["same", "replaces", "separate"]}},
    "required": ["relation"],
}


def relation(llm: LLM, old: str, new: str) -> str:
    """ "same", "replaces" or "separate": how a new line stands to a stored one on a near subject;
    "separate" when the model fails (a line added is visible and can be removed, one lost is not)."""
    messages = [
        ChatMessage(role="system", content=RELATION_PROMPT),
        ChatMessage(role="user", content=f"OLD: {old}\nNEW: {new}"),
    ]
    try:
        reply = json.loads(llm.complete_json(messages, RELATION_SCHEMA, max_tokens=16))
    except (LLMError, ValueError):
        return "separate"
    value = reply.get("relation") if isinstance(reply, dict) else None
    return value if value in ("same", "replaces") else "separate"
