"""Batsim workload JSON: write a Trace the way the golden converter did, and read one back.

The writer reproduces the workloads Batsim's own converter wrote byte for byte (same
key order, same line layout), so a workload we convert can be diffed against
the golden one and fed to the same Batsim runs:

.. code-block:: json

    {"nb_res": 100,
     "jobs": [
      {"id": "0000015", "subtime": 599850, "res": 4, "walltime": 53940, "profile": "d3477", "user": 12},
      ...
     ],
     "profiles": {
      "d3477": {"type": "delay", "delay": 3477},
      ...
     }
    }

- ``id`` is the SWF job number zero-padded to one width for the whole file:
  7 digits, or more if the largest id needs it.  batsched breaks ties between
  equal release dates by comparing id *strings*; equal-width padding makes that
  the numeric order.
- ``profile`` is ``d<runtime>``; one ``delay`` profile per distinct runtime,
  listed in order of first use.
- numbers are written as JSON integers when integral (``3477``, not
  ``3477.0``), otherwise as floats.
- ``user`` is an extra field that Batsim passes through in JOB_SUBMITTED.
- ``unix_start_time`` and ``timezone`` (the trace's clock: SWF's
  UnixStartTime and TimeZoneString) follow ``nb_res`` when the trace has
  them; Batsim ignores them, and the scheduler reads them from the file
  Batsim names (a classifier's calendar features need them).  The golden
  files' traces carried no clock, so apart from these lines the layout is
  theirs.

Jobs are written in the trace's (submit, id) order.
"""

from __future__ import annotations

import json
import math
import os
from pathlib import Path
from typing import Any, TypeGuard

from bftune.support import inputs
from bftune.support.files import atomic_write_text
from bftune.workloads import limits
from bftune.workloads.errors import WorkloadError
from bftune.workloads.model import MIN_NAME_WIDTH, JobRecord, Trace, job_name, name_width, sort_jobs
from bftune.workloads.swf import WalltimeFallback, trace_name_from_path

def id_width(trace: Trace) -> int:
    """Width of the zero-padded job names of ``trace`` (see :func:`bftune.workloads.model.name_width`)."""
    return name_width(job.id for job in trace.jobs)


def batsim_job_id(job_id: int, width: int = MIN_NAME_WIDTH) -> str:
    """``15`` -> ``"0000015"``: the job's name, checked to be a Batsim job number."""
    if job_id < 0:
        raise WorkloadError(f"job id {job_id} is negative: Batsim ids are zero-padded job numbers")
    return job_name(job_id, width)


def profile_name(runtime: int | float) -> str:
    """The delay profile a job of this runtime uses: ``d3477``."""
    return f"d{_json_number(runtime)}"


def batsim_workload_text(trace: Trace) -> str:
    """The Batsim workload JSON for ``trace``, as text (see the module docstring)."""
    width = id_width(trace)
    job_lines: list[str] = []
    profiles: dict[str, Any] = {}
    for job in trace.jobs:
        runtime = _json_value(job.runtime, job, "runtime")
        prof = profile_name(runtime)
        if prof not in profiles:
            profiles[prof] = runtime
        entry = {
            "id": batsim_job_id(job.id, width),
            "subtime": _json_value(job.submit, job, "submit"),
            "res": job.procs,
            "walltime": _json_value(job.walltime, job, "walltime"),
            "profile": prof,
            "user": job.user,
        }
        job_lines.append("  " + json.dumps(entry))
    profile_lines = [
        f"  {json.dumps(name)}: " + json.dumps({"type": "delay", "delay": delay}) for name, delay in profiles.items()
    ]
    clock = "".join(f" {json.dumps(key)}: {json.dumps(value)},\n"
                    for key, value in (("unix_start_time", trace.unix_start_time), ("timezone", trace.timezone))
                    if value is not None)
    return (
        f'{{"nb_res": {trace.max_procs},\n'
        + clock +
        ' "jobs": [\n' + ",\n".join(job_lines) + "\n ],\n"
        ' "profiles": {\n' + ",\n".join(profile_lines) + "\n }\n}\n"
    )


def write_batsim_workload(trace: Trace, path: str | os.PathLike[str]) -> Path:
    """Write ``trace`` as a Batsim workload JSON file, atomically; returns the path."""
    return atomic_write_text(path, batsim_workload_text(trace))


