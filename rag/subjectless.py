"""Requests that name no subject, only the document: "what is this?", "tell me about it", "c'est
quoi ?", "worum geht es hier?", "o que é isto?".

Such a request has nothing a passage search could match, so on the passage path it is refused; the
router's vector, which has no topic to read, puts it near chit-chat. Said with a document picked or just
uploaded, and with no earlier turn it could refer to, it can only mean that document, and the answer it
asks for is the document's overview.

The test is on closed word classes, not on phrases: every word of the request is a pronoun, a
demonstrative, an article, a preposition, an auxiliary, politeness, a verb of asking what something is,
says or means, or a word for a document as a whole; at least one of them points at something (this, it,
the file) and at least one asks (what, explain, tell). "What is this clause?" names a part, "what can you
do?" points at nothing, "that's all" asks nothing: none of them is taken. Measured on the frozen
eval/datasets/routing/subjectless.jsonl (`bench/subjectless.py`).
"""

from __future__ import annotations

import re

_WORD = re.compile(r"[^\W\d_]+")

# Words that point at what is in front of the user: pronouns and demonstratives, and the words for a
# document as a whole, in the app's languages (en, fr, de, es, pt).
_POINTING = frozenset(
    """this that it these those here inside document documents doc docs file files pdf pdfs text attachment
    upload thing
    ça ca c ce cet cette ceci cela il ici dedans fichier fichiers texte pièce jointe sa
    das dies diese dieser dieses diesem diesen es hier da drin darin dokument dokumente datei dateien anhang
    esto eso este esta ese esa aquí aqui ello se dentro documento documentos archivo archivos texto adjunto
    isto isso aquilo essa nesse neste nisto nisso arquivo arquivos ficheiro ficheiros anexo""".split()
)
# Words that ask what something is, says, means or holds, or for it to be explained or summed up.
_ASKING = frozenset(
    """what whats wat explain describe tell summarise summarize sum gist rundown tl dr brief walk say says mean
    means about contain contains content contents understand overview summary
    quoi koi qu que quel quelle explique expliquez expliquer décris décrivez décrire résume résumez résumer dis
    dites dit dire disent parle parlent traite traitent agit signifie veut sujet contenu
    was worum wovon worüber erklär erkläre erklären erklärst beschreib beschreibe beschreiben zusammen fasse
    fass sagen sagt steht bedeutet handelt geht gehts beinhaltet enthält inhalt
    qué ke trata tratan dice decir dime explica explícame explicame explique describe descríbeme
    describirme resume resúmeme resúmelo resumen significa contiene contenido
    oq quê fala diz dizer explica explique descreve descreva resuma resumo significa contém conteúdo""".split()
)
# The rest of a request that names nothing: auxiliaries, articles, prepositions, politeness, the
# asker's pronouns, and the letters an apostrophe leaves ("what's", "c'est", "qu'est-ce").
_WRAPPING = frozenset(
    """is are was were be does do did can could would will you u me us i we my am please pls plz thanks
    the a an of on in to for at with all just quickly briefly quick short so ok okay hey hi again exactly
    really actually anyway kind sort type look looking see go over through up give get whole help read and
    not sure uploaded attached sent nutshell
    s t m ll re d l n j
    est sont qu y a à au un une le la les de du des sur propos moi nous me peux pouvez peut pourriez
    pourrais tu vous plaît plait svp stp merci en bref rapidement donc alors contient
    ist sind um mir uns bitte kannst du können könnten sie mal kurz den die der dem ein eine einen für über
    in denn eigentlich genau so
    es son de del el la los las un una unos sobre acerca me nos por favor puedes puede podrías podría hay
    en breve rápido rapido
    é são do da dos das o os um uma me mim nos pra para pode podes você voce tem há em quer breve
    rapidamente""".split()
)


def names_no_subject(text: str) -> bool:
    """Every word is a closed-class word above, one of them points and one of them asks."""
    words = [word.lower() for word in _WORD.findall(text)]
    if not words or len(words) > 16:
        return False
    known = _POINTING | _ASKING | _WRAPPING
    return (
        all(word in known for word in words)
        and any(word in _POINTING for word in words)
        and any(word in _ASKING for word in words)
    )
