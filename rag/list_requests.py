"""Which requests ask for a list of every item of one kind (a date, a figure, a name), which
rag/extraction.py answers from the page texts instead of the model.

A request is a list request of a kind when it names that kind of item and asks for many of them, in
one of four ways:
- a word that asks for all of them right before the kind's word: "list every date", "all the fees";
- a word that asks for all of them elsewhere, with the kind's plural: "which names are mentioned?",
  or a request that opens with "who": "who is mentioned?";
- the plural asked for by a question word or a verb that opens the request ("which thresholds does
  the policy set?", "give me the fees", "any deadlines in chapter 5?"), or standing alone as the request
  ("torque values in the assembly manual?"); some words are a list by meaning ("timeline", "chronology");
- "when" asked of several things: "when were the various versions released?".
It is not one when it names two kinds ("every deadline and every fee": the model writes it), asks for
one value: a count or a total ("how many", "the total of"), an extreme ("the highest fee"), a set of a
given size ("the four packages", "one date"), or asks a yes/no question; nor when it asks for a list of
other things ("limits or caveats", "the steps") or for a whole-document task ("compare the vendors",
"summarise what the participants said"). The kinds' words are a closed list: "who were the speakers?"
names none of them and goes to the model. The rule was tuned on the frozen dev set
eval/datasets/routing/list_kinds.jsonl (`bench/list_requests.py` prints its precision and recall,
those of the routing sets it was not tuned on, and how many of SQuAD's one-fact questions it takes).
"""

from __future__ import annotations

import re

from rag.extraction import ListKind


def _words(text: str) -> str:
    return "|".join(text.split())


# Each kind's words in the plural; the singulars are made from them ("companies" → "company").
_PLURALS: dict[ListKind, str] = {
    "dates": "dates deadlines years milestones échéances fristen termine fechas plazos años",
    "figures": "figures numbers amounts percentages prices costs values specs statistics kpis metrics fees "
    "charges rates limits thresholds sizes dimensions measurements temperatures pressures dosages doses "
    "voltages capacities weights tolerances timings durations timeouts p-values chiffres montants "
    "pourcentages seuils tarifs zahlen beträge grenzwerte werte preise cifras importes números porcentajes "
    "precios tarifas",
    "names": "names people persons parties companies organisations organizations institutes institutions "
    "places locations cities countries attendees participants members authors contributors vendors "
    "suppliers competitors sponsors agencies regulators universities hospitals banks firms brands products "
    "packages libraries tools frameworks doctors judges lawyers subcontractors partners personnes organismes "
    "lieux entreprises sociétés personen firmen orte personas empresas lugares instituciones",
}
# Words that stand for several by meaning ("timeline", "numerical results"), and other words of a kind.
_LISTS: dict[ListKind, str] = {
    "dates": "timeline timelines chronology chronologies chronologie",
    "figures": "numeric numerical",
    "names": "",
}
_OTHERS: dict[ListKind, str] = {"dates": "datum daten", "figures": "prix", "names": "namen"}


def _singular(word: str) -> str | None:
    if word.endswith("ies"):
        return word[:-3] + "y"
    return word[:-1] if word.endswith("s") else None


def _all_words(kind: ListKind) -> str:
    plurals = _PLURALS[kind].split()
    singulars = [s for s in map(_singular, plurals) if s]
    return "|".join([*plurals, *singulars, *_LISTS[kind].split(), *_OTHERS[kind].split()])


