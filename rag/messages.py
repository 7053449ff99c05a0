"""What the assistant says itself (refusals, notices), in the asker's language.

Keyed by ISO 639-1 code (core/language.py detects it); a language without an entry, or a key
without a translation, falls back to English. The English texts are the ones the rest of the code
and the tests have always used (REFUSAL_TEXT, INJECTION_MESSAGE, "The documents do not say").
"""

from __future__ import annotations

from core.schemas import MemoryOutcome

ENGLISH = "en"
# The refusal in English: the prompt tells the model to reply with it word for word (rag/prompting.py).
REFUSAL_TEXT = "I don't have enough information in the uploaded documents to answer this question."

MESSAGES: dict[str, dict[str, str]] = {
    "en": {
        "noted_user": "Noted in user memory: {summary}",
        "noted_company": "Noted in company memory: {summary}",
        "noted_user_replacing": "Noted in user memory: {summary} (replaces: {replaced})",
        "noted_company_replacing": "Noted in company memory: {summary} (replaces: {replaced})",
        "not_saved": "Not saved: {reason}. Passwords, keys, tokens and card numbers are never written to memory.",
        "nothing_to_remember_because": "Nothing to remember ({reason}).",
        "nothing_to_remember": "Nothing to remember.",
        "no_documents": "No documents are uploaded yet: upload one, then ask again.",
        "no_such_document": "No uploaded document is called {selected}. The documents are: {names}.",
        "which_document": "Which document do you mean? There are {count}: {names}. Pick one or more to ask about "
        "(the document picker, or `ragchat ask --doc NAME`), or name it in your question.",
        "refusal": REFUSAL_TEXT,
        "model_failed": "The model could not answer: {error}",
        "degenerate": "The model's reply was not a usable answer (it held no text, only citation marks or "
        "repeated characters), so it is not shown. Please ask again, perhaps in other words.",
        "uncovered": "The documents do not say",
        "quote_opening": "The document says",
        "yes": "Yes",
        "no": "No",
        "sections_opening": "Its sections include",
        "too_long": "Your question is {length:,} characters long; the limit is {limit:,}. "
        "Please shorten it and ask again.",
        "injection": "I can't change or reveal my instructions, so I won't act on that request. "
        "Ask me about your documents and I'll answer from them, with sources.",
        "rate_limit": "That is more than {limit} questions in a minute. Please wait {wait} s before asking again.",
    },
    "fr": {
        "noted_user": "Noté dans la mémoire de l'utilisateur : {summary}",
        "noted_company": "Noté dans la mémoire de l'entreprise : {summary}",
        "noted_user_replacing": "Noté dans la mémoire de l'utilisateur : {summary} (remplace : {replaced})",
        "noted_company_replacing": "Noté dans la mémoire de l'entreprise : {summary} (remplace : {replaced})",
        "not_saved": "Non enregistré : {reason}. Les mots de passe, clés, jetons et numéros de carte ne sont "
        "jamais écrits dans la mémoire.",
        "nothing_to_remember_because": "Rien à retenir de ce message ({reason}).",
        "nothing_to_remember": "Rien à retenir de ce message.",
        "no_documents": "Aucun document n'est encore chargé : chargez-en un, puis reposez votre question.",
        "no_such_document": "Aucun document chargé ne s'appelle {selected}. Les documents sont : {names}.",
        "which_document": "De quel document parlez-vous ? Il y en a {count} : {names}. Choisissez-en un ou "
        "plusieurs (le sélecteur de documents, ou `ragchat ask --doc NOM`), ou nommez-le dans votre question.",
        "refusal": "Je n'ai pas assez d'informations dans les documents chargés pour répondre à cette question.",
        "model_failed": "Le modèle n'a pas pu répondre : {error}",
        "degenerate": "La réponse du modèle n'était pas utilisable (aucun texte, seulement des renvois ou des "
        "caractères répétés) : elle n'est pas affichée. Reposez la question, si possible autrement.",
        "uncovered": "Les documents ne précisent pas :",
        "quote_opening": "Le document indique",
        "yes": "Oui",
        "no": "Non",
        "sections_opening": "Ses sections comprennent",
        "too_long": "Votre question compte {length:,} caractères ; la limite est de {limit:,}. "
        "Raccourcissez-la et posez-la de nouveau.",
        "injection": "Je ne peux ni modifier ni révéler mes instructions : je ne donne pas suite à cette demande. "
        "Posez-moi une question sur vos documents et j'y répondrai à partir d'eux, sources à l'appui.",
        "rate_limit": "Plus de {limit} questions en une minute. Attendez {wait} s avant de poser la suivante.",
    },
    "de": {
        "noted_user": "Im Gedächtnis des Benutzers notiert: {summary}",
        "noted_company": "Im Gedächtnis des Unternehmens notiert: {summary}",
        "noted_user_replacing": "Im Gedächtnis des Benutzers notiert: {summary} (ersetzt: {replaced})",
        "noted_company_replacing": "Im Gedächtnis des Unternehmens notiert: {summary} (ersetzt: {replaced})",
        "not_saved": "Nicht gespeichert: {reason}. Passwörter, Schlüssel, Token und Kartennummern werden nie ins "
        "Gedächtnis geschrieben.",
        "nothing_to_remember_because": "Aus dieser Nachricht gibt es nichts zu merken ({reason}).",
        "nothing_to_remember": "Aus dieser Nachricht gibt es nichts zu merken.",
        "no_documents": "Es sind noch keine Dokumente hochgeladen: Laden Sie eines hoch und fragen Sie dann erneut.",
        "no_such_document": "Kein hochgeladenes Dokument heißt {selected}. Die Dokumente sind: {names}.",
        "which_document": "Welches Dokument meinen Sie? Es gibt {count}: {names}. Wählen Sie eines oder mehrere "
        "aus (die Dokumentauswahl oder `ragchat ask --doc NAME`), oder nennen Sie es in Ihrer Frage.",
        "refusal": "Die hochgeladenen Dokumente enthalten nicht genug Informationen, um diese Frage zu beantworten.",
        "model_failed": "Das Modell konnte nicht antworten: {error}",
        "degenerate": "Die Antwort des Modells war nicht brauchbar (kein Text, nur Quellenverweise oder "
        "wiederholte Zeichen) und wird nicht angezeigt. Bitte fragen Sie erneut, am besten anders formuliert.",
        "uncovered": "Die Dokumente sagen nichts über:",
        "quote_opening": "Im Dokument steht",
        "yes": "Ja",
        "no": "Nein",
        "sections_opening": "Zu seinen Abschnitten gehören",
        "injection": "Ich kann meine Anweisungen weder ändern noch offenlegen und gehe auf diese Bitte nicht ein. "
        "Fragen Sie mich zu Ihren Dokumenten, und ich antworte daraus, mit Quellen.",
    },
    "es": {
        "noted_user": "Anotado en la memoria del usuario: {summary}",
        "noted_company": "Anotado en la memoria de la empresa: {summary}",
        "noted_user_replacing": "Anotado en la memoria del usuario: {summary} (sustituye: {replaced})",
        "noted_company_replacing": "Anotado en la memoria de la empresa: {summary} (sustituye: {replaced})",
        "not_saved": "No se ha guardado: {reason}. Las contraseñas, claves, tokens y números de tarjeta nunca se "
        "escriben en la memoria.",
        "nothing_to_remember_because": "No hay nada que recordar de este mensaje ({reason}).",
        "nothing_to_remember": "No hay nada que recordar de este mensaje.",
        "no_documents": "Todavía no hay documentos cargados: cargue uno y vuelva a preguntar.",
        "no_such_document": "Ningún documento cargado se llama {selected}. Los documentos son: {names}.",
        "which_document": "¿A qué documento se refiere? Hay {count}: {names}. Elija uno o varios (el selector de "
        "documentos, o `ragchat ask --doc NOMBRE`), o nómbrelo en su pregunta.",
        "refusal": "No tengo suficiente información en los documentos cargados para responder a esta pregunta.",
        "model_failed": "El modelo no pudo responder: {error}",
        "degenerate": "La respuesta del modelo no era utilizable (sin texto, solo referencias o caracteres "
        "repetidos), así que no se muestra. Vuelva a preguntar, quizá con otras palabras.",
        "uncovered": "Los documentos no dicen:",
        "quote_opening": "El documento dice",
        "yes": "Sí",
        "no": "No",
        "sections_opening": "Sus secciones incluyen",
        "injection": "No puedo cambiar ni revelar mis instrucciones, así que no atenderé esa petición. "
        "Pregúnteme sobre sus documentos y le responderé a partir de ellos, con fuentes.",
    },
}


def message(lang: str, key: str, **fields: object) -> str:
    """The message `key` in `lang` (English when it has none), with `fields` filled in."""
    text = MESSAGES.get(lang, {}).get(key) or MESSAGES[ENGLISH][key]
    return text.format(**fields) if fields else text


def memory_note(outcome: MemoryOutcome, lang: str) -> str:
    """The chat's account of what a turn did to memory, in `lang`: what was noted, any secret that was
    not, else why nothing was ("Nothing to remember."). The entries stay as written; the reasons the
    memory graph gives are English."""
    parts = [
        message(
            lang,
            f"noted_{w.target.lower()}" + ("_replacing" if w.replaced else ""),
            summary=w.summary,
            replaced=w.replaced,
        )
        for w in outcome.writes
    ]
    parts += [message(lang, "not_saved", reason=s.reason) for s in outcome.skipped if s.reason.startswith("it holds")]
    if not parts and outcome.skipped:
        parts.append(message(lang, "nothing_to_remember_because", reason=outcome.skipped[0].reason))
    return "\n".join(parts) or message(lang, "nothing_to_remember")
