"""Batsim 4 protocol: one typed, validated dataclass per event type.

A Batsim message is ``{"now": <float>, "events": [<event>, ...]}`` and an
event is ``{"timestamp": <float>, "type": <str>, "data": {...}}`` (Batsim
4.2's protocol documentation; docs/semantics/scheduling.md#batsim-semantics).  ``parse_message`` turns a decoded JSON dict
into a :class:`Message` of typed events, checking every field the scheduler
relies on; anything malformed or unknown raises :class:`ProtocolError` whose
text names the message time, the event index and type and the field, e.g.::

    Batsim message at now=30.0, event #1 (JOB_SUBMITTED): field 'job.res' must be a positive integer, got 'x'

``Event.to_dict`` / ``Message.to_dict`` serialise back to exactly Batsim's
shape, so ``parse(x).to_dict() == x`` for every event in the recorded
transcripts.  Nothing here decides anything; the driver
(``bftune.schedulers.drivers.batsim.driver``) does the mapping to the decision core.
"""

from __future__ import annotations

import math
from dataclasses import dataclass, field
from typing import Any, ClassVar, Iterable

from bftune.workloads.limits import short


class ProtocolError(ValueError):
    """A message that is not valid Batsim protocol, or not expected at this point."""


# --- field validation helpers ---------------------------------------------------------


class Where:
    """Where an event sits ("Batsim message at now=30.0, event #1 (JOB_SUBMITTED)"), for error texts.

    Made into text only when an error is raised: formatting it for every
    event of every message (a float's repr, twice) cost more than checking
    the event's fields.
    """

    __slots__ = ("sender", "now", "index", "kind")

    def __init__(self, sender: str, now: float | None, index: int, kind: str | None = None) -> None:
        self.sender = sender
        self.now = now
        self.index = index
        self.kind = kind

    def __str__(self) -> str:
        kind = f" ({self.kind})" if self.kind is not None else ""
        return f"{self.sender} message at now={self.now}, event #{self.index}{kind}"

    def __format__(self, spec: str) -> str:
        return format(str(self), spec)


def _where(ctx: Where | str, name: str) -> str:
    return f"{ctx}: field '{name}'"


def _get(data: dict, name: str, ctx: Where | str, default: Any = ...) -> Any:
    if name in data:
        return data[name]
    if default is ...:
        raise ProtocolError(f"{ctx}: missing field '{name}'")
    return default


def _number(value: Any, name: str, ctx: Where | str) -> float:
    if isinstance(value, bool) or not isinstance(value, (int, float)):
        raise ProtocolError(f"{_where(ctx, name)} must be a finite number, got {short(repr(value))}")
    try:
        number = float(value)  # an integer beyond float's range (10^309) raises OverflowError
    except OverflowError:
        number = math.inf
    if not math.isfinite(number):
        raise ProtocolError(f"{_where(ctx, name)} must be a finite number, got {short(repr(value))}")
    return number


def _integer(value: Any, name: str, ctx: Where | str, minimum: int | None = None) -> int:
    if isinstance(value, bool) or not isinstance(value, int):
        if isinstance(value, float) and value.is_integer():
            value = int(value)
        else:
            raise ProtocolError(f"{_where(ctx, name)} must be an integer, got {value!r}")
    if minimum is not None and value < minimum:
        what = "a positive integer" if minimum == 1 else f"an integer >= {minimum}"
        raise ProtocolError(f"{_where(ctx, name)} must be {what}, got {value!r}")
    return value


def _string(value: Any, name: str, ctx: Where | str, nonempty: bool = True) -> str:
    if not isinstance(value, str) or (nonempty and not value):
        raise ProtocolError(f"{_where(ctx, name)} must be a non-empty string, got {value!r}")
    return value


def _dict(value: Any, name: str, ctx: Where | str) -> dict:
    if not isinstance(value, dict):
        raise ProtocolError(f"{_where(ctx, name)} must be a JSON object, got {type(value).__name__}")
    return value


def _list(value: Any, name: str, ctx: Where | str) -> list:
    if not isinstance(value, list):
        raise ProtocolError(f"{_where(ctx, name)} must be a JSON array, got {type(value).__name__}")
    return value


