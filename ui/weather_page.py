"""The weather page: a place and a period in the sidebar; in the main area the resolved place (or a
choice when the name is ambiguous), charts, the daily table, analytics, data-quality notes and the
LLM's explanation. All work is App.weather, the same call as `ragchat weather`."""

from __future__ import annotations

import logging
from datetime import date, timedelta
from typing import Any

import pandas as pd
import streamlit as st
from pydantic import ValidationError

from ragchat.session import Session
from tools.weather_models import (
    MAX_FORECAST_DAYS,
    Place,
    WeatherAnalysis,
    WeatherError,
    WeatherFailure,
    WeatherRequest,
    default_past_range,
    request_error_message,
)
from ui.common import calm_errors, duration, get_user_session

log = logging.getLogger("ragchat.app")

EMPTY_STATE = "Enter a place in the sidebar to see its weather."
TEMPERATURE_UNITS = {"celsius": "°C", "fahrenheit": "°F"}
WIND_UNITS = {"kmh": "km/h", "ms": "m/s"}
FORECAST, PAST = "Forecast", "Past dates"


# ----------------------------------------------------------------------------- sidebar


def render_inputs() -> WeatherRequest | None:
    """The request when "Get weather" was pressed and the inputs are valid; else None."""
    st.subheader("Weather")
    city = st.text_input("Place", key="weather_city", placeholder="London, or Frederick, Maryland", max_chars=100)
    period = st.radio("Period", [FORECAST, PAST], horizontal=True, key="weather_period")
    fields: dict[str, Any] = {}
    if period == FORECAST:
        fields["days"] = st.slider("Days", 1, MAX_FORECAST_DAYS, 7, key="weather_days")
    else:
        yesterday = date.today() - timedelta(days=1)
        picked = st.date_input(
            "Dates", value=default_past_range(), max_value=yesterday, key="weather_dates", format="YYYY-MM-DD"
        )
        if not isinstance(picked, tuple) or len(picked) != 2:
            st.caption("Pick a start and an end date.")
        else:
            fields["start"], fields["end"] = picked
    fields["temperature_unit"] = st.selectbox(
        "Temperature",
        list(TEMPERATURE_UNITS),
        format_func=TEMPERATURE_UNITS.__getitem__,
        key="weather_temperature_unit",
    )
    fields["wind_speed_unit"] = st.selectbox(
        "Wind speed", list(WIND_UNITS), format_func=WIND_UNITS.__getitem__, key="weather_wind_unit"
    )
    fields["explain"] = st.toggle(
        "Explain in plain words",
        value=True,
        key="weather_explain",
        help="The local language model describes the "
        "computed figures; it computes nothing itself. Takes a few seconds.",
    )
    if not st.button("Get weather", type="primary", width="stretch", disabled=not city.strip()):
        return None
    if period == PAST and "start" not in fields:
        st.error("Pick a start and an end date.")
        return None
    try:
        return WeatherRequest(city=city, **fields)
    except ValidationError as exc:
        st.error(f"Check the inputs: {request_error_message(exc)}")
        return None


# ----------------------------------------------------------------------------- running


def run(session: Session, request: WeatherRequest) -> None:
    """Call the tool and keep the outcome (analysis or failure) in the session, so reruns show it."""
    st.session_state.weather_request = request.model_dump(mode="json")
    st.session_state.weather_outcome = None
    with st.spinner(f"Fetching and analysing the weather for {request.city}…"):
        try:
            analysis = session.app.weather(request)
        except WeatherError as exc:
            st.session_state.weather_outcome = {"failure": exc.failure.model_dump(mode="json")}
            return
    st.session_state.weather_outcome = {"analysis": analysis.model_dump(mode="json")}


def rerun_with_pick(session: Session, pick: int) -> None:
    request = WeatherRequest.model_validate({**st.session_state.weather_request, "pick": pick})
    with calm_errors("Getting the weather"):
        run(session, request)


# ----------------------------------------------------------------------------- results


