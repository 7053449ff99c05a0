"""Typed data of the weather tool: the request, the resolved place, the analysis, and what the sandboxed
subprocess hands back. The app validates every byte the subprocess returns against these models.
"""

from __future__ import annotations

import unicodedata
from datetime import date, datetime, timedelta
from typing import Literal

from pydantic import BaseModel, ConfigDict, Field, ValidationError, field_validator, model_validator

from core.settings import check_openmeteo_url

MAX_FORECAST_DAYS = 16
MAX_ARCHIVE_DAYS = 366
ARCHIVE_FIRST_DAY = date(1940, 1, 1)
MAX_CANDIDATES = 10
# Besides letters, digits and combining marks, the only characters a place name may hold
# ("St. John's", "Saint-Étienne", "Frederick, Maryland", "Halle (Saale)").
CITY_PUNCTUATION = frozenset(" '’.,-()")

TemperatureUnit = Literal["celsius", "fahrenheit"]
WindSpeedUnit = Literal["kmh", "ms"]
Source = Literal["forecast", "archive"]
FailureKind = Literal[
    "invalid_input",  # the request itself is wrong (pick out of range)
    "not_found",  # geocoding found nothing
    "ambiguous",  # several places fit; candidates say which
    "api_error",  # Open-Meteo answered with an error and a reason
    "timeout",  # Open-Meteo did not answer in time
    "network",  # connection refused, DNS, TLS
    "too_large",  # the response exceeded the size cap
    "redirect_refused",  # a redirect to a host outside the allow-list
    "bad_response",  # malformed JSON or an unexpected shape
    "sandbox",  # the subprocess was stopped (time, CPU, memory) or returned something invalid
    "internal",  # an unexpected error inside the subprocess
]


class WeatherRequest(BaseModel):
    """What a person asks for: a place name, and either a number of forecast days or a past date range.

    `city` may carry qualifiers after commas ("Frederick, Maryland"): only the part before the first
    comma is sent to geocoding; the rest narrows the candidates (admin area, country or country code).
    """

    model_config = ConfigDict(extra="forbid")

    city: str = Field(min_length=2, max_length=100)
    days: int | None = Field(default=None, ge=1, le=MAX_FORECAST_DAYS, description="Forecast days (1–16).")
    start: date | None = Field(default=None, description="First day of a past period (archive API).")
    end: date | None = Field(default=None, description="Last day of a past period (archive API).")
    temperature_unit: TemperatureUnit = "celsius"
    wind_speed_unit: WindSpeedUnit = "kmh"
    country_code: str | None = Field(default=None, pattern=r"^[A-Za-z]{2}$", description="ISO 3166-1 alpha-2.")
    pick: int | None = Field(default=None, ge=1, le=MAX_CANDIDATES, description="1-based choice among candidates.")
    explain: bool = Field(default=True, description="Ask the LLM for a plain-language explanation.")

    @field_validator("city")
    @classmethod
    def _plain_place_name(cls, value: str) -> str:
        city = " ".join(value.split())
        bad = sorted({c for c in city if not (c.isalnum() or c in CITY_PUNCTUATION or _is_mark(c))})
        if bad:
            shown = " ".join(repr(c) for c in bad)
            raise ValueError(f"may contain only letters, digits, spaces and ' . , - ( ) (not {shown})")
        if not any(c.isalpha() for c in city):
            raise ValueError("must contain letters")
        if len(city.split(",")[0].strip()) < 2:
            raise ValueError("the place name needs at least 2 characters")
        return city

    @model_validator(mode="after")
    def _one_period(self) -> WeatherRequest:
        if self.start is None and self.end is None:
            if self.days is None:
                self.days = 7
            return self
        if self.start is None or self.end is None:
            raise ValueError("a past period needs both a start and an end date")
        if self.days is not None:
            raise ValueError("give either a number of forecast days or a past date range, not both")
        if self.start > self.end:
            raise ValueError(f"the start date {self.start} is after the end date {self.end}")
        if self.end >= date.today():
            raise ValueError("a date range must lie in the past; use a number of days for the forecast")
        if self.start < ARCHIVE_FIRST_DAY:
            raise ValueError(f"the archive starts on {ARCHIVE_FIRST_DAY}")
        if (self.end - self.start).days + 1 > MAX_ARCHIVE_DAYS:
            raise ValueError(f"a date range may cover at most {MAX_ARCHIVE_DAYS} days")
        return self

    @property
    def source(self) -> Source:
        return "forecast" if self.start is None else "archive"

    @property
    def place_name(self) -> str:
        """The name sent to geocoding: the text before the first comma."""
        return self.city.split(",")[0].strip()

    @property
    def qualifiers(self) -> list[str]:
        """Admin area / country words after the name ("Frederick, Maryland" → ["Maryland"])."""
        return [q.strip() for q in self.city.split(",")[1:] if q.strip()]