def _bool(value: Any, name: str, ctx: Where | str) -> bool:
    if not isinstance(value, bool):
        raise ProtocolError(f"{_where(ctx, name)} must be true or false, got {value!r}")
    return value


def _job_id(value: Any, name: str, ctx: Where | str) -> str:
    """``<workload>!<job name>``, both parts non-empty."""
    text = _string(value, name, ctx)
    workload, sep, job = text.partition("!")
    if not sep or not workload or not job:
        raise ProtocolError(f"{_where(ctx, name)} must look like '<workload>!<job name>', got {text!r}")
    return text


def _alloc(value: Any, name: str, ctx: Where | str) -> str:
    """Interval-set notation ``"0-3 7 9-12"``: non-negative integers, a <= b."""
    text = _string(value, name, ctx)
    for token in text.split():
        a, sep, b = token.partition("-")
        if not a.isdigit() or (sep and not b.isdigit()) or (sep and int(b) < int(a)):
            raise ProtocolError(f"{_where(ctx, name)} is not an interval set like '0-3 7', got {text!r}")
    return text


def split_job_id(job_id: str) -> tuple[str, str]:
    """``"w0!0000015"`` -> ``("w0", "0000015")``."""
    workload, _, name = job_id.partition("!")
    return workload, name


# --- events -----------------------------------------------------------------------------


@dataclass(frozen=True, slots=True)
class Event:
    """Base class: every event has a timestamp; subclasses add their data fields."""

    timestamp: float
    TYPE: ClassVar[str] = ""

    def data(self) -> dict:
        return {}

    def to_dict(self) -> dict:
        return {"timestamp": self.timestamp, "type": self.TYPE, "data": self.data()}

    @classmethod
    def parse_data(cls, timestamp: float, data: dict, ctx: Where | str) -> "Event":
        return cls(timestamp)


# Batsim -> scheduler ---------------------------------------------------------------------


@dataclass(frozen=True, slots=True)
class SimulationBegins(Event):
    nb_resources: int = 0
    nb_compute_resources: int = 0
    nb_storage_resources: int = 0
    allow_compute_sharing: bool = False
    allow_storage_sharing: bool = True
    config: dict = field(default_factory=dict)
    compute_resources: list = field(default_factory=list)
    storage_resources: list = field(default_factory=list)
    workloads: dict = field(default_factory=dict)
    profiles: dict = field(default_factory=dict)
    TYPE: ClassVar[str] = "SIMULATION_BEGINS"

    @property
    def dynamic_jobs_enabled(self) -> bool:
        return bool(self.config.get("dynamic-jobs-enabled", False))

    @property
    def dynamic_jobs_acknowledged(self) -> bool:
        return bool(self.config.get("dynamic-jobs-acknowledged", False))

    @property
    def profile_reuse_enabled(self) -> bool:
        return bool(self.config.get("profile-reuse-enabled", False))

    @property
    def compute_resource_ids(self) -> list[int]:
        return [r["id"] for r in self.compute_resources]

    def data(self) -> dict:
        return {
            "nb_resources": self.nb_resources,
            "nb_compute_resources": self.nb_compute_resources,
            "nb_storage_resources": self.nb_storage_resources,
            "allow_compute_sharing": self.allow_compute_sharing,
            "allow_storage_sharing": self.allow_storage_sharing,
            "config": self.config,
            "compute_resources": self.compute_resources,
            "storage_resources": self.storage_resources,
            "workloads": self.workloads,
            "profiles": self.profiles,
        }

    @classmethod
    def parse_data(cls, timestamp: float, data: dict, ctx: Where | str) -> Event:
        nb_compute = _integer(_get(data, "nb_compute_resources", ctx), "nb_compute_resources", ctx, 1)
        resources = _list(_get(data, "compute_resources", ctx), "compute_resources", ctx)
        for i, res in enumerate(resources):
            res = _dict(res, f"compute_resources[{i}]", ctx)
            _integer(_get(res, "id", f"{ctx}: compute_resources[{i}]"), f"compute_resources[{i}].id", ctx, 0)
        if len(resources) != nb_compute:
            raise ProtocolError(f"{ctx}: nb_compute_resources is {nb_compute} but compute_resources lists "
                                f"{len(resources)} resources")
        config = _dict(_get(data, "config", ctx, {}), "config", ctx)
        for key in ("dynamic-jobs-enabled", "dynamic-jobs-acknowledged", "profile-reuse-enabled"):
            if key in config:
                _bool(config[key], f"config.{key}", ctx)
        return cls(
            timestamp,
            nb_resources=_integer(_get(data, "nb_resources", ctx, nb_compute), "nb_resources", ctx, 0),
            nb_compute_resources=nb_compute,
            nb_storage_resources=_integer(_get(data, "nb_storage_resources", ctx, 0), "nb_storage_resources", ctx, 0),
            allow_compute_sharing=_bool(_get(data, "allow_compute_sharing", ctx, False), "allow_compute_sharing", ctx),
            allow_storage_sharing=_bool(_get(data, "allow_storage_sharing", ctx, True), "allow_storage_sharing", ctx),
            config=config,
            compute_resources=resources,
            storage_resources=_list(_get(data, "storage_resources", ctx, []), "storage_resources", ctx),
            workloads=_dict(_get(data, "workloads", ctx, {}), "workloads", ctx),
            profiles=_dict(_get(data, "profiles", ctx, {}), "profiles", ctx),
        )