_PLURAL = {kind: "|".join([*_PLURALS[kind].split(), *_LISTS[kind].split()]) for kind in _PLURALS}
_ANY = {kind: _all_words(kind) for kind in _PLURALS}
_KINDS = {kind: re.compile(rf"\b(?:{words})\b", re.IGNORECASE) for kind, words in _ANY.items()}
_SEVERAL = {kind: re.compile(rf"\b(?:{words})\b", re.IGNORECASE) for kind, words in _PLURAL.items()}
_EVERY_WORDS = _words("every all each tous toutes chaque alle jede jeden jeder jedes todos todas cada")
# A word that asks for all of them ("list" as a verb: not "the donors list", "the price list of").
_EVERY = re.compile(
    rf"\b(?:{_EVERY_WORDS}|everyone|extract|pull out|jot down|enumerate|mentioned|referenced|referred to|cited|"
    r"shows? up|appears?|cités?|citées?|mentionn\w*|genannt\w*|erwähnt\w*|mencionad\w*|aparecen|liste|relève|"
    r"releve|lista)\b|^\W*list\b|\blist(?=\s+(?:the|all|every|each|any|me|us|out|them)\b)",
    re.IGNORECASE,
)
# An all-word right before the kind's word: "list every number in the size limitations section"; "all",
# "list" and their like before a plural ("all member states" is no request for names); "each year" is
# how often.
_TIMES = r"(?:year|month|week|day|quarter)s?\b"
_EVERY_KIND = {
    kind: re.compile(
        rf"\b(?:(?:every|each|chaque|cada|jede[nrs]?)\s+(?!{_TIMES})(?:[\w'’-]+\s+)?(?:{_ANY[kind]})|"
        rf"(?:all|tous|toutes|alle|todos|todas|list|extract|enumerate)\s+(?:(?:the|of the|les|die|los|las)\s+)?"
        rf"(?:[\w'’-]+\s+)?(?:{_PLURAL[kind]}))\b(?!\s+(?:year|month|week|day|quarter)\b)",
        re.IGNORECASE,
    )
    for kind in _PLURALS
}
_KIND_ALTERNATIVES = "|".join(_ANY.values())
# Two kinds' words joined: "the dates and the prices", "timeline, and the budget figures".
_COORDINATED = re.compile(
    rf"\b({_KIND_ALTERNATIVES})\b\s*,?\s*(?:and|plus|&|et|und|y)\s+(?:[\w'’-]+\s+){{0,2}}"
    rf"({_KIND_ALTERNATIVES})\b",
    re.IGNORECASE,
)
# A request that opens with "who" asks for people ("who is mentioned?", "qui est cité ?").
_WHO = re.compile(r"^\W*(?:who|whom|qui|wer)\b", re.IGNORECASE)
# Where the request or a clause of it opens: politeness, and a preposition before a question word
# ("in which …"; "In the part about scripts, which packages are named?").
_START = (
    r"(?:^|[,;:])\W*(?:(?:please|pls|can you|could you|can u|and|so|now|ok|okay)\s+)*"
    r"(?:(?:in|from|on|at|for|by|to|en|de|dans|im|aus|von)\s+)?"
)
# What asks for things at the opening, right before the plural (a word or two between): a question word,
# a verb that requests, "any" ("which deadlines", "what are the penalty amounts", "give me the fees").
_ASKING = _words(
    "which what any give show find tell get pull name note dame donne donnez donne-moi gib nenne zeige quel quels "
    "quelle quelles welche welchen welcher welches qué cuáles cuales"
)
_LINKS = _words("me us are were is the all any of les des moi die der mir los las son sont")
# Not between the question word and the plural: "what did various countries request?" asks what they
# requested, not for the countries. A plural before an object is a verb: "what limits the battery's life?".
_AUXILIARIES = _words("did does do can could would will should has have had was must may")
_ASKED = {
    kind: re.compile(
        rf"{_START}(?:(?:{_ASKING})(?:\s+(?:{_LINKS}))*(?:\s+(?!(?:{_AUXILIARIES})\b)[\w'’-]+){{0,2}}?|"
        rf"(?:who|whom)(?:\s+(?:{_LINKS}))+)\s+(?:{words})\b(?!\s+(?:the|a|an|its|their|his|her)\b)",
        re.IGNORECASE,
    )
    for kind, words in _PLURAL.items()
}
# The request is the plural itself, a word or two before it and no verb: "torque values in the manual?".
# A word of a task on the whole document ("compare", "summarise") or a question word opens no such phrase.
_NOT_MODIFIERS = _words(
    f"{_AUXILIARIES.replace('|', ' ')} what which who whom how when why where is are were compare summarise "
    "summarize describe explain discuss analyse analyze review evaluate assess critique translate rewrite "
    "outline interpret contrast define"
)
_OPENING = {
    kind: re.compile(
        rf"^\W*(?:(?:the|any|all|les|die|los|las)\s+)?(?:(?!(?:{_NOT_MODIFIERS})\b)[\w'’-]+\s+){{0,2}}(?:{words})\b"
        r"(?=\s*(?:$|[?.!,:;]|(?:in|of|from|on|per|at|for|and|under|listed|mentioned|given|stated|reported|"
        r"recorded|set|used|named|cited|quoted|included|dans|du|des|de|im|in der|aus|en|del)\b))",
        re.IGNORECASE,
    )
    for kind, words in _PLURAL.items()
}
# "When" asked of several things: "when were the various …".
_WHEN_SEVERAL = re.compile(
    r"\b(?:when|wann|quand|cuándo|cuando)\s+(?:were|are|did|do|have|wurden|sind|ont|fueron)\s+"
    r"(?:(?:the|die|les|los|las)\s+)?(?:various|different|successive|respective|several|verschiedenen|"
    r"différent\w*|successi\w*|vari[oa]s|distint[oa]s)\b",
    re.IGNORECASE,
)
_PLURAL_ALTERNATIVES = "|".join(_PLURAL.values())
# One value wanted: a count, a total, an extreme of the kind (not "last year", a time), or a set of a
# given size ("the four packages", "which two companies", "one date"), which the model picks out better
# than a list of all.
_ONE_VALUE = re.compile(
    r"\b(?:how many|how much|total|sum of|number of|the most|combien|wie viele|wieviel\w*|cuánt[oa]s?)\b|"
    rf"\b(?:two|three|four|five|six|seven|eight|nine|ten|\d{{1,2}})\s+(?:[\w'’-]+\s+)?(?:{_PLURAL_ALTERNATIVES})\b|"
    rf"\b(?:one|a single|any one)\s+(?:[\w'’-]+\s+)?(?:{_KIND_ALTERNATIVES})\b|"
    r"\b(?:first|last|latest|earliest|highest|lowest|maximum|minimum|largest|smallest|biggest)\s+"
    rf"(?!(?:year|month|week|day|quarter)\b)(?:\w+\s+)?(?:{_KIND_ALTERNATIVES})\b",
    re.IGNORECASE,
)
# Lists of another kind of thing: "what limits or caveats does it mention?" asks for restrictions.
_OTHER_LISTS = re.compile(
    r"\b(?:caveats?|risks?|assumptions?|limitations?|steps?|action items?|to-dos?|tasks?|requirements?|"
    r"deliverables?|recommendations?|responsibilit(?:y|ies)|obligations?|topics?|key points?|follow-ups?|"
    r"risques?|hypothèses?|limites|étapes?|risiken|annahmen|einschränkungen|schritte|riesgos|supuestos|pasos)\b",
    re.IGNORECASE,
)
# A yes/no question; "can you …" and "could you …" are requests.
_YES_NO = re.compile(
    r"^\W*(?:are|is|do|does|did|can(?! (?:you|u)\b)|could(?! (?:you|u)\b)|was|were|has|have|should|will|"
    r"est-ce|sind|ist|gibt es|hay|son|es)\b",
    re.IGNORECASE,
)