def _is_mark(char: str) -> bool:
    return unicodedata.category(char).startswith("M")


def request_error_message(exc: ValidationError) -> str:
    """A ValidationError as one line a person can act on: "days: must be at most 16"."""
    parts = []
    for error in exc.errors():
        field = ".".join(str(p) for p in error["loc"]) or "request"
        message = str(error["msg"]).removeprefix("Value error, ")
        parts.append(f"{field}: {message}")
    return "; ".join(parts)


class Place(BaseModel):
    """One geocoding result (Open-Meteo's field names; optional fields are often absent)."""

    model_config = ConfigDict(extra="ignore")

    name: str
    latitude: float = Field(ge=-90, le=90)
    longitude: float = Field(ge=-180, le=180)
    country: str | None = None
    country_code: str | None = None
    admin1: str | None = None
    admin2: str | None = None
    timezone: str | None = None
    elevation: float | None = None
    population: int | None = None
    feature_code: str | None = None

    @property
    def label(self) -> str:
        """ "Frederick, Maryland, United States"."""
        parts = [self.name, self.admin1, self.country]
        return ", ".join(p for i, p in enumerate(parts) if p and p not in parts[:i])

    @property
    def coordinates(self) -> str:
        return f"{abs(self.latitude):.4f}°{'N' if self.latitude >= 0 else 'S'}, " + (
            f"{abs(self.longitude):.4f}°{'E' if self.longitude >= 0 else 'W'}"
        )


class Units(BaseModel):
    """The units Open-Meteo reported for the data (shown beside every figure)."""

    temperature: str = "°C"
    precipitation: str = "mm"
    wind_speed: str = "km/h"


class HourlySeries(BaseModel):
    """Parallel hourly arrays in the place's local wall-clock time; None is a missing value."""

    time: list[datetime]
    temperature: list[float | None]
    precipitation: list[float | None]
    wind_speed: list[float | None]

    @model_validator(mode="after")
    def _same_length(self) -> HourlySeries:
        for name in ("temperature", "precipitation", "wind_speed"):
            if len(getattr(self, name)) != len(self.time):
                raise ValueError(f"{name} has {len(getattr(self, name))} values for {len(self.time)} times")
        return self


class DailyStats(BaseModel):
    """One local calendar day, aggregated from the hours that have data (None when none do)."""

    date: date
    temperature_mean: float | None
    temperature_max: float | None
    temperature_min: float | None
    precipitation_total: float | None
    wind_speed_mean: float | None
    wind_speed_max: float | None
    temperature_mean_3d: float | None = Field(
        description="Trailing 3-day mean of temperature_mean (this day and the two before); None without 3 days."
    )
    hours: int = Field(description="Hourly rows on this day.")
    temperature_hours: int = Field(description="Hours with a temperature value.")


class Extreme(BaseModel):
    value: float
    time: datetime


class Anomaly(BaseModel):
    """A day whose mean temperature is more than the threshold in standard deviations from the period mean."""

    date: date
    temperature_mean: float
    z_score: float