@dataclass(frozen=True, slots=True)
class SimulationEnds(Event):
    TYPE: ClassVar[str] = "SIMULATION_ENDS"


@dataclass(frozen=True, slots=True)
class JobSubmitted(Event):
    """A job entered the system.  ``job`` is the job object as in the workload
    file (extra fields such as ``user`` included); ``profile`` only when Batsim
    forwards profiles on submission."""

    job_id: str = ""
    job: dict = field(default_factory=dict)
    profile: dict | None = None
    TYPE: ClassVar[str] = "JOB_SUBMITTED"

    @property
    def workload(self) -> str:
        return split_job_id(self.job_id)[0]

    @property
    def name(self) -> str:
        return split_job_id(self.job_id)[1]

    @property
    def subtime(self) -> float:
        return float(self.job["subtime"])

    @property
    def res(self) -> int:
        return self.job["res"]

    @property
    def walltime(self) -> float:
        """The requested time; -1 when the job has none."""
        return float(self.job.get("walltime", -1))

    @property
    def profile_name(self) -> str:
        return self.job["profile"]

    @property
    def user(self) -> int:
        user = self.job.get("user", -1)
        return user if isinstance(user, int) and not isinstance(user, bool) else -1

    def data(self) -> dict:
        out = {"job_id": self.job_id, "job": self.job}
        if self.profile is not None:
            out["profile"] = self.profile
        return out

    @classmethod
    def parse_data(cls, timestamp: float, data: dict, ctx: Where | str) -> Event:
        job_id = _job_id(_get(data, "job_id", ctx), "job_id", ctx)
        job = _dict(_get(data, "job", ctx), "job", ctx)
        if "id" in job and job["id"] != job_id:
            raise ProtocolError(f"{_where(ctx, 'job.id')} is {job['id']!r} but job_id is {job_id!r}")
        _number(_get(job, "subtime", ctx), "job.subtime", ctx)
        _integer(_get(job, "res", ctx), "job.res", ctx, 1)
        if "walltime" in job:
            _number(job["walltime"], "job.walltime", ctx)
        _string(_get(job, "profile", ctx), "job.profile", ctx)
        profile = data.get("profile")
        if profile is not None:
            _dict(profile, "profile", ctx)
        return cls(timestamp, job_id=job_id, job=job, profile=profile)


#: Batsim's final job states (``job_state`` of JOB_COMPLETED).
JOB_STATES = ("COMPLETED_SUCCESSFULLY", "COMPLETED_FAILED", "COMPLETED_WALLTIME_REACHED", "COMPLETED_KILLED",
              "REJECTED")


