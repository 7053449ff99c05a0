"""The LLM's part of the weather tool: turning computed figures into a few plain sentences.

The model is given the figures as text and told to copy them, never to calculate. Small models still
invent numbers now and then, so every number in the reply is checked against the figures it was given;
any that is not among them is named in a caveat shown beside the explanation.

The user turn asks a concrete question ("describe it as you would tell a friend"): with the same facts
followed by "Explain this weather in plain language." or "write one paragraph of prose, do not copy the
facts", the 0.5B model copied the facts line by line both times; the question made it write sentences
that used only given figures.
"""

from __future__ import annotations

import logging
import re
import time
from collections.abc import Callable

from providers.llm.base import LLM, ChatMessage
from tools.weather_models import Extreme, WeatherAnalysis

NUMBER = re.compile(r"-?\d+(?:[.,]\d+)?")

log = logging.getLogger(__name__)

SYSTEM_PROMPT = (
    "You explain weather data to a person who is not a meteorologist. Write at most 3 short, plain sentences "
    "about the period: temperatures, rain, wind, and any unusual days. Use only the figures given, copied "
    "exactly with their units. Never calculate, round or invent numbers. Mention missing data if the facts "
    "report any."
)


def explain(analysis: WeatherAnalysis, llm: Callable[[], LLM], max_tokens: int) -> None:
    """Add the LLM's plain-language explanation to `analysis`, with a note naming any figure it
    invented. A failing model never loses the analysis: the note says why there is no explanation."""
    started = time.perf_counter()
    try:
        model = llm()
        text = whole_sentences(model.complete(explanation_messages(analysis), max_tokens, temperature=0.0))
    except Exception as exc:
        log.warning("weather explanation failed: %s", exc)
        analysis.explanation_note = f"The explanation is unavailable: the language model failed ({exc})."
        return
    finally:
        analysis.timings_ms["explain_ms"] = round((time.perf_counter() - started) * 1000, 1)
    analysis.explanation_model = model.label
    if not text:
        analysis.explanation_note = "The explanation is unavailable: the language model returned nothing."
        return
    analysis.explanation = text
    invented = unsupported_numbers(text, facts(analysis))
    if invented:
        analysis.explanation_note = (
            f"The explanation mentions figures that are not in the computed analysis ({', '.join(invented)}); "
            "rely on the table and charts."
        )


def explanation_messages(analysis: WeatherAnalysis) -> list[ChatMessage]:
    bullets = "\n".join(f"- {line}" for line in facts(analysis).splitlines())
    question = (
        "In 2 or 3 sentences, describe what the weather is like there over this period, as you would tell "
        "a friend: the warmest and coldest times, the rain and the wind."
    )
    return [
        ChatMessage(role="system", content=SYSTEM_PROMPT),
        ChatMessage(role="user", content=f"Weather figures for {analysis.place.label}:\n{bullets}\n\n{question}"),
    ]


def facts(analysis: WeatherAnalysis) -> str:
    """The computed figures as short lines, each with its unit."""
    u, a = analysis.units, analysis.analytics
    t, p, w = u.temperature, u.precipitation, u.wind_speed
    kind = "forecast" if analysis.source == "forecast" else "past weather (archive)"
    lines = [
        f"Place: {analysis.place.label}",
        f"Period: {analysis.start} to {analysis.end}, {len(analysis.daily)} days, {kind}",
        f"Times are local ({analysis.timezone})",
    ]
    if a.temperature_mean is not None:
        lines.append(f"Average of the daily mean temperatures: {a.temperature_mean:g} {t}")
    if a.volatility is not None:
        lines.append(f"Day-to-day variability (standard deviation of daily means): {a.volatility:g} {t}")
    lines += _extreme_line("Highest temperature", a.temperature_max, t)
    lines += _extreme_line("Lowest temperature", a.temperature_min, t)
    if a.precipitation_total is not None:
        wettest = max(
            (d for d in analysis.daily if d.precipitation_total is not None), key=lambda d: d.precipitation_total or 0
        )
        lines.append(
            f"Total precipitation: {a.precipitation_total:g} {p}; wettest day {wettest.date} "
            f"with {wettest.precipitation_total:g} {p}"
        )
    if a.wind_speed_mean is not None:
        lines.append(f"Average wind speed: {a.wind_speed_mean:g} {w}")
    lines += _extreme_line("Strongest wind", a.wind_speed_max, w)
    if a.anomalies:
        days = "; ".join(f"{x.date} (mean {x.temperature_mean:g} {t}, z = {x.z_score:g})" for x in a.anomalies)
        lines.append(f"Unusual days (more than {a.anomaly_threshold:g} standard deviations from the average): {days}")
    else:
        lines.append("Unusual days: none")
    gaps = [f"{m.variable.replace('_', ' ')} {m.percent:g}% missing" for m in a.missingness if m.missing]
    lines.append(f"Missing data: {', '.join(gaps) if gaps else 'none'}")
    return "\n".join(lines)


def whole_sentences(text: str) -> str:
    """A reply cut off by the token limit, without its unfinished last sentence (if a whole one exists)."""
    text = text.strip()
    if not text or text[-1] in ".!?":
        return text
    end = max(text.rfind(". "), text.rfind("! "), text.rfind("? "))
    return text[: end + 1] if end > 0 else text


def unsupported_numbers(text: str, given: str) -> list[str]:
    """Numbers in `text` that do not occur in `given` (compared as values: "7" matches "7.0")."""
    known = {_value(n) for n in NUMBER.findall(given)}
    known |= {abs(v) for v in known}
    seen, out = set(), []
    for raw in NUMBER.findall(text):
        value = _value(raw)
        if value not in known and abs(value) not in known and raw not in seen:
            seen.add(raw)
            out.append(raw)
    return out


def _extreme_line(label: str, extreme: Extreme | None, unit: str) -> list[str]:
    if extreme is None:
        return []
    return [f"{label}: {extreme.value:g} {unit} on {extreme.time:%Y-%m-%d} at {extreme.time:%H:%M}"]


def _value(raw: str) -> float:
    return float(raw.replace(",", "."))