class Missingness(BaseModel):
    variable: Literal["temperature", "precipitation", "wind_speed"]
    missing: int
    total: int
    percent: float
    alert: bool = Field(description="True when the share missing reaches the alert threshold.")


class QualityNote(BaseModel):
    """A data-quality remark: an alert when figures are unreliable, else a note."""

    level: Literal["alert", "note"]
    text: str


class WeatherAnalytics(BaseModel):
    """Figures over the whole period, computed in Python from the validated hourly data."""

    temperature_mean: float | None = Field(description="Mean of the daily mean temperatures.")
    temperature_max: Extreme | None
    temperature_min: Extreme | None
    precipitation_total: float | None
    wind_speed_mean: float | None
    wind_speed_max: Extreme | None
    volatility: float | None = Field(description="Population standard deviation of the daily mean temperatures.")
    anomaly_threshold: float = Field(description="|z| above which a day counts as an anomaly.")
    anomalies: list[Anomaly]
    missingness: list[Missingness]


class WeatherAnalysis(BaseModel):
    """The result of one weather request (`ragchat weather --json`)."""

    request: WeatherRequest
    place: Place
    candidates: list[Place] = Field(
        default_factory=list,
        description="Every place that matched, in Open-Meteo's order (the chosen one included); pick=N chooses "
        "the Nth of them.",
    )
    source: Source
    start: date
    end: date
    timezone: str
    units: Units
    hourly: HourlySeries
    daily: list[DailyStats]
    analytics: WeatherAnalytics
    notes: list[QualityNote] = Field(default_factory=list, description="Data-quality notes, alerts first.")
    explanation: str | None = Field(default=None, description="Written by the LLM from the computed figures.")
    explanation_note: str | None = Field(default=None, description="Why there is no explanation, or a caveat.")
    explanation_model: str | None = None
    timings_ms: dict[str, float] = Field(default_factory=dict)


class WeatherFailure(BaseModel):
    """Why a request produced no analysis, with whatever was valid up to that point."""

    kind: FailureKind
    message: str
    place: Place | None = Field(default=None, description="The resolved place, when the failure came later.")
    candidates: list[Place] = Field(default_factory=list, description="The choices, when kind is ambiguous.")


class WeatherError(Exception):
    """Raised to callers (service, CLI, UI) with a message fit to show as is."""

    def __init__(self, failure: WeatherFailure) -> None:
        super().__init__(failure.message)
        self.failure = failure

    @property
    def kind(self) -> FailureKind:
        return self.failure.kind


class Endpoints(BaseModel):
    """The only three URLs the subprocess may contact (from settings, never from a request)."""

    forecast: str
    archive: str
    geocoding: str

    @field_validator("forecast", "archive", "geocoding")
    @classmethod
    def _allowed(cls, value: str) -> str:
        return check_openmeteo_url(value)


class WeatherJob(BaseModel):
    """Everything the subprocess receives on stdin."""

    request: WeatherRequest
    endpoints: Endpoints
    timeout_s: float = Field(gt=0)
    retries: int = Field(ge=0, le=3)
    max_bytes: int = Field(gt=0)
    budget_s: float = Field(gt=0, description="The subprocess's own deadline, shorter than the app's kill timer.")


class WeatherToolResult(BaseModel):
    """Exactly one of analysis or failure: what the subprocess writes to stdout."""

    analysis: WeatherAnalysis | None = None
    failure: WeatherFailure | None = None

    @model_validator(mode="after")
    def _exactly_one(self) -> WeatherToolResult:
        if (self.analysis is None) == (self.failure is None):
            raise ValueError("a result holds exactly one of analysis or failure")
        return self


def default_past_range(today: date | None = None) -> tuple[date, date]:
    """The week that ended a week ago: old enough for the archive (it lags real time by days)."""
    end = (today or date.today()) - timedelta(days=7)
    return end - timedelta(days=6), end
