"""From geocoding results to one place: dominance, qualifiers, picks, not found."""

from __future__ import annotations

import pytest

from tests.openmeteo_replay import FREDERICK_CO, FREDERICK_MD, FREDERICK_OK, LONDON, LONDON_ONTARIO, place
from tools.place_resolution import resolve_place
from tools.weather_models import Place, WeatherError, WeatherRequest

FREDERICKS = [Place.model_validate(p) for p in (FREDERICK_MD, FREDERICK_CO, FREDERICK_OK)]
LONDONS = [Place.model_validate(p) for p in (LONDON, LONDON_ONTARIO)]


def failure_of(city: str, found: list[Place], **fields: object) -> WeatherError:
    with pytest.raises(WeatherError) as caught:
        resolve_place(WeatherRequest(city=city, **fields), found)
    return caught.value


def test_a_far_larger_namesake_is_chosen_and_the_others_stay_choosable() -> None:
    chosen, candidates = resolve_place(WeatherRequest(city="London"), LONDONS)
    assert chosen.country_code == "GB"
    assert candidates == LONDONS


def test_comparable_namesakes_are_a_choice() -> None:
    error = failure_of("Frederick", FREDERICKS)
    assert error.kind == "ambiguous"
    assert str(error) == "'Frederick' matches 3 places; choose one"
    assert [p.admin1 for p in error.failure.candidates] == ["Maryland", "Colorado", "Oklahoma"]


def test_qualifiers_pick_by_region_country_or_code() -> None:
    chosen, candidates = resolve_place(WeatherRequest(city="Frederick, colorado"), FREDERICKS)
    assert chosen.admin1 == "Colorado" and candidates == [chosen]
    chosen, _ = resolve_place(WeatherRequest(city="London, CA"), LONDONS)
    assert chosen.admin1 == "Ontario"
    assert failure_of("Frederick, United States", FREDERICKS).kind == "ambiguous"  # all three are in the US


def test_pick_chooses_among_the_matches() -> None:
    chosen, candidates = resolve_place(WeatherRequest(city="Frederick", pick=3), FREDERICKS)
    assert chosen.admin1 == "Oklahoma" and len(candidates) == 3
    error = failure_of("Frederick", FREDERICKS, pick=4)
    assert error.kind == "invalid_input" and "only 3 match(es)" in str(error)


def test_nothing_found() -> None:
    error = failure_of("Xyzzyqq", [])
    assert error.kind == "not_found" and str(error) == "no place called 'Xyzzyqq'"
    assert str(failure_of("Frederick, Texas", FREDERICKS)) == "no place called 'Frederick' in Texas"
    assert str(failure_of("Xyzzyqq", [], country_code="de")) == "no place called 'Xyzzyqq' in country DE"


def test_results_with_other_names_do_not_make_a_name_ambiguous() -> None:
    # Like the recorded "Enschede" answer: the city, then its airport (no population key).
    city = Place.model_validate(place("Enschede", 52.21833, 6.89583, "The Netherlands", "NL", "Overijssel", 153_655))
    airport = Place.model_validate(place("Enschede Airport Twente", 52.27, 6.87417, "The Netherlands", "NL"))
    chosen, candidates = resolve_place(WeatherRequest(city="Enschede"), [city, airport])
    assert chosen == city and candidates == [city, airport]
    # Two namesakes without any population figure cannot be told apart: ask.
    twin = city.model_copy(update={"population": None, "admin1": "Elsewhere"})
    assert failure_of("Enschede", [city.model_copy(update={"population": None}), twin]).kind == "ambiguous"
