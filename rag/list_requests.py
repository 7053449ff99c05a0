"""Which requests ask for a list of every item of one kind (a date, a figure, a name), which
rag/extraction.py answers from the page texts instead of the model.

A request is a list request of a kind when it names that kind of item and asks for many of them, in
one of three ways:
- a word that asks for all of them: "every", "all", "list", "mentioned" ("list every date", "who is
  mentioned?"), with the kind's word in any number;
- the kind's word in the plural, asked for by a question word or a verb that requests things ("which
  thresholds does the policy set?", "give me the fees", "any deadlines in chapter 5?"), or standing
  alone as the request ("torque values in the assembly manual?"); some words are a list by meaning
  ("timeline", "chronology");
- "when" asked of several things ("when were the various versions released?").
It is not one when it names two kinds ("every deadline and every fee": the model writes it), or asks
for one value: a count or a total ("how many", "the total of"), an extreme ("the first", "the
highest"), or a yes/no question ("are all the dates consistent?"). The kinds' words are a closed list:
"who were the speakers?" names no word of it and goes to the model. The rule was tuned on the frozen
dev set eval/datasets/routing/list_kinds.jsonl (`bench/list_requests.py` prints its precision and
recall, and how many of SQuAD's one-fact questions it takes).
"""

from __future__ import annotations

import re

from rag.extraction import ListKind

# A word that asks for all of them ("list" as a verb, not "the donors list").
_EVERY = re.compile(
    r"\b(every|everyone|all|each|extract|pull out|jot down|enumerate|name every|mentioned|"
    r"^\s*list|(?<=please )list|list(?=\s+(?:the|all|every|each|any|me|us|out|of|them)\b)|"
    r"referenced|referred to|cited|shows? up|appears?|cités?|citées?|mentionn\w*|genannt\w*|erwähnt\w*|"
    r"mencionad\w*|aparecen|tous|toutes|chaque|liste|relève|releve|alle|jede[nsr]?|todos|todas|cada|lista)\b",
    re.IGNORECASE,
)
# Each kind's words, in either number.
_KIND_WORDS: dict[ListKind, str] = {
    "dates": r"dates?|deadlines?|due dates?|years?|milestones?|timelines?|chronolog(?:y|ies|ie)|échéances?|echeances?|"
    r"datum|daten|fristen|termine|fechas?|plazos?|años",
    "figures": r"figures?|numbers?|numeric|numerical|amounts?|percentages?|sums?|prices?|costs?|values?|specs?|"
    r"statistics?|kpis?|metrics?|fees?|charges?|rates?|limits?|thresholds?|sizes?|dimensions?|measurements?|"
    r"temperatures?|pressures?|dosages?|doses?|voltages?|capacit(?:y|ies)|weights?|tolerances?|timings?|"
    r"durations?|timeouts?|chiffres?|montants?|pourcentages?|seuils?|tarifs?|prix|zahlen|beträge|"
    r"betraege|grenzwerte?|werte|preise|cifras|importes?|números|numeros|porcentajes|precios|tarifas",
    "names": r"names?|people|persons?|parties|compan(?:y|ies)|organi[sz]ations?|institut(?:e|es|ions)|"
    r"places?|locations?|cities|countries|attendees|participants|members|authors|contributors|vendors|"
    r"suppliers|competitors|sponsors|agencies|regulators|universities|hospitals|banks|firms|brands?|products?|"
    r"packages|libraries|tools|frameworks|doctors|judges|lawyers|subcontractors|partners|"
    r"personnes?|organismes?|lieux|entreprises|sociétés|namen|personen|firmen|orte|"
    r"nombres propios|personas|empresas|lugares|instituciones",
}
# Their plurals, and words that are a list by meaning ("timeline"): alone they say that several are wanted.
_PLURAL_ONLY: dict[ListKind, str] = {
    "dates": r"dates|deadlines|years|milestones|timelines?|chronolog(?:y|ies)|chronologie|schedule of \w+|"
    r"échéances|fristen|termine|fechas|plazos|años",
    "figures": r"figures|numbers|amounts|percentages|prices|costs|values|specs|statistics|kpis|metrics|fees|"
    r"charges|rates|limits|thresholds|sizes|dimensions|measurements|temperatures|pressures|dosages|doses|"
    r"voltages|capacities|weights|tolerances|timings|durations|timeouts|p-values|chiffres|montants|"
    r"pourcentages|seuils|tarifs|zahlen|beträge|grenzwerte|werte|preise|cifras|importes|números|porcentajes|"
    r"precios|tarifas",
    "names": r"names|people|persons|parties|companies|organi[sz]ations|institutes|institutions|places|"
    r"locations|cities|countries|attendees|participants|members|authors|contributors|vendors|suppliers|"
    r"competitors|sponsors|agencies|regulators|universities|hospitals|banks|firms|brands|products|packages|"
    r"libraries|tools|frameworks|doctors|judges|lawyers|subcontractors|partners|personnes|organismes|lieux|"
    r"entreprises|sociétés|personen|firmen|orte|personas|empresas|lugares|instituciones",
}
_KINDS = {kind: re.compile(rf"\b(?:{words})\b", re.IGNORECASE) for kind, words in _KIND_WORDS.items()}
# An all-word right before the kind's word: "list every number in the size limitations section".
_EVERY_KIND = {
    kind: re.compile(
        rf"\b(?:every|all|each|list|extract|enumerate|tous|toutes|alle|todos|todas)\s+(?:(?:the|of the|les|die|los|las)"
        rf"\s+)?(?:[\w'’-]+\s+)?(?:{words})\b",
        re.IGNORECASE,
    )
    for kind, words in _KIND_WORDS.items()
}
# Two kinds' words joined: "the dates and the prices", "timeline plus the budget figures".
_ANY_KIND = "|".join(_KIND_WORDS.values())
_COORDINATED = re.compile(
    rf"\b({_ANY_KIND})\b\s*(?:,|and|plus|&|et|und|y)\s+(?:(?:the|all|les|die|los|las)\s+)?(?:[\w'’-]+\s+)?"
    rf"({_ANY_KIND})\b",
    re.IGNORECASE,
)


