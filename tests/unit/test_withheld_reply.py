"""A withheld reply is shown apart from the refusal, unless it copies the prompt's worked example
(the 1.5B did for 3 of the 238 real-documents questions): that is not something the model read."""

from __future__ import annotations

from rag.answer_builder import apart
from rag.prompting import EXAMPLE_ANSWER, SYSTEM_PROMPT


def test_the_example_is_the_prompts_own() -> None:
    assert EXAMPLE_ANSWER in SYSTEM_PROMPT


def test_a_copy_of_the_worked_example_is_not_shown_as_the_models_reply() -> None:
    assert apart("The plant opened on 14 March 1998.") is None
    assert apart("the plant opened on 14 March 1998 [3].") is None
    reply = "The company affected 3000 employees in Torrance."
    assert apart(reply) == reply