@dataclass(frozen=True, slots=True)
class JobCompleted(Event):
    job_id: str = ""
    job_state: str = ""
    return_code: int = 0
    alloc: str = ""
    TYPE: ClassVar[str] = "JOB_COMPLETED"

    def data(self) -> dict:
        return {"job_id": self.job_id, "job_state": self.job_state, "return_code": self.return_code,
                "alloc": self.alloc}

    @classmethod
    def parse_data(cls, timestamp: float, data: dict, ctx: Where | str) -> Event:
        job_id = _job_id(_get(data, "job_id", ctx), "job_id", ctx)
        state = _string(_get(data, "job_state", ctx), "job_state", ctx)
        if state not in JOB_STATES:
            raise ProtocolError(f"{_where(ctx, 'job_state')} is {state!r}, not one of {', '.join(JOB_STATES)}")
        return cls(timestamp, job_id=job_id, job_state=state,
                   return_code=_integer(_get(data, "return_code", ctx, 0), "return_code", ctx),
                   alloc=_alloc(_get(data, "alloc", ctx), "alloc", ctx) if "alloc" in data else "")


@dataclass(frozen=True, slots=True)
class JobKilled(Event):
    """Acknowledges a KILL_JOB.  ``job_progress`` may miss a job that had
    completed by itself before the kill took effect."""

    job_ids: tuple[str, ...] = ()
    job_progress: dict = field(default_factory=dict)
    TYPE: ClassVar[str] = "JOB_KILLED"

    def data(self) -> dict:
        return {"job_ids": list(self.job_ids), "job_progress": self.job_progress}

    @classmethod
    def parse_data(cls, timestamp: float, data: dict, ctx: Where | str) -> Event:
        ids = _list(_get(data, "job_ids", ctx), "job_ids", ctx)
        job_ids = tuple(_job_id(x, f"job_ids[{i}]", ctx) for i, x in enumerate(ids))
        progress = _dict(_get(data, "job_progress", ctx, {}), "job_progress", ctx)
        return cls(timestamp, job_ids=job_ids, job_progress=progress)


@dataclass(frozen=True, slots=True)
class RequestedCall(Event):
    TYPE: ClassVar[str] = "REQUESTED_CALL"


#: NOTIFY types each side may send.
BATSIM_NOTIFY_TYPES = ("no_more_static_job_to_submit", "no_more_external_event_to_occur",
                       "event_machine_available", "event_machine_unavailable")
SCHEDULER_NOTIFY_TYPES = ("registration_finished", "continue_registration")


@dataclass(frozen=True, slots=True)
class Notify(Event):
    """A NOTIFY in either direction; ``extra`` holds data fields besides ``type``."""

    type: str = ""
    extra: dict = field(default_factory=dict)
    TYPE: ClassVar[str] = "NOTIFY"

    def data(self) -> dict:
        return {"type": self.type, **self.extra}

    @classmethod
    def parse_data(cls, timestamp: float, data: dict, ctx: Where | str) -> Event:
        kind = _string(_get(data, "type", ctx), "type", ctx)
        if kind not in BATSIM_NOTIFY_TYPES + SCHEDULER_NOTIFY_TYPES:
            raise ProtocolError(f"{ctx}: unknown NOTIFY type {kind!r} (known: "
                                f"{', '.join(BATSIM_NOTIFY_TYPES + SCHEDULER_NOTIFY_TYPES)})")
        return cls(timestamp, type=kind, extra={k: v for k, v in data.items() if k != "type"})


@dataclass(frozen=True, slots=True)
class ResourceStateChanged(Event):
    resources: str = ""
    state: str = ""
    TYPE: ClassVar[str] = "RESOURCE_STATE_CHANGED"

    def data(self) -> dict:
        return {"resources": self.resources, "state": self.state}

    @classmethod
    def parse_data(cls, timestamp: float, data: dict, ctx: Where | str) -> Event:
        return cls(timestamp, resources=_alloc(_get(data, "resources", ctx), "resources", ctx),
                   state=str(_get(data, "state", ctx)))


# Scheduler -> Batsim ---------------------------------------------------------------------