def _two_kinds_joined(request: str) -> bool:
    """Words of two kinds joined ("the dates and the prices"), not two words of one ("dates and deadlines")."""
    for match in _COORDINATED.finditer(request):
        kinds = [{kind for kind, words in _KINDS.items() if words.fullmatch(word)} for word in match.groups()]
        if kinds[0] and kinds[1] and not kinds[0] & kinds[1]:
            return True
    return False


# A request that opens with "who" asks for people ("who is mentioned?", "qui est cité ?").
_WHO = re.compile(r"^\s*(?:who|whom|qui|wer)\b", re.IGNORECASE)
# What asks for things, right before the plural (a word or two between): a question word, a verb
# that requests, "any" ("which deadlines", "what are the penalty amounts", "give me the fees").
_ASKING = (
    r"which|what|any|give|show|find|tell|get|pull|name|note|dame|donne\w*|gib|nenne|zeige|"
    r"quels?|quelles?|welche[nmrs]?|qué|cuáles|cuales"
)
_LINKS = r"me|us|are|were|is|the|all|any|of|les|des|moi|die|der|mir|los|las|son|sont"
# Not between the question word and the plural: "what did various countries request?" asks what they
# requested, not for the countries.
_AUXILIARIES = r"did|does|do|can|could|would|will|should|has|have|had|was|must|may"
_ASKED = {
    kind: re.compile(
        rf"\b(?:(?:{_ASKING})(?:\s+(?:{_LINKS}))*(?:\s+(?!(?:{_AUXILIARIES})\b)[\w'’-]+){{0,2}}?|"
        rf"(?:who|whom)(?:\s+(?:{_LINKS}))+)\s+"
        rf"(?:{words})\b",
        re.IGNORECASE,
    )
    for kind, words in _PLURAL_ONLY.items()
}
# "When" asked of several things: "when were the various …".
_WHEN_SEVERAL = re.compile(
    r"\b(?:when|wann|quand|cuándo|cuando)\s+(?:were|are|did|do|have|wurden|sind|ont|fueron|se publicaron)\s+"
    r"(?:(?:the|die|les|los|las)\s+)?(?:various|different|successive|respective|several|verschiedenen|"
    r"différent\w*|successi\w*|vari[oa]s|distint[oa]s)\b",
    re.IGNORECASE,
)
# One value wanted: a count, a total, an extreme of the kind, or a yes/no question; or a set of a given
# size ("the four packages", "which two companies", "one date"), which the model picks out better than a
# list of all.
_ONE_VALUE = re.compile(
    r"\b(how many|how much(?! does each)|total|sum of|number of|the most|combien|wie viele|wieviel\w*|"
    r"cuánt[oa]s?)\b|"
    r"\b(?:two|three|four|five|six|seven|eight|nine|ten|\d+)\s+(?:[\w'’-]+\s+)?"
    rf"(?:{'|'.join(_PLURAL_ONLY.values())})\b|"
    rf"\b(?:one|a single|any one)\s+(?:[\w'’-]+\s+)?(?:{'|'.join(_KIND_WORDS.values())})\b|"
    r"\b(first|last|latest|earliest|highest|lowest|maximum|minimum|largest|smallest|biggest)\s+(?:\w+\s+)?"
    rf"(?:{'|'.join(_KIND_WORDS.values())})\b",
    re.IGNORECASE,
)
# Lists of another kind of thing: "what limits or caveats does it mention?" asks for restrictions.
_OTHER_LISTS = re.compile(
    r"\b(caveats?|risks?|assumptions?|limitations?|steps?|action items?|to-?dos?|tasks?|requirements?|"
    r"deliverables?|recommendations?|responsibilit(?:y|ies)|obligations?|topics?|key points?|"
    r"risques?|hypothèses?|limites|étapes?|risiken|annahmen|einschränkungen|schritte|riesgos|supuestos|pasos)\b",
    re.IGNORECASE,
)
# A yes/no question; "can you …" and "could you …" are requests.
_YES_NO = re.compile(
    r"^\s*(are|is|do|does|did|can(?! (?:you|u)\b)|could(?! (?:you|u)\b)|was|were|has|have|should|will|est-ce|"
    r"sind|ist|gibt es|hay)\b",
    re.IGNORECASE,
)
# The request is the plural itself, with a word or two before it: "torque values in the manual?".
_OPENING = {
    kind: re.compile(rf"^\s*(?:(?:the|any|all|les|die|los|las)\s+)?(?:[\w'’-]+\s+){{0,2}}(?:{words})\b", re.IGNORECASE)
    for kind, words in _PLURAL_ONLY.items()
}


def list_kind(request: str) -> ListKind | None:
    """The kind of item a request asks every one of ("list every date", "which thresholds does it set?",
    "when were the various versions released?"), or None (see the module)."""
    if _YES_NO.search(request) or _ONE_VALUE.search(request):
        return None
    if _two_kinds_joined(request):
        return None  # both are wanted ("every deadline and every fee"): the model writes it
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
    if _EVERY.search(request) or asked:
        return kind
    return kind if kind == "dates" and _WHEN_SEVERAL.search(request) else None
