"""An answer that does not state the answer phrase the model first copied from the evidence is
replaced by a quotation of the evidence that states it, cited; the model's wording is kept apart."""

from __future__ import annotations

import math
from collections.abc import Iterator
from pathlib import Path

from core.schemas import Answer
from core.settings import get_settings
from providers.llm.base import ChatMessage, QueueListener, Sampling, Token
from rag.anchoring import anchor
from rag.pipeline import AskOptions
from rag.quotes import holds as states
from rag.quotes import quotation
from tests.pipeline_parts import build_pipeline
from tests.unit.test_citations import _hit
from tests.unit.test_grounded_markers import ConstrainedLLM, TwoPassages, ask

NORSE = [
    _hit(1, "The Normans had a great impact on Europe. Their leader Rollo agreed to swear fealty to King Charles III."),
    _hit(2, "Rollo's descendants replaced the Norse religion with Catholicism."),
]


def test_states_reads_the_phrase_as_words_in_a_row() -> None:
    assert states("The Norse leader was Rollo [1].", "rollo")
    assert states("It took 10,000 bytes.", "10,000 bytes")
    assert states("The U.S. registry lists 73 airplanes.", "U.S. registry")
    assert not states("The Normans had a great impact [1].", "Rollo")
    assert not states("Rollover happens often.", "Rollo")  # a word, not a prefix
    assert states("anything", "  ")  # no words: nothing to state


def test_the_quoted_sentence_shares_most_terms_with_the_question() -> None:
    number, sentence = quotation("Rollo", "Who was the leader who swore fealty?", NORSE) or (0, "")
    assert number == 1 and sentence.startswith("Their leader Rollo")
    # On a tie, the earlier excerpt.
    assert quotation("Rollo", "Rollo?", NORSE) == (1, NORSE[0].chunk.text.split(". ", 1)[1])
    assert quotation("Duncan", "Who was the hostage?", NORSE) is None


def test_restate_replaces_only_an_answer_that_does_not_state_its_phrase() -> None:
    question = "Who was the Norse leader?"
    says = "The document says"
    assert anchor("The leader was Rollo [1].", "Rollo", question, NORSE, says) is None
    assert anchor("The Normans had a great impact on Europe [1].", None, question, NORSE, says) is None
    assert anchor("The Normans had a great impact on Europe [1].", "Duncan", question, NORSE, says) is None
    assert (
        anchor("The Normans had a great impact on Europe [1].", "Rollo", question, NORSE, says)
        == 'The document says: "Their leader Rollo agreed to swear fealty to King Charles III." [1].'
    )


def test_the_pipeline_restates_a_reply_that_does_not_state_its_phrase(tmp_path: Path) -> None:
    """TwoPassages: [1] holds "Their son Duncan was kept as a hostage at the Norman court."."""
    reply = "Phrase: Duncan\nAnswer: King Malcolm III of Scotland married Margaret. [1]\nMissing: NONE"
    answer = ask(tmp_path, reply, "Who was kept as a hostage?")
    assert not answer.refused
    assert answer.answer == 'The document says: "Their son Duncan was kept as a hostage at the Norman court." [1].'
    assert answer.restated == "King Malcolm III of Scotland married Margaret. [1]"
    assert [(c.marker, c.method) for c in answer.citations] == [(1, "marker")]
    assert "Duncan" in answer.citations[0].snippet

    kept = ask(tmp_path / "off", reply, "Who was kept as a hostage?", restate_to_phrase=False)
    assert kept.restated is None and kept.answer.startswith("King Malcolm III")


def test_a_reply_that_states_its_phrase_is_left_as_written(tmp_path: Path) -> None:
    reply = "Phrase: Duncan\nAnswer: The hostage was Duncan. [1]\nMissing: NONE"
    answer = ask(tmp_path, reply, "Who was the hostage?")
    assert answer.restated is None and answer.answer == "The hostage was Duncan [1]."


def test_a_withheld_reply_is_not_restated(tmp_path: Path) -> None:
    """The model invented its sentence (no excerpt holds it): the refusal stands, even though its
    phrase occurs in an excerpt."""
    reply = "Phrase: Duncan\nAnswer: The coronation took place in Rome in 1120. [2]\nMissing: NONE"
    answer = ask(tmp_path, reply, "Where was Duncan crowned?")
    assert answer.refused and answer.withheld and answer.restated is None


def test_a_table_row_is_quoted_as_its_named_cells() -> None:
    rows = [_hit(1, "City | Employees | Kind\nCity: Torrance | Employees: 388 | Kind: Layoff Permanent")]
    assert anchor("Toyota closed a plant [1].", "388", "How many employees in Torrance?", rows, "It says") == (
        'It says: "City: Torrance; Employees: 388; Kind: Layoff Permanent" [1].'
    )


def test_a_row_with_empty_cells_is_quoted_without_their_pipes() -> None:
    rows = [_hit(1, "Board | Address | | | Phone\nNavy Board | 720 Kennon Street | | | | 202-685-6600")]
    number, text = quotation("720 Kennon Street", "Where is the Navy board?", rows) or (0, "")
    assert (number, text) == (1, "Navy Board; 720 Kennon Street; 202-685-6600")


def test_a_quotation_is_never_spliced_from_columns_and_keeps_whole_words() -> None:
    """A three-column page read line by line: a line that opens a new sentence after one that did not
    end one belongs to another column, and a word broken at a line end is joined."""
    page = _hit(
        1,
        "This regulation is within the scope of\nThe FAA must receive comments on this\nproposed AD by "
        "September 21, 2020. Before further flight, revise the existing AD action.\nThe investigation was con-\n"
        "ducted by the NTSB.",
    )
    assert quotation("September 21, 2020", "By what date must the FAA receive comments?", [page]) == (
        1,
        "The FAA must receive comments on this proposed AD by September 21, 2020.",
    )
    assert quotation("NTSB", "Who conducted the investigation?", [page]) == (
        1,
        "The investigation was conducted by the NTSB.",
    )


