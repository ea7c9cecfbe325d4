"""What tune recommends from its numbers (issue 39): no change when the interval includes zero, and the
simplest of the candidates the numbers cannot tell apart."""

from __future__ import annotations

from dataclasses import dataclass, field

from bftune.experiments.tune import analysis
from bftune.experiments.tune.candidates import Candidate, baselines, build, complexity


def _pair(pr: str, pb: str, th: str) -> Candidate:
    return next(c for c in build(("pairs",), (pr, pb), (th,)) if c.options == {"policy": pr, "backfill_policy": pb,
                                                                               "threshold": th})


def test_complexity_counts_what_a_site_must_set_up():
    assert complexity(_pair("FCFS", "FCFS", "inf"))[0] == 0
    assert complexity(_pair("SPF", "SPF", "inf"))[0] == 1
    assert complexity(_pair("SPF", "SPF", "20h"))[0] == 2
    assert complexity(_pair("FCFS", "SPF", "inf"))[0] == 2  # a backfilling order of its own: Slurm cannot
    assert complexity(_pair("SPF", "LEXP", "20h"))[0] == 4
    assert complexity(build(("selectors",))[0])[0] == 5


@dataclass
class _Source:
    holdout: float = 0.0  # no validation period: the decisions of the race alone


@dataclass
class _Settings:
    objective: str = "avg_wait"
    max_wait_increase: float | None = None
    source: _Source = field(default_factory=_Source)


@dataclass
class _Race:
    candidates: list[Candidate]
    settings: _Settings = field(default_factory=_Settings)

    def __post_init__(self) -> None:
        self.baselines = baselines(self.candidates)

    def by_key(self) -> dict[str, Candidate]:
        return {c.key: c for c in [*self.candidates, *self.baselines.values()]}


def _row(c: Candidate, rank: int, train: float, low: float, test: float, test_low: float) -> dict:
    return {"key": c.key, "label": c.label, "rank": rank, "finalist": True, "train_gain": train,
            "train_interval": (low, train + 0.05), "test_gain": test, "test_interval": (test_low, test + 0.05)}


def _recommend(race: _Race, rows: list[dict], monkeypatch) -> dict:
    monkeypatch.setattr(analysis, "max_wait_risk", lambda race, c: {})
    monkeypatch.setattr(analysis, "fairness", lambda race, c: {})
    return analysis.recommend(race, rows)  # type: ignore[arg-type]


def test_the_simplest_of_the_tied_finalists_is_chosen_and_the_rule_said(monkeypatch):
    a, b, c = _pair("SPF", "LEXP", "20h"), _pair("SPF", "SPF", "20h"), _pair("SAF", "SAF", "inf")
    race = _Race([a, b, c])
    rows = [_row(a, 1, 0.244, 0.20, 0.24, 0.10), _row(b, 2, 0.243, 0.19, 0.23, 0.09),
            _row(c, 3, 0.150, 0.10, 0.15, 0.05)]  # c is outside a's interval: not tied
    rec = _recommend(race, rows, monkeypatch)
    assert rec["candidate"] == b and not rec["keep_baseline"]
    assert "simplest of the 2 finalists" in rec["why"] and "Slurm cannot run it unpatched" in rec["why"]


def test_the_best_is_kept_when_it_is_also_the_simplest(monkeypatch):
    a, b = _pair("SPF", "SPF", "inf"), _pair("SPF", "LEXP", "20h")
    rec = _recommend(_Race([a, b]), [_row(a, 1, 0.3, 0.2, 0.3, 0.1), _row(b, 2, 0.29, 0.2, 0.3, 0.1)], monkeypatch)
    assert rec["candidate"] == a and rec["why"].startswith("the lowest mean avg_wait ratio")