def render_failure(session: Session, failure: WeatherFailure) -> None:
    if failure.kind == "ambiguous":
        st.warning(f"{_sentence(failure.message)}:")
        choice = st.radio(
            "Which place?",
            range(len(failure.candidates)),
            format_func=lambda i: _place_option(failure.candidates[i]),
            key="weather_choice",
        )
        if st.button("Use this place", type="primary"):
            rerun_with_pick(session, choice + 1)
            st.rerun()
        return
    st.error(f"Could not get the weather: {failure.message}")
    if failure.place is not None:
        st.caption(f"Place: {failure.place.label} ({failure.place.coordinates})")


def render_place(session: Session, analysis: WeatherAnalysis) -> None:
    place, u = analysis.place, analysis.units
    st.header(place.label)
    facts = [place.coordinates, f"local time {analysis.timezone}"]
    if place.elevation is not None:
        facts.append(f"{place.elevation:g} m")
    if place.population:
        facts.append(f"population {place.population:,}")
    period = "Forecast" if analysis.source == "forecast" else "Past weather"
    st.caption(
        f"{' · '.join(facts)}  \n{period}, {analysis.start} to {analysis.end} ({len(analysis.daily)} days) · "
        f"units: temperature {u.temperature}, precipitation {u.precipitation}, wind speed {u.wind_speed}"
    )
    others = [i for i, p in enumerate(analysis.candidates) if p != place]
    if others:
        with st.expander(f"Not this place? {len(others)} other match{'es' if len(others) > 1 else ''}"):
            choice = st.selectbox(
                "Other places with this name",
                others,
                format_func=lambda i: _place_option(analysis.candidates[i]),
                key="weather_other_place",
            )
            if st.button("Show this place"):
                rerun_with_pick(session, choice + 1)
                st.rerun()


def render_charts(analysis: WeatherAnalysis) -> None:
    u = analysis.units
    t, p, w = f"({u.temperature})", f"({u.precipitation})", f"({u.wind_speed})"
    daily = pd.DataFrame(
        {
            f"mean {t}": [d.temperature_mean for d in analysis.daily],
            f"max {t}": [d.temperature_max for d in analysis.daily],
            f"min {t}": [d.temperature_min for d in analysis.daily],
            f"3-day mean {t}": [d.temperature_mean_3d for d in analysis.daily],
            f"precipitation {p}": [d.precipitation_total for d in analysis.daily],
            f"wind mean {w}": [d.wind_speed_mean for d in analysis.daily],
            f"wind max {w}": [d.wind_speed_max for d in analysis.daily],
        },
        index=pd.to_datetime([d.date for d in analysis.daily]),
    )
    hourly = pd.DataFrame(
        {
            f"temperature {t}": analysis.hourly.temperature,
            f"precipitation {p}": analysis.hourly.precipitation,
            f"wind speed {w}": analysis.hourly.wind_speed,
        },
        index=pd.to_datetime(analysis.hourly.time),
    )
    daily_tab, hourly_tab = st.tabs(["Daily", "Hourly"])
    with daily_tab:
        st.markdown(f"**Temperature {t}**")
        st.line_chart(daily[[f"mean {t}", f"max {t}", f"min {t}", f"3-day mean {t}"]])
        st.markdown(f"**Precipitation {p}**")
        st.bar_chart(daily[[f"precipitation {p}"]])
        st.markdown(f"**Wind speed {w}**")
        st.line_chart(daily[[f"wind mean {w}", f"wind max {w}"]])
    with hourly_tab:
        st.markdown(f"**Temperature {t}**")
        st.line_chart(hourly[[f"temperature {t}"]])
        st.markdown(f"**Precipitation {p}**")
        st.bar_chart(hourly[[f"precipitation {p}"]])
        st.markdown(f"**Wind speed {w}**")
        st.line_chart(hourly[[f"wind speed {w}"]])


def render_table(analysis: WeatherAnalysis) -> None:
    u = analysis.units
    st.subheader("Daily aggregates")
    rows = [
        {
            "date": d.date,
            f"mean ({u.temperature})": d.temperature_mean,
            f"max ({u.temperature})": d.temperature_max,
            f"min ({u.temperature})": d.temperature_min,
            f"3-day mean ({u.temperature})": d.temperature_mean_3d,
            f"precipitation ({u.precipitation})": d.precipitation_total,
            f"wind mean ({u.wind_speed})": d.wind_speed_mean,
            f"wind max ({u.wind_speed})": d.wind_speed_max,
            "hours with temperature": f"{d.temperature_hours}/{d.hours}",
        }
        for d in analysis.daily
    ]
    st.dataframe(pd.DataFrame(rows), hide_index=True, width="stretch")