class CheckingLLM(ConstrainedLLM):
    """Writes `reply`, and gives P(NONE) = `p_none` for the quotation check's one token."""

    gives_logprobs = True

    def __init__(self, reply: str, p_none: float) -> None:
        super().__init__(reply)
        self.p_none = p_none
        self.checked: list[str] = []

    def stream_tokens(
        self, messages: list[ChatMessage], sampling: Sampling, on_queued: QueueListener | None = None
    ) -> Iterator[Token]:
        if sampling.max_tokens > 1:
            yield from super().stream_tokens(messages, sampling, on_queued)
            return
        self.checked.append(messages[-1].content)
        alternatives = {"NONE": math.log(self.p_none), "Duncan": math.log(1 - self.p_none)}
        yield Token(text="NONE" if self.p_none >= 0.5 else "Duncan", alternatives=alternatives)


def ask_checked(
    tmp_path: Path, reply: str, question: str, p_none: float, **overrides: object
) -> tuple[Answer, list[str]]:
    llm = CheckingLLM(reply, p_none)
    settings = get_settings(home=tmp_path, **overrides)
    return build_pipeline(settings, TwoPassages(), lambda: llm).ask(question, AskOptions()).result(), llm.checked


def test_a_withheld_reply_is_quoted_when_set_and_the_model_finds_the_sentence_answers(tmp_path: Path) -> None:
    """The phrase's sentence is put to the model alone with the question: a low P(NONE) lets its
    quotation stand in for the refusal, a high one keeps the refusal; off, it is never read."""
    reply = "Phrase: Duncan\nAnswer: The coronation took place in Rome in 1120. [2]\nMissing: NONE"
    question = "Who was the hostage at the Norman court?"
    answer, checked = ask_checked(tmp_path, reply, question, 0.05, quote_unsupported=True)
    assert not answer.refused and answer.answer.startswith('The document says: "Their son Duncan was kept')
    assert answer.restated == "The coronation took place in Rome in 1120. [2]" and answer.withheld is None
    assert len(checked) == 1 and "Their son Duncan was kept as a hostage" in checked[0] and question in checked[0]
    assert answer.abstention is not None and answer.abstention.signals is not None
    assert abs(answer.abstention.signals["quote_p_none"] - 0.05) < 1e-6

    kept, _ = ask_checked(tmp_path / "none", reply, question, 0.6, quote_unsupported=True)
    assert kept.refused and kept.withheld and kept.restated is None
    assert kept.abstention is not None and kept.abstention.signals is not None
    assert abs(kept.abstention.signals["quote_p_none"] - 0.6) < 1e-6

    off, never = ask_checked(tmp_path / "off", reply, question, 0.05, quote_unsupported=False)
    assert off.refused and off.withheld and never == []

    # A model without log-probabilities cannot be checked: the refusal stands.
    plain = ask(tmp_path / "plain", reply, question, quote_unsupported=True)
    assert plain.refused and plain.withheld


def test_a_phrase_in_the_model_s_own_words_is_quoted_from_the_row_that_states_it() -> None:
    """A server that is not held to the form writes its phrase in its own words: the row holding its
    figures and most of its terms is quoted; one without its figure is not."""
    rows = [
        _hit(
            1,
            "Region | Q1 revenue | Q2 revenue\n"
            "Region: North | Q1 revenue: 4.2 million | Q2 revenue: 4.9 million\n"
            "Region: Westland | Q1 revenue: 7.35 million | Q2 revenue: 8.15 million",
        )
    ]
    phrase = "The Q2 revenue of the Westland region is 8.15 million"
    assert quotation(phrase, "What was the Q2 revenue of the Westland region?", rows) == (
        1,
        "Region: Westland; Q1 revenue: 7.35 million; Q2 revenue: 8.15 million",
    )
    assert quotation("The Q2 revenue of the Westland region is 9.9 million", "Q2 revenue of Westland?", rows) is None


def test_a_reply_that_states_its_phrase_but_does_not_read_as_a_sentence_is_quoted(tmp_path: Path) -> None:
    """A bare label ("Their son Duncan.") states the phrase but answers in no sentence: the evidence
    sentence that states it is shown instead; a readable one is left as written (above)."""
    reply = "Phrase: Duncan\nAnswer: Their son Duncan. [1]\nMissing: NONE"
    answer = ask(tmp_path, reply, "Who was kept as a hostage?")
    assert answer.answer == 'The document says: "Their son Duncan was kept as a hostage at the Norman court." [1].'
    assert answer.restated == "Their son Duncan. [1]"
    french = "Phrase: Duncan\nAnswer: Leur fils Duncan. [1]\nMissing: NONE"
    kept = ask(tmp_path / "fr", french, "Qui était l'otage à la cour normande ?")
    assert kept.restated is None, "only English is checked for a verb"


def test_an_unreadable_reply_is_not_swapped_for_an_unreadable_quotation() -> None:
    cells = [_hit(1, "Form 1040NR | 143 | 6,249 | 8,143 | 49,850")]
    assert anchor("Instructions for Form 1040NR [1].", "Form 1040NR", "Which form?", cells, "It says") is None
    labelled = [_hit(1, "Form | Pages\nForm: 1040NR | Pages: 143")]
    assert anchor("Instructions for Form 1040NR [1].", "1040NR", "Which form?", labelled, "It says") == (
        'It says: "Form: 1040NR; Pages: 143" [1].'
    )