def is_batsim_json(path: str | os.PathLike[str]) -> bool:
    """Whether ``path`` holds JSON (its first non-blank byte is ``{``), whatever its name: a Batsim workload.

    An SWF file starts with a comment (``;``), a digit or a blank; so the
    content tells the two formats apart where a name does not (a workload
    named ``trace`` or ``w.txt``).  False for anything unreadable: the SWF
    reader then says what is wrong with it.
    """
    try:
        with inputs.open_regular(path) as f:
            head = f.read(4096)
    except (inputs.InputError, OSError):
        return False
    return head.lstrip(b" \t\r\n")[:1] == b"{"


def read_batsim_workload(
    path: str | os.PathLike[str],
    *,
    walltime_fallback: WalltimeFallback = None,
    lenient: bool = False,
    name: str | None = None,
) -> Trace:
    """Read a Batsim workload JSON file into a Trace (m = ``nb_res``).

    Job ids must be numeric strings (``"0000015"`` -> 15) or integers: our
    Trace keys jobs by SWF job number.  Runtime comes from the job's
    ``delay`` profile; other profile types are rejected, since the simulator
    only models delay jobs.  A job without a positive walltime is an error
    unless ``walltime_fallback="runtime"`` (then walltime = runtime; the
    CLI's ``--walltime-from-runtime``).  Jobs are returned sorted by (submit,
    id); every problem names the file and job.  With ``lenient`` (``--lenient``)
    a malformed job is skipped and counted under ``"malformed_job"`` instead,
    as SWF's ``--lenient`` counts malformed lines; a malformed file (not JSON,
    no ``nb_res``...) is an error either way.
    """
    path = Path(path)
    doc = load_json_document(path)
    if not isinstance(doc, dict):
        raise WorkloadError(f"{path}: a Batsim workload is a JSON object")
    nb_res = doc.get("nb_res")
    if not _is_int(nb_res) or nb_res <= 0:
        raise WorkloadError(f"{path}: 'nb_res' must be a positive integer, not {limits.short(repr(nb_res))}")
    limits.procs(nb_res, f"{path}: 'nb_res'")
    profiles = doc.get("profiles", {})
    raw_jobs = doc.get("jobs")
    if not isinstance(raw_jobs, list) or not isinstance(profiles, dict):
        raise WorkloadError(f"{path}: 'jobs' must be a list and 'profiles' an object")
    if len(raw_jobs) > limits.MAX_JOBS:
        raise WorkloadError(f"{path}: {len(raw_jobs):,} jobs: more than bftune accepts ({limits.MAX_JOBS:,}; "
                            "about 2 KB of memory per job)")
    jobs: list[JobRecord] = []
    from_runtime = malformed = 0
    for index, raw in enumerate(raw_jobs):
        try:
            job, used_fallback = _job_from_json(raw, profiles, nb_res, walltime_fallback, f"{path}: job #{index}")
        except WorkloadError:
            if not lenient:
                raise
            malformed += 1
            continue
        from_runtime += used_fallback
        jobs.append(job)
    if not jobs:
        more = f" ({malformed} malformed jobs skipped)" if malformed else ""
        raise WorkloadError(f"{path}: the workload has no jobs{more}")
    ids = [job.id for job in jobs]
    if len(set(ids)) != len(ids):
        raise WorkloadError(f"{path}: a job id appears more than once")
    cleaning = {"walltime_from_runtime": from_runtime} if walltime_fallback == "runtime" else {}
    if lenient:
        cleaning["malformed_job"] = malformed
    start, zone = doc.get("unix_start_time"), doc.get("timezone")
    if start is not None and not _is_int(start):
        raise WorkloadError(f"{path}: 'unix_start_time' must be an integer, not {start!r}")
    if start is not None:
        limits.time(start, f"{path}: 'unix_start_time'")
    if zone is not None and (not isinstance(zone, str) or not zone):
        raise WorkloadError(f"{path}: 'timezone' must be a non-empty string, not {zone!r}")
    return Trace(
        jobs=sort_jobs(jobs),
        max_procs=nb_res,
        name=name if name is not None else trace_name_from_path(path),
        unix_start_time=start,
        timezone=zone,
        cleaning=cleaning,
        source=str(path),
    )