def render_analytics(analysis: WeatherAnalysis) -> None:
    a, u = analysis.analytics, analysis.units
    st.subheader("Analytics")
    cols = st.columns(4)
    cols[0].metric("Average temperature", _figure(a.temperature_mean, u.temperature), help="Mean of the daily means.")
    cols[1].metric(
        "Volatility", _figure(a.volatility, u.temperature), help="Population standard deviation of the daily means."
    )
    cols[2].metric("Total precipitation", _figure(a.precipitation_total, u.precipitation))
    cols[3].metric("Average wind", _figure(a.wind_speed_mean, u.wind_speed))
    extremes = [
        f"{label} {x.value:g} {unit} on {x.time:%Y-%m-%d %H:%M}"
        for label, x, unit in (
            ("highest", a.temperature_max, u.temperature),
            ("lowest", a.temperature_min, u.temperature),
            ("strongest wind", a.wind_speed_max, u.wind_speed),
        )
        if x is not None
    ]
    if extremes:
        st.caption(_sentence(" · ".join(extremes)))
    if a.anomalies:
        st.markdown(f"**Anomalies**: days more than {a.anomaly_threshold:g} σ from the mean daily temperature")
        st.dataframe(
            pd.DataFrame(
                [
                    {"date": x.date, f"mean ({u.temperature})": x.temperature_mean, "z-score": x.z_score}
                    for x in a.anomalies
                ]
            ),
            hide_index=True,
        )
    else:
        st.caption(f"No anomalies: no day's mean temperature is more than {a.anomaly_threshold:g} σ from the mean.")


def render_quality(analysis: WeatherAnalysis) -> None:
    st.subheader("Data quality")
    missing = " · ".join(
        f"{m.variable.replace('_', ' ')} {m.percent:g}% missing ({m.missing}/{m.total} h)"
        for m in analysis.analytics.missingness
    )
    st.caption(missing)
    if not analysis.notes:
        st.caption("No gaps or irregularities in the hourly data.")
    for note in analysis.notes:
        (st.warning if note.level == "alert" else st.info)(note.text)


def render_explanation(analysis: WeatherAnalysis) -> None:
    if not analysis.request.explain:
        return
    st.subheader("In plain words")
    if analysis.explanation:
        st.markdown(analysis.explanation)
        took = analysis.timings_ms.get("explain_ms")
        st.caption(
            f"Written by {analysis.explanation_model} from the figures above; it computed none of them"
            + (f" · {duration(took)}" if took else "")
        )
    if analysis.explanation_note:
        st.warning(analysis.explanation_note)


def render_outcome(session: Session) -> None:
    outcome = st.session_state.get("weather_outcome")
    if not outcome:
        st.info(EMPTY_STATE)
        return
    if "failure" in outcome:
        render_failure(session, WeatherFailure.model_validate(outcome["failure"]))
        return
    analysis = WeatherAnalysis.model_validate(outcome["analysis"])
    render_place(session, analysis)
    render_charts(analysis)
    render_table(analysis)
    render_analytics(analysis)
    render_quality(analysis)
    render_explanation(analysis)


def _place_option(place: Place) -> str:
    population = f", population {place.population:,}" if place.population else ""
    return f"{place.label} ({place.coordinates}{population})"


def _sentence(text: str) -> str:
    """First letter upper case, the rest untouched (str.capitalize would lower "London")."""
    return text[:1].upper() + text[1:]


def _figure(value: float | None, unit: str) -> str:
    return "n/a" if value is None else f"{value:g} {unit}"


# ----------------------------------------------------------------------------- page


def render() -> None:
    st.title("Weather")
    st.caption(
        "Forecast (up to 16 days) or past weather for a place, from Open-Meteo. The figures are computed in a "
        "sandboxed subprocess; the language model only puts them into words."
    )
    try:
        session = get_user_session()
    except Exception as exc:
        log.exception("starting the session failed")
        st.error(f"ragchat could not start: {exc}")
        return
    with st.sidebar:
        request = render_inputs()
    if request is not None:
        with calm_errors("Getting the weather"):
            run(session, request)
    with calm_errors("Showing the weather"):
        render_outcome(session)
