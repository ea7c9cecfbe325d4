"""A slow, literal transcription of batsched 1.4.0's conservative_bf (src/algo/conservative_bf.cpp, src/schedule.cpp).

Independent of bftune's core on purpose: the tests compare our
``reservations = "all", reservation = "machines"`` with it on random
workloads.  It keeps batsched's data structure as it is: a list of time
slices, each with its free machines and the jobs allocated in it; a job is
inserted at the first slice from which a machine set stays free for its
walltime (the lowest-numbered machines of that set), removed by erasing it
from its slices and merging neighbours that hold the same jobs.  The event
loop is Batsim's: at each date, the jobs that end then and the jobs
submitted then reach one ``make_decisions`` call; a job runs
min(runtime, walltime), while batsched plans it for walltime + 5 s (its RJMS delay).  Times are
Fractions, as batsched's Rationals.

Jobs are (id, submit, procs, runtime, walltime) tuples; FCFS order is
(submit, id).
"""

from __future__ import annotations

from fractions import Fraction

HORIZON = Fraction(10) ** 19


class Slice:
    __slots__ = ("begin", "end", "free", "jobs")

    def __init__(self, begin, end, free, jobs):
        self.begin = begin
        self.end = end
        self.free = free  # frozenset of machine ids
        self.jobs = jobs  # dict job id -> frozenset of machines

    def copy(self):
        return Slice(self.begin, self.end, self.free, dict(self.jobs))


class Schedule:
    def __init__(self, m, now):
        self.slices = [Slice(Fraction(now), HORIZON, frozenset(range(m)), {})]

    def update_first_slice(self, now):
        first = self.slices[0]
        assert first.begin <= now <= first.end, (now, first.begin, first.end)
        first.begin = Fraction(now)

    def _split(self, k, date):
        s = self.slices[k]
        if s.begin < date < s.end:
            second = s.copy()
            second.begin = date
            s.end = date
            self.slices.insert(k + 1, second)
            return k, k + 1
        return k, k

    def add_first_fit(self, jid, procs, walltime):
        """Returns (begin, machines, started_in_first_slice)."""
        walltime = Fraction(walltime)
        k = 0
        while k < len(self.slices):
            s = self.slices[k]
            if len(s.free) >= procs:
                total = s.end - s.begin
                if total >= walltime:
                    machines = frozenset(sorted(s.free)[:procs])
                    begin = s.begin
                    first, _ = self._split(k, begin + walltime)
                    t = self.slices[first]
                    t.free = t.free - machines
                    t.jobs[jid] = machines
                    return begin, machines, k == 0
                common = s.free
                k2 = k + 1
                while k2 < len(self.slices) and len(self.slices[k2].free) >= procs:
                    common = common & self.slices[k2].free
                    total += self.slices[k2].end - self.slices[k2].begin
                    if len(common) < procs:
                        break
                    if total >= walltime:
                        machines = frozenset(sorted(common)[:procs])
                        begin = s.begin
                        for x in range(k, k2):
                            self.slices[x].free = self.slices[x].free - machines
                            self.slices[x].jobs[jid] = machines
                        first, _ = self._split(k2, begin + walltime)
                        t = self.slices[first]
                        t.free = t.free - machines
                        t.jobs[jid] = machines
                        return begin, machines, k == 0
                    k2 += 1
            k += 1
        raise AssertionError(f"job {jid} could not be inserted")

    def contains(self, jid):
        return any(jid in s.jobs for s in self.slices)

    def remove(self, jid):
        k = next(i for i, s in enumerate(self.slices) if jid in s.jobs)
        while k < len(self.slices) and jid in self.slices[k].jobs:
            s = self.slices[k]
            machines = s.jobs.pop(jid)
            s.free = s.free | machines
            if k > 0 and self.slices[k - 1].jobs == s.jobs:
                s.begin = self.slices[k - 1].begin
                del self.slices[k - 1]
                k -= 1
            k += 1
        if k < len(self.slices) and k > 0 and self.slices[k - 1].jobs == self.slices[k].jobs:
            self.slices[k].begin = self.slices[k - 1].begin
            del self.slices[k - 1]


def simulate_conservative_bf(jobs, m, rjms_delay=5):
    """{id: (start, end, final state, sorted machine ids)} of batsched conservative_bf on FCFS.

    batsched plans every job with its walltime + ``rjms_delay`` (src/json_workload.cpp, ``-d``, 5 s by
    default); Batsim still ends a job at its walltime.
    """
    jobs = sorted(jobs, key=lambda j: (j[1], j[0]))
    info = {j[0]: j for j in jobs}
    out = {}
    schedule = None
    queue: list = []  # job ids in FCFS order
    running_end: dict = {}  # id -> end date
    submits = sorted({j[1] for j in jobs})
    pending = list(jobs)
    while pending or running_end:
        candidates = []
        if pending:
            candidates.append(pending[0][1])
        if running_end:
            candidates.append(min(running_end.values()))
        now = min(candidates)
        ended = sorted(jid for jid, end in running_end.items() if end == now)
        released = []
        while pending and pending[0][1] == now:
            released.append(pending.pop(0))
        for jid in ended:
            del running_end[jid]
        if schedule is None:
            schedule = Schedule(m, now)
        for jid in ended:
            schedule.remove(jid)
        new = []
        for j in released:
            jid, _, procs, _, walltime = j
            if procs > m or walltime <= 0:
                out[jid] = (None, None, "REJECTED", [])
                continue
            queue.append(jid)
            new.append(jid)
        queue.sort(key=lambda jid: (info[jid][1], jid))
        schedule.update_first_slice(now)

        def started(jid, machines):
            _, _, procs, runtime, walltime = info[jid]
            end = now + min(runtime, walltime)
            state = "COMPLETED_SUCCESSFULLY" if runtime < walltime else "COMPLETED_WALLTIME_REACHED"
            out[jid] = (now, end, state, sorted(machines))
            running_end[jid] = end

        if not ended:
            for jid in new:
                _, _, procs, _, walltime = info[jid]
                _, machines, first = schedule.add_first_fit(jid, procs, walltime + rjms_delay)
                if first:
                    started(jid, machines)
                    queue.remove(jid)
        else:
            for jid in list(queue):
                _, _, procs, _, walltime = info[jid]
                if schedule.contains(jid):
                    schedule.remove(jid)
                _, machines, first = schedule.add_first_fit(jid, procs, walltime + rjms_delay)
                if first:
                    started(jid, machines)
                    queue.remove(jid)
    del submits
    return out