@dataclass(frozen=True, slots=True)
class ExecuteJob(Event):
    job_id: str = ""
    alloc: str = ""
    TYPE: ClassVar[str] = "EXECUTE_JOB"

    def data(self) -> dict:
        return {"job_id": self.job_id, "alloc": self.alloc}

    @classmethod
    def parse_data(cls, timestamp: float, data: dict, ctx: Where | str) -> Event:
        return cls(timestamp, job_id=_job_id(_get(data, "job_id", ctx), "job_id", ctx),
                   alloc=_alloc(_get(data, "alloc", ctx), "alloc", ctx))


@dataclass(frozen=True, slots=True)
class RejectJob(Event):
    job_id: str = ""
    TYPE: ClassVar[str] = "REJECT_JOB"

    def data(self) -> dict:
        return {"job_id": self.job_id}

    @classmethod
    def parse_data(cls, timestamp: float, data: dict, ctx: Where | str) -> Event:
        return cls(timestamp, job_id=_job_id(_get(data, "job_id", ctx), "job_id", ctx))


@dataclass(frozen=True, slots=True)
class KillJob(Event):
    job_ids: tuple[str, ...] = ()
    TYPE: ClassVar[str] = "KILL_JOB"

    def data(self) -> dict:
        return {"job_ids": list(self.job_ids)}

    @classmethod
    def parse_data(cls, timestamp: float, data: dict, ctx: Where | str) -> Event:
        ids = _list(_get(data, "job_ids", ctx), "job_ids", ctx)
        if not ids:
            raise ProtocolError(f"{_where(ctx, 'job_ids')} must not be empty")
        return cls(timestamp, job_ids=tuple(_job_id(x, f"job_ids[{i}]", ctx) for i, x in enumerate(ids)))


@dataclass(frozen=True, slots=True)
class CallMeLater(Event):
    """Ask for a REQUESTED_CALL at ``at`` (the ``data.timestamp`` field)."""

    at: float = 0.0
    TYPE: ClassVar[str] = "CALL_ME_LATER"

    def data(self) -> dict:
        return {"timestamp": self.at}

    @classmethod
    def parse_data(cls, timestamp: float, data: dict, ctx: Where | str) -> Event:
        return cls(timestamp, at=_number(_get(data, "timestamp", ctx), "timestamp", ctx))


@dataclass(frozen=True, slots=True)
class RegisterJob(Event):
    job_id: str = ""
    job: dict = field(default_factory=dict)
    TYPE: ClassVar[str] = "REGISTER_JOB"

    def data(self) -> dict:
        return {"job_id": self.job_id, "job": self.job}

    @classmethod
    def parse_data(cls, timestamp: float, data: dict, ctx: Where | str) -> Event:
        job_id = _job_id(_get(data, "job_id", ctx), "job_id", ctx)
        job = _dict(_get(data, "job", ctx), "job", ctx)
        _integer(_get(job, "res", ctx), "job.res", ctx, 1)
        _string(_get(job, "profile", ctx), "job.profile", ctx)
        return cls(timestamp, job_id=job_id, job=job)


@dataclass(frozen=True, slots=True)
class RegisterProfile(Event):
    workload_name: str = ""
    profile_name: str = ""
    profile: dict = field(default_factory=dict)
    TYPE: ClassVar[str] = "REGISTER_PROFILE"

    def data(self) -> dict:
        return {"workload_name": self.workload_name, "profile_name": self.profile_name, "profile": self.profile}

    @classmethod
    def parse_data(cls, timestamp: float, data: dict, ctx: Where | str) -> Event:
        return cls(timestamp,
                   workload_name=_string(_get(data, "workload_name", ctx), "workload_name", ctx),
                   profile_name=_string(_get(data, "profile_name", ctx), "profile_name", ctx),
                   profile=_dict(_get(data, "profile", ctx), "profile", ctx))


@dataclass(frozen=True, slots=True)
class SetJobMetadata(Event):
    """``metadata`` is an opaque string (pybatsim writes Python ``str(dict)``)."""

    job_id: str = ""
    metadata: str = ""
    TYPE: ClassVar[str] = "SET_JOB_METADATA"

    def data(self) -> dict:
        return {"job_id": self.job_id, "metadata": self.metadata}

    @classmethod
    def parse_data(cls, timestamp: float, data: dict, ctx: Where | str) -> Event:
        return cls(timestamp, job_id=_job_id(_get(data, "job_id", ctx), "job_id", ctx),
                   metadata=_string(_get(data, "metadata", ctx), "metadata", ctx, nonempty=False))