def list_kind(request: str) -> ListKind | None:
    """The kind of item a request asks every one of ("list every date", "which thresholds does it set?",
    "when were the various versions released?"), or None (see the module)."""
    if _YES_NO.search(request) or _ONE_VALUE.search(request) or _two_kinds_joined(request):
        return None
    plainly = [kind for kind, words in _EVERY_KIND.items() if words.search(request)]
    if len(plainly) == 1:
        return plainly[0]
    if _OTHER_LISTS.search(request):
        return None
    named = [
        kind for kind, words in _KINDS.items() if words.search(request) or (kind == "names" and _WHO.match(request))
    ]
    asked = [kind for kind in named if _ASKED[kind].search(request) or _OPENING[kind].match(request)]
    if not named:
        return "dates" if _WHEN_SEVERAL.search(request) else None
    if len(named) > 1:
        # Two kinds' words: the one asked for, when only one is ("what size limits does the section on
        # packages give?").
        return asked[0] if len(asked) == 1 else None
    kind = named[0]
    several = _SEVERAL[kind].search(request) or _WHO.match(request)
    if asked or (_EVERY.search(request) and several):
        return kind
    return kind if kind == "dates" and _WHEN_SEVERAL.search(request) else None


def _two_kinds_joined(request: str) -> bool:
    """Words of two kinds joined ("the dates and the prices"), not two words of one ("dates and deadlines")."""
    for match in _COORDINATED.finditer(request):
        kinds = [{kind for kind, words in _KINDS.items() if words.fullmatch(word)} for word in match.groups()]
        if kinds[0] and kinds[1] and not kinds[0] & kinds[1]:
            return True
    return False