def _job_from_json(
    raw: Any, profiles: dict[str, Any], nb_res: int, walltime_fallback: WalltimeFallback, where: str
) -> tuple[JobRecord, bool]:
    if not isinstance(raw, dict):
        raise WorkloadError(f"{where}: a job is a JSON object")
    raw_id = raw.get("id")
    where = f"{where} (id {limits.short(repr(raw_id))})"
    if _is_int(raw_id) and raw_id >= 0:
        job_id = raw_id
    elif isinstance(raw_id, str) and raw_id.isascii() and raw_id.isdigit() and len(raw_id) <= 30:
        job_id = int(raw_id)
    else:
        raise WorkloadError(f"{where}: job ids must be job numbers (digits), e.g. \"0000015\"")
    submit = _number(raw.get("subtime"), where, "subtime")
    procs = raw.get("res")
    if not _is_int(procs) or not 1 <= procs <= nb_res:
        raise WorkloadError(f"{where}: 'res' must be an integer in 1..{nb_res}, not {limits.short(repr(procs))}")
    prof_name = raw.get("profile")
    profile = profiles.get(prof_name) if isinstance(prof_name, str) else None
    if not isinstance(profile, dict):
        raise WorkloadError(f"{where}: profile {prof_name!r} is not defined in 'profiles'")
    if profile.get("type") != "delay":
        raise WorkloadError(f"{where}: profile {prof_name!r} has type {profile.get('type')!r}; only 'delay' is supported")
    runtime = _number(profile.get("delay"), where, f"delay of profile {prof_name!r}")
    if runtime <= 0:
        raise WorkloadError(f"{where}: delay of profile {prof_name!r} must be positive, not {runtime!r}")
    walltime_raw = raw.get("walltime", -1)
    walltime = _number(walltime_raw, where, "walltime")
    used_fallback = False
    if walltime <= 0:
        if walltime_fallback != "runtime":
            raise WorkloadError(f"{where}: no positive walltime ({walltime_raw!r}); --walltime-from-runtime "
                                "(walltime_fallback='runtime') uses the runtime instead")
        walltime, used_fallback = runtime, True
    user = raw.get("user", -1)
    if not _is_int(user):
        raise WorkloadError(f"{where}: 'user' must be an integer, not {limits.short(repr(user))}")
    return JobRecord(id=job_id, submit=submit, procs=procs, runtime=runtime, walltime=walltime, user=user), used_fallback


def _is_int(value: Any) -> TypeGuard[int]:
    return isinstance(value, int) and not isinstance(value, bool)


def _number(value: Any, where: str, what: str) -> int | float:
    """A time of the workload: a finite number within ``limits.MAX_TIME`` (a huge integer is refused here,
    before anything converts it to a float)."""
    if _is_int(value):
        return limits.time(value, f"{where}: {what}")
    if isinstance(value, float) and math.isfinite(value):
        limits.time(value, f"{where}: {what}")
        return int(value) if value.is_integer() else value
    raise WorkloadError(f"{where}: {what} must be a number, not {limits.short(repr(value))}")


def load_json_document(path: Path) -> Any:
    """The parsed JSON of a workload file: a regular file (:mod:`bftune.support.inputs`), UTF-8, valid JSON; one line
    naming the file (and the line) otherwise."""
    try:
        with inputs.open_regular(path) as f:
            data = f.read()
    except inputs.InputError as exc:
        raise WorkloadError(str(exc)) from None
    except OSError as exc:
        raise WorkloadError(f"{path}: cannot read workload: {exc.strerror or exc}") from None
    try:
        text = data.decode("utf-8")
    except UnicodeDecodeError as exc:
        raise WorkloadError(f"{path}: not UTF-8 text (byte {data[exc.start]:#04x} at offset {exc.start}); "
                            "a Batsim workload is JSON") from None
    del data
    try:
        return json.loads(text)
    except json.JSONDecodeError as exc:
        raise WorkloadError(f"{path}:{exc.lineno}: invalid JSON: {exc.msg}") from None
    except ValueError as exc:  # an integer of more than 4,300 digits
        raise WorkloadError(f"{path}: invalid JSON: {exc}") from None
    except RecursionError:
        raise WorkloadError(f"{path}: invalid JSON: nested too deeply for a Batsim workload") from None


def _json_number(value: int | float) -> str:
    if isinstance(value, int):
        return str(value)
    return str(int(value)) if float(value).is_integer() else repr(float(value))


def _json_value(value: int | float, job: JobRecord, what: str) -> int | float:
    if isinstance(value, int):
        return value
    value = float(value)
    if not math.isfinite(value):
        raise WorkloadError(f"job {job.id}: {what} {value!r} cannot be written to Batsim JSON")
    return int(value) if value.is_integer() else value