@dataclass(frozen=True, slots=True)
class SetResourceState(Event):
    resources: str = ""
    state: str = ""
    TYPE: ClassVar[str] = "SET_RESOURCE_STATE"

    def data(self) -> dict:
        return {"resources": self.resources, "state": self.state}

    @classmethod
    def parse_data(cls, timestamp: float, data: dict, ctx: Where | str) -> Event:
        return cls(timestamp, resources=_alloc(_get(data, "resources", ctx), "resources", ctx),
                   state=str(_get(data, "state", ctx)))


BATSIM_EVENTS: dict[str, type[Event]] = {
    cls.TYPE: cls for cls in (SimulationBegins, SimulationEnds, JobSubmitted, JobCompleted, JobKilled,
                              RequestedCall, Notify, ResourceStateChanged)
}
SCHEDULER_EVENTS: dict[str, type[Event]] = {
    cls.TYPE: cls for cls in (ExecuteJob, RejectJob, KillJob, CallMeLater, RegisterJob, RegisterProfile,
                              SetJobMetadata, SetResourceState, Notify)
}
DIRECTIONS = {"batsim": BATSIM_EVENTS, "scheduler": SCHEDULER_EVENTS}


# --- messages -----------------------------------------------------------------------------


@dataclass(slots=True)
class Message:
    now: float
    events: list[Event] = field(default_factory=list)

    def to_dict(self) -> dict:
        return {"now": self.now, "events": [e.to_dict() for e in self.events]}


def parse_event(raw: Any, index: int = 0, now: float | None = None, direction: str = "batsim") -> Event:
    """One event dict -> its typed dataclass (``direction``: who sent it)."""
    known = DIRECTIONS[direction]
    ctx = Where("Batsim" if direction == "batsim" else "scheduler", now, index)
    if not isinstance(raw, dict):
        raise ProtocolError(f"{ctx}: an event must be a JSON object, got {type(raw).__name__}")
    kind = raw.get("type")
    if not isinstance(kind, str):
        raise ProtocolError(f"{ctx}: field 'type' must be a string, got {kind!r}")
    ctx.kind = kind
    cls = known.get(kind)
    if cls is None:
        other = [d for d, table in DIRECTIONS.items() if d != direction and kind in table]
        hint = f" (that is an event the {other[0]} sends)" if other else ""
        raise ProtocolError(f"{ctx}: unknown event type {kind!r}{hint}; expected one of {', '.join(sorted(known))}")
    timestamp = _number(_get(raw, "timestamp", ctx), "timestamp", ctx)
    data = _dict(raw.get("data", {}), "data", ctx)
    return cls.parse_data(timestamp, data, ctx)


def parse_message(raw: Any, direction: str = "batsim") -> Message:
    """A decoded JSON message -> :class:`Message`; raises :class:`ProtocolError`."""
    sender = "Batsim" if direction == "batsim" else "scheduler"
    if not isinstance(raw, dict):
        raise ProtocolError(f"{sender} message must be a JSON object with 'now' and 'events', "
                            f"got {type(raw).__name__}")
    if "now" not in raw:
        raise ProtocolError(f"{sender} message has no field 'now'")
    now = _number(raw["now"], "now", f"{sender} message")
    events = raw.get("events")
    if not isinstance(events, list):
        raise ProtocolError(f"{sender} message at now={now}: field 'events' must be a JSON array, "
                            f"got {type(events).__name__}")
    parsed = [parse_event(e, i, now, direction) for i, e in enumerate(events)]
    for i, event in enumerate(parsed):
        if event.timestamp > now + 1e-9:
            raise ProtocolError(f"{sender} message at now={now}, event #{i} ({event.TYPE}): "
                                f"timestamp {event.timestamp} is later than the message's now")
    return Message(now, parsed)


def message(now: float, events: Iterable[Event]) -> dict:
    """Serialise a reply: ``{"now": now, "events": [...]}``."""
    return {"now": now, "events": [e.to_dict() for e in events]}
