"""The Weather page of the real app (app.py's page list), driven through its sidebar, against a
127.0.0.1 replay server: charts, the daily table, analytics, an ambiguous name, an unknown one."""

from __future__ import annotations

from collections.abc import Iterator
from pathlib import Path

import pyarrow as pa
import pytest
import streamlit as st
from streamlit.testing.v1 import AppTest
from streamlit.testing.v1.element_tree import UnknownElement

from core.settings import PROJECT_ROOT
from tests.openmeteo_replay import (
    FORECAST_PATH,
    FREDERICK_CO,
    FREDERICK_MD,
    FREDERICK_OK,
    GEOCODING_PATH,
    LONDON,
    LONDON_ONTARIO,
    ReplayServer,
    Reply,
    geocoding_by_name,
    hourly,
    replay,
    series,
)

APP = PROJECT_ROOT / "app.py"
TIMEOUT_S = 120


@pytest.fixture
def server(home: Path, monkeypatch: pytest.MonkeyPatch) -> Iterator[ReplayServer]:
    with replay(monkeypatch) as running:
        running.routes[GEOCODING_PATH] = geocoding_by_name(
            {"London": [LONDON, LONDON_ONTARIO], "Frederick": [FREDERICK_MD, FREDERICK_CO, FREDERICK_OK]}
        )
        data = series(7)
        data["wind_speed_10m"][:30] = [None] * 30
        running.routes[FORECAST_PATH] = Reply.json(hourly(data))
        yield running


def open_weather_page() -> AppTest:
    """The app as app.py builds it, on its Weather page. AppTest.switch_page() takes a page *file*;
    st.Page(callable) pages have none, so the page is chosen by the url_path st.navigation registered."""
    st.cache_resource.clear()  # no Session left over from a test with another home
    at = AppTest.from_file(str(APP), default_timeout=TIMEOUT_S).run()
    pages = {info.get("url_pathname"): page_hash for page_hash, info in at._registered_pages.items()}
    at._page_hash = pages["weather"]
    at.run()
    assert not at.exception
    assert [t.value for t in at.title] == ["Weather"]
    return at


def chart_data(chart: UnknownElement) -> tuple[set[str], int]:
    """A chart's series names and points per series, read from the Arrow data it sends the browser
    (several columns arrive melted into Streamlit's generated color/value columns)."""
    (dataset,) = chart.proto.datasets
    table = pa.ipc.open_stream(dataset.data.data).read_all().to_pydict()
    table.pop("index -- streamlit-generated")
    names = set(table.pop("color -- streamlit-generated", [])) or set(table)
    column = table.get("value -- streamlit-generated") or next(iter(table.values()))
    return names, len(column) // len(names)


def ask(at: AppTest, city: str) -> AppTest:
    at.sidebar.text_input(key="weather_city").set_value(city)
    at.sidebar.toggle(key="weather_explain").set_value(False)  # the real model is tested in test_weather_service
    at.run()
    next(b for b in at.sidebar.button if b.label == "Get weather").click().run()
    assert not at.exception
    return at


def test_forecast_charts_table_analytics_and_quality(server: ReplayServer) -> None:
    at = open_weather_page()
    assert "Enter a place in the sidebar to see its weather." in [i.value for i in at.info]

    ask(at, "London")
    assert not at.error, [e.value for e in at.error]
    assert [h.value for h in at.header] == ["London, England, United Kingdom"]
    assert "units: temperature °C, precipitation mm, wind speed km/h" in " ".join(c.value for c in at.caption)

    charts = [chart_data(c) for c in at.get("vega_lite_chart")]
    assert len(charts) == 6  # temperature, precipitation and wind, daily and hourly
    assert charts[0] == ({"mean (°C)", "max (°C)", "min (°C)", "3-day mean (°C)"}, 7)
    assert charts[1] == ({"precipitation (mm)"}, 7)
    assert charts[2] == ({"wind mean (km/h)", "wind max (km/h)"}, 7)
    assert charts[3:] == [({"temperature (°C)"}, 168), ({"precipitation (mm)"}, 168), ({"wind speed (km/h)"}, 168)]

    table = at.dataframe[0].value
    assert len(table) == 7
    assert {"mean (°C)", "max (°C)", "min (°C)", "3-day mean (°C)", "precipitation (mm)", "wind max (km/h)"} <= set(
        table.columns
    )
    metrics = {m.label: m.value for m in at.metric}
    assert metrics["Average temperature"].endswith(" °C") and metrics["Volatility"].endswith(" °C")
    assert [str(d) for d in at.dataframe[1].value["date"]] == ["2026-07-31"]  # the anomaly table
    assert any(w.value.startswith("Wind speed: 30 of 168 hourly values") for w in at.warning)
    assert [e.label for e in at.expander] == ["Not this place? 1 other match"]


def test_an_ambiguous_name_offers_a_choice_and_an_unknown_one_a_calm_error(server: ReplayServer) -> None:
    at = ask(open_weather_page(), "Frederick")
    assert at.warning[0].value == "'Frederick' matches 3 places; choose one:"
    choice = at.radio(key="weather_choice")
    assert len(choice.options) == 3 and choice.options[1].startswith("Frederick, Colorado, United States")
    choice.set_value(1).run()
    next(b for b in at.button if b.label == "Use this place").click().run()
    assert not at.exception
    assert [h.value for h in at.header] == ["Frederick, Colorado, United States"]
    assert server.requests_to(FORECAST_PATH)[0].query["latitude"] == ["40.0992"]

    ask(at, "Xyzzyqq")
    assert [e.value for e in at.error] == ["Could not get the weather: no place called 'Xyzzyqq'"]
    assert not at.get("vega_lite_chart")