def test_an_interval_across_zero_keeps_the_current_setting(monkeypatch):
    a = _pair("SPF", "FCFS", "20h")
    rec = _recommend(_Race([a]), [_row(a, 1, 0.05, 0.01, 0.015, -0.062)], monkeypatch)
    assert rec["keep_baseline"] and rec["candidate"].label == "EASY-FCFS-FCFS"
    assert "includes zero: keep your current setting" in rec["why"] and "+1.5 %" in rec["why"]


def _swf(tmp_path, jobs: int, procs: int, change) -> str:
    """A synthetic log written as SWF, each job changed by ``change(job) -> fields``."""
    import dataclasses

    from bftune.workloads.swf_write import write_swf
    from bftune.workloads.synthetic import generate

    trace = generate(jobs, procs, seed=1)
    path = tmp_path / "log.swf"
    write_swf(trace.with_jobs([dataclasses.replace(j, **change(j)) for j in trace.jobs]), path)
    return str(path)


TUNE = ["--policies", "FCFS,SPF", "--weeks", "8", "--budget", "5m", "--workers", "1", "--no-progress"]


def test_a_log_without_requested_times_is_refused_at_once_with_the_remedy(tmp_path, capsys):
    """LLNL-Thunder: 80,197 of 121,039 records dropped (no requested times) and a 4-minute race of identical
    candidates; now one line, before any candidate runs, naming the remedy."""
    from bftune.experiments.cli.main import main

    log = _swf(tmp_path, 4000, 16, lambda j: {"walltime": -1} if j.id % 10 else {})
    assert main(["tune", "--trace", log, *TUNE, "--out", str(tmp_path / "o")]) == 2
    err = capsys.readouterr().err.strip().splitlines()
    assert len(err) == 1 and "walltime_le_0 3,600" in err[0] and "try --walltime-from-runtime" in err[0]
    assert not (tmp_path / "o" / "runs").exists()
    assert main(["tune", "--trace", log, "--walltime-from-runtime", *TUNE, "--out", str(tmp_path / "o")]) == 0


def test_a_machine_without_a_queue_is_refused(tmp_path, capsys):
    from bftune.experiments.cli.main import main

    log = _swf(tmp_path, 3000, 16, lambda j: {"procs": 1, "runtime": 60, "walltime": 120})
    assert main(["tune", "--trace", log, *TUNE, "--out", str(tmp_path / "o")]) == 2
    err = capsys.readouterr().err
    assert "this machine has no queue to tune" in err and len(err.strip().splitlines()) == 1


def test_the_data_line_comes_first_on_the_terminal(tmp_path, capsys):
    from bftune.experiments.cli.main import main

    log = _swf(tmp_path, 4000, 16, lambda j: {"walltime": -1} if j.id % 2 == 0 and j.id % 3 == 0 else {})
    assert main(["tune", "--trace", log, *TUNE, "--out", str(tmp_path / "o")]) == 0
    err = capsys.readouterr().err.splitlines()
    assert err[1].startswith("data: 3,334 jobs kept of 4,000 records (83%)") and "walltime_le_0 666" in err[1]


def test_every_candidate_is_said_in_words():
    from bftune.experiments.tune.candidates import sentence

    assert sentence(_pair("SQF", "SPF", "20h")) == (
        "EASY backfilling; the queue fewest requested processors first, and backfilling tries the waiting jobs "
        "shortest requested time first; a job waiting longer than 20h goes to the head of the queue.")
    assert sentence(baselines(build(("pairs",)))[0]) == (
        "EASY backfilling; the queue in submission order, and backfilling tries the waiting jobs in the same order.")
    for c in build(("pairs", "selectors", "pv-easy", "classifier")):
        assert sentence(c).endswith(".") and len(sentence(c)) > 40


def test_the_worst_user_is_named_as_the_log_names_it():
    class Named:
        data = {"user_names": {62: "user64"}}

    class Numbered:
        data: dict = {}

    worst = (6.9, 8162.0, 62, 24)
    assert analysis._worst_user(Named(), worst)["name"] == "user64"  # type: ignore[arg-type]
    assert "name" not in analysis._worst_user(Numbered(), worst)  # type: ignore[arg-type]
