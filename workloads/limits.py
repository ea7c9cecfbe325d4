"""Sizes bftune accepts: machines, job counts, weeks and seeds, checked before any work.

A typo (``--procs 1000000000``, ``--weeks 100000000``) must give a clear
message at once, not fill memory for minutes and end in ``MemoryError`` (or
worse, in the kernel's OOM killer).  The limits are far beyond any real use:

- :data:`MAX_PROCS`: 2^20 = 1,048,576 processors, six times the largest
  machine of the Parallel Workloads Archive (ANL Intrepid, 163,840 cores).
  Batsim's platform for it is already a 220 MB file.
- :data:`MAX_JOBS`: 10 million jobs, 30 times the largest trace we use
  (CEA Curie, 312,826 jobs).  A simulated job takes about 2 KB of memory,
  so this is some 20 GB: more does not fit in a workstation's memory.
- :data:`MAX_WEEKS`: 10,000 resampled weeks (190 years), and never more
  than :data:`MAX_JOBS` expected jobs.
- :data:`MAX_TIME`: times read from a workload (SWF submit, run and
  requested times and ``UnixStartTime``; Batsim JSON ``subtime``,
  ``walltime``, profile ``delay`` and ``unix_start_time``) are at most
  2^32 s (136 years) in magnitude.  Below it a float64 holds every time to
  the microsecond that ``out_jobs.csv`` prints; a submit time of 1e17 gave
  a 4 s job an execution time of 0 and made Batsim abort.  Unix times fit
  until 2106.
- What a reader holds in memory (:mod:`bftune.support.inputs`): a line of an SWF
  file is at most :data:`MAX_LINE_BYTES` (64 KiB; the archive's longest is
  97 bytes), its comment lines at most :data:`MAX_HEADER_BYTES` (64 MiB in
  all; the archive's largest header is 2.2 kB) and its job lines at most
  :data:`MAX_JOBS`; a campaign file or a learned policy's fit at most
  :data:`MAX_SMALL_FILE_BYTES` (1 MiB).  So a file that expands to
  gigabytes of one line (a gzip bomb) is refused after reading 64 KiB of
  it, and memory follows the jobs.
- A Slurm accounting dump: a record joined from several physical lines
  (a submit line holding newlines) is at most :data:`MAX_RECORD_CHARS`
  (1 MiB); an integer it holds (a job id, an array index, a count, the days
  of a duration) at most :data:`MAX_INT_DIGITS` digits (Python's ``int``
  refuses more than 4,300 with a traceback; Slurm's ids are 32-bit), and
  its times and durations are under :data:`MAX_TIME` like every other
  workload's (a Unix time from 1970 to 2106).

The workload API (the synthetic generator, resampling, the readers, the
platform generator) enforces them, so every entry point - the CLI, campaign
files, Python callers - shares them; the CLI checks its flags with the same
functions first, so that the message names the flag.  (No numpy here: the
SWF reader avoids importing it for small files.)
"""

from __future__ import annotations

from numbers import Integral
from typing import Any

from bftune.workloads.errors import WorkloadError

MAX_PROCS = 2**20
MAX_JOBS = 10_000_000
MAX_WEEKS = 10_000
#: Times read from a workload, in seconds (module docstring): float64 keeps microseconds below 2^32.
MAX_TIME = 2**32
#: The longest line of an SWF file, in bytes (the archive's longest: 97).
MAX_LINE_BYTES = 64 * 1024
#: All comment lines of an SWF file together, in bytes (the archive's largest header: 2.2 kB).
MAX_HEADER_BYTES = 64 * 1024 * 1024
#: A Slurm record joined from several lines (a submit line with newlines), in characters.
MAX_RECORD_CHARS = 1024 * 1024
#: Digits of an integer in a Slurm dump (ids are 32-bit, counts smaller): more is an error, not a traceback.
MAX_INT_DIGITS = 18
#: A campaign file, a learned policy's fit file: they are a few kB.
MAX_SMALL_FILE_BYTES = 1024 * 1024
#: Seeds feed numpy and scikit-learn (``random_state``), whose seeds are 32-bit.
MAX_SEED = 2**32 - 1


def count(value: Any, what: str, maximum: int, why: str = "") -> int:
    """``value`` as an integer in 1..maximum, or a WorkloadError naming ``what``."""
    if isinstance(value, bool) or not isinstance(value, Integral):
        raise WorkloadError(f"{what} must be a positive integer, not {value!r}")
    number = int(value)  # exact for any Integral (numpy's integers too)
    if number < 1:
        raise WorkloadError(f"{what} must be a positive integer, not {value!r}")
    if number > maximum:
        raise WorkloadError(f"{what} = {value} is more than bftune accepts ({maximum:,}{why})")
    return number


def procs(value: Any, what: str = "the machine size") -> int:
    """A machine size m in 1..MAX_PROCS."""
    return count(value, what, MAX_PROCS, "; the largest archive machine has 163,840 processors")


def jobs(value: Any, what: str = "the number of jobs") -> int:
    """A job count in 1..MAX_JOBS."""
    return count(value, what, MAX_JOBS, "; about 2 KB of memory per job")


def weeks(value: Any, what: str = "the number of weeks") -> int:
    """A resampling length in 1..MAX_WEEKS."""
    return count(value, what, MAX_WEEKS, " weeks, 190 years")


def seed(value: Any, what: str = "the seed") -> int:
    """A seed in 0..MAX_SEED (numpy refuses negative seeds with a bare ValueError, scikit-learn large ones)."""
    if isinstance(value, bool) or not isinstance(value, Integral) or not 0 <= int(value) <= MAX_SEED:
        raise WorkloadError(f"{what} must be an integer in 0..2^32-1, not {value!r}")
    return int(value)


def time(value: Any, what: str) -> int | float:
    """A time read from a workload, ``|value| <= MAX_TIME`` seconds (module docstring); a WorkloadError otherwise.

    Checked before any conversion to float, so a huge integer is refused with a message rather than
    an ``OverflowError``.
    """
    if not -MAX_TIME <= value <= MAX_TIME:
        raise WorkloadError(f"{what} = {short(value)} is out of range: bftune accepts times of at most 2^32 s "
                            "(136 years) in magnitude")
    return value


def short(value: Any) -> str:
    """A number as the message shows it: a 400-digit integer as its first digits and its length."""
    text = str(value)
    if len(text) <= 24:
        return text
    return f"{text[:12]}...({len(text)} {'digits' if text.isdigit() else 'characters'})"
