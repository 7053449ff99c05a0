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

import json
import re
from typing import Any

from pydantic import BaseModel, Field, ValidationError

from core.schemas import MemoryFact
from core.secrets import find_secret
from providers.llm.base import LLM, ChatMessage, LLMError

MAX_FACTS = 4

SYSTEM_PROMPT = """You keep a memory of lasting facts about the user and the user's company, taken from \
what the user writes in a chat. List every lasting fact in the message, one per item:
- USER: about the person: name, job, team, manager, office or city, routines, standing wishes about \
answers, health or diet facts they ask you to remember.
- COMPANY: about the organisation ("we", "our", "the company", or a company's name): its name, size, \
sites, tools, policies, customers, calendar.
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


class FactList(BaseModel):
    facts: list[MemoryFact] = Field(max_length=MAX_FACTS)


class Rejected(Exception):
    """Nothing from the model's reply is written; the message says why."""


class FirstPerson(Rejected):
    """The statement kept the user's own first-person words."""


def extract(llm: LLM, message: str) -> list[MemoryFact]:
    """The model's facts for `message`, as it wrote them (see `checked` before writing one)."""
    messages = [
        ChatMessage(role="system", content=SYSTEM_PROMPT),
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
# The statement's own subject words, which the message does not say ("The user", "L'utilisateur").
_SUBJECTS = {"the", "user", "user's", "company", "company's", "l'utilisateur", "l'entreprise", "der", "das"}
_SUBJECTS |= {"nutzer", "unternehmen", "nutzers", "unternehmens"}
# First-person words left in a statement mean it was copied, not restated in the third person.
_FIRST_PERSON = re.compile(
    r"\b(i|i'm|i've|i'd|i'll|me|my|mine|myself|we|we're|we've|we'll|our|ours|ourselves|"
    r"je|j'|moi|mon|ma|mes|nous|notre|nos|ich|mich|mir|mein|meine|meinen|meinem|meiner|wir|uns|unser|unsere)\b"
)


def checked(fact: MemoryFact, message: str) -> MemoryFact:
    """The fact, tidied into one line, or Rejected with the reason.

    Faithfulness: every number and every capitalised word (a name, a place, a product) of the
    statement must be in the message; the target follows the statement's own subject when it names
    one ("The user …" is a USER line even if the model filed it under COMPANY).
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
    invented += [name for name in names if name not in _SUBJECTS and name not in said]
    if invented:
        raise Rejected(f"it names what the message did not say ({', '.join(invented)})")
    if _FIRST_PERSON.search(statement.lower()):
        raise FirstPerson("it is not a third-person statement")
    if not _about_user_or_company(statement, fact.target, message):
        raise Rejected("it is not about you or your company")
    if secret := find_secret(statement):
        raise Rejected(f"it holds {secret}")
    target = fact.target
    if statement.lower().startswith(_USER_SUBJECTS):
        target = "USER"
    elif statement.lower().startswith(_COMPANY_SUBJECTS):
        target = "COMPANY"
    return MemoryFact(target=target, statement=statement)


_USER_SUBJECTS = ("the user", "user ", "user's", "l'utilisateur", "der nutzer", "des nutzers")
_COMPANY_SUBJECTS = ("the company", "company ", "company's", "l'entreprise", "das unternehmen", "des unternehmens")


def _about_user_or_company(statement: str, target: str, message: str) -> bool:
    """The statement's subject is the user, the company, or, for a COMPANY line, a name the message
    gave (the company's): the form the prompt asks for. "The weather is nice today." is neither."""
    if statement.lower().startswith(_USER_SUBJECTS + _COMPANY_SUBJECTS):
        return True
    first = _WORD.match(statement)
    name = first.group() if first else ""
    return target == "COMPANY" and name[:1].isupper() and name.lower() != "the" and name in message


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
{"relation": "separate"}"""

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
