"""From geocoding results to one place, or a clear "not found" / "which one?".

Open-Meteo ranks results by relevance and size. "London" returns London (England, 8.9 M people) first
and London (Ontario, 0.4 M) later: asking the person to choose every time would be tiresome, so the
first result is taken when it is at least DOMINANCE times as populous as every other result with the
same name; the person can still choose another of the matches by number (`pick`). "Frederick"
(69 k, 11 k, 4 k people) is a real choice.
"""

from __future__ import annotations

from tools.weather_models import Place, WeatherError, WeatherFailure, WeatherRequest

DOMINANCE = 10


def resolve_place(request: WeatherRequest, found: list[Place]) -> tuple[Place, list[Place]]:
    """The place to use and every match (in Open-Meteo's order, after the qualifiers); WeatherError
    (not_found, ambiguous, invalid_input) when there is no single answer."""
    matches = [p for p in found if all(_matches(p, q) for q in request.qualifiers)]
    if not matches:
        raise WeatherError(WeatherFailure(kind="not_found", message=_not_found(request, bool(found))))
    if request.pick is not None:
        if request.pick > len(matches):
            message = f"there {'is' if len(matches) == 1 else 'are'} only {len(matches)} match(es) for {request.city!r}"
            raise WeatherError(WeatherFailure(kind="invalid_input", message=message, candidates=matches))
        return matches[request.pick - 1], matches
    best = matches[0]
    namesakes = [p for p in matches[1:] if p.name.casefold() == best.name.casefold()]
    if not namesakes:
        return best, matches
    runner_up = max(p.population or 0 for p in namesakes)
    if best.population and best.population >= DOMINANCE * runner_up:
        return best, matches
    message = f"{request.city!r} matches {len(matches)} places; choose one"
    raise WeatherError(WeatherFailure(kind="ambiguous", message=message, candidates=matches))


def _matches(place: Place, qualifier: str) -> bool:
    """A qualifier names the admin area, the country or the country code ("Maryland", "US")."""
    wanted = qualifier.casefold()
    fields = (place.admin1, place.admin2, place.country, place.country_code)
    return any(f is not None and f.casefold() == wanted for f in fields)


def _not_found(request: WeatherRequest, had_results: bool) -> str:
    message = f"no place called {request.place_name!r}"
    if request.country_code:
        message += f" in country {request.country_code.upper()}"
    if had_results and request.qualifiers:
        message += f" in {', '.join(request.qualifiers)}"
    return message
