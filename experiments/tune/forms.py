"""The recommended configuration in every form bftune accepts, made from the option table.

- ``bftune simulate`` flags: each option's flag (``OPTIONS[name].cli``), the
  boolean ones as the flag that sets them (``--no-backfilling``);
- pybatsim's ``-o`` JSON: the options by their option-table names;
- a campaign TOML that judges it again beside EASY-FCFS-FCFS on the same
  trace: for EASY pairs an offline campaign with the same seed (the same
  resampled weeks, every week of both halves), for the other families their
  campaign kind;
- ``recommendation.json`` (written by ``outputs.py``) holds the options too.

Every option is named as the option table names it; nothing here lists options.
"""

from __future__ import annotations

import json
import shlex

from bftune.experiments.tune.candidates import Candidate, normalised
from bftune.experiments.tune.engine import Settings
from bftune.schedulers.options import OPTIONS
from bftune.workloads.cleaning import CLEANINGS


def simulate_flags(c: Candidate) -> list[str]:
    """The candidate's options as ``bftune simulate`` flags."""
    out: list[str] = []
    for name, value in normalised(c.options).items():
        option = OPTIONS[name]
        if option.cli is None:
            raise ValueError(f"option {name} has no command-line flag")  # every tune option has one
        if isinstance(option.default, bool):
            if value == option.cli_value:
                out.append(option.cli)
            continue
        out += [option.cli, ",".join(value) if isinstance(value, list) else str(value)]
    return out


def workload_flags(s: Settings) -> list[str]:
    """The flags that read the trace as tune read it."""
    src = s.source
    if src.trace.startswith("synthetic:"):
        n, m, seed = src.trace.split(":")[1:]
        return ["--synthetic", n, "--procs", m, "--seed", seed]  # tune's --seed: the trace's and the weeks'

    out = ["--trace", src.path or src.trace]
    if src.procs is not None:
        out += ["--procs", str(src.procs)]
    if src.cleaning != CLEANINGS[0]:
        out += ["--cleaning", src.cleaning]
    if src.timezone is not None:
        out += ["--timezone", src.timezone]
    for key, value in src.dump:
        flag = "--partition" if key == "partitions" else "--" + key.replace("_", "-")
        out += [flag, ",".join(value) if isinstance(value, tuple) else str(value)]
    if src.lenient:
        out.append("--lenient")
    if src.walltime_from_runtime:
        out.append("--walltime-from-runtime")
    return out


def tune_command(s: Settings) -> str:
    """The ``bftune tune`` command that makes (and resumes) this run."""
    share = "none" if s.max_wait_increase is None else f"{100 * s.max_wait_increase:g}%"
    return shlex.join(["bftune", "tune", *workload_flags(s), "--objective", s.objective, "--max-wait-increase",
                       share, "--budget", f"{s.budget_s:g}s", "--candidates", ",".join(s.families), "--policies",
                       ",".join(s.policies), "--thresholds", ",".join(s.thresholds), "--weeks", str(s.max_weeks),
                       "--finalists", str(s.finalists), "--seed", str(s.seed), "--tau", f"{s.tau:g}",
                       *(["--slurm-conf", s.site_path] if s.site_path else []),
                       *(["--later-weeks", str(s.later_weeks)] if s.later_weeks else []), "--out", str(s.out)])


def flags_text(s: Settings, c: Candidate) -> str:
    """simulate_flags.txt: the configuration's flags and tau, nothing of the trace, so that
    ``bftune simulate $(cat simulate_flags.txt) --trace OTHER`` (or ``bftune batsim ...``) runs it on any log."""
    return shlex.join([*simulate_flags(c), "--tau", f"{s.tau:g}"])


def simulate_command(s: Settings, c: Candidate) -> str:
    return shlex.join(["bftune", "simulate", *workload_flags(s), *simulate_flags(c), "--tau", f"{s.tau:g}",
                       "--out", "results/recommended"])


def pybatsim_options(c: Candidate) -> dict:
    """pybatsim's ``-o`` JSON (``pybatsim schedulers/bftuneEasy.py -o '...'``)."""
    return normalised(c.options)


def pybatsim_command(c: Candidate) -> str:
    return shlex.join(["pybatsim", "schedulers/bftuneEasy.py", "-o", json.dumps(pybatsim_options(c))])


def _toml_value(value) -> str:
    if isinstance(value, bool):
        return "true" if value else "false"
    if isinstance(value, (int, float)):
        return repr(value)
    if isinstance(value, (list, tuple)):
        return "[" + ", ".join(_toml_value(v) for v in value) + "]"
    return json.dumps(str(value))


def _workload_section(s: Settings, keys: bool = True) -> list[str]:
    src = s.source
    lines = ["[workload]"]
    if keys:
        lines.append(f"trace = {_toml_value(src.path or src.trace)}")
        if src.procs is not None:
            lines.append(f"procs = {src.procs}")
    if src.cleaning != CLEANINGS[0]:
        lines.append(f"cleaning = {_toml_value(src.cleaning)}")
    if src.timezone is not None:
        lines.append(f"timezone = {_toml_value(src.timezone)}")
    for key, value in src.dump:
        lines.append(f"{key.replace('partitions', 'partition')} = "
                     f"{_toml_value(list(value) if isinstance(value, tuple) else value)}")
    if src.holdout:
        lines.append(f"holdout = {src.holdout!r}  # tune's validation period, left out as tune left it out")
    if src.lenient:
        lines.append("lenient = true")
    if src.walltime_from_runtime:
        lines.append("walltime_from_runtime = true")
    return lines


def campaign_toml(s: Settings, c: Candidate, weeks: int) -> str:
    """A campaign config judging ``c`` beside EASY-FCFS-FCFS (module docstring)."""
    head = ["# Judge the recommendation again with `bftune campaign THIS.toml --out DIR` (written by bftune tune).",
            f"# The recommended options (option-table names): {json.dumps(pybatsim_options(c))}", "",
            "[campaign]"]
    name = f"tune_{s.name}".replace('"', "")
    options = normalised(c.options)
    if options.get("scheduler") == "slurm":  # no campaign kind runs a Slurm setting: say how to judge it again
        return "\n".join([
            "# bftune tune recommends a Slurm setting (written by bftune tune); no campaign kind runs --scheduler slurm",
            f"# yet. Judge it again on the whole log with: {simulate_command(s, c)}",
            f"# or race it again with: {tune_command(s)}",
            f"# The options (option-table names): {json.dumps(pybatsim_options(c))}"]) + "\n"
    if c.family in ("pairs", "baseline"):
        primary = options.get("policy", "FCFS")
        backfill = options.get("backfill_policy", primary)
        threshold = options.get("threshold", "none")
        policies = list(dict.fromkeys([primary, backfill, "FCFS"]))
        return "\n".join(head + [
            'kind = "offline"', f"name = {_toml_value(name)}", f"seed = {s.seed}", f"tau = {s.tau:g}", "",
            *_workload_section(s), "",
            "# the same seed: the same resampled weeks as bftune tune, every week of both halves",
            "[offline]", f"policies = {_toml_value(policies)}", f"thresholds = {_toml_value([threshold])}",
            f"weeks = {weeks}", 'splits = ["train", "test"]', 'baseline = ["FCFS", "FCFS"]']) + "\n"
    if c.family == "selectors":
        return "\n".join(head + [
            'kind = "online"', f"name = {_toml_value(name)}", f"seed = {s.seed}", f"tau = {s.tau:g}", "",
            *_workload_section(s), "",
            "# a longer judgement: whole resampled two-year traces (the online campaign's protocol)",
            "[online]", "resamples = 10", "weeks = 104", f"threshold = {_toml_value(options['threshold'])}",
            'fixed = ["FCFS"]', f"selectors = {_toml_value([options['selector']])}",
            f"periods = {_toml_value([options['period']])}", 'baseline = "FCFS"']) + "\n"
    trace = s.source.path or s.source.trace
    if c.family == "pv-easy":
        scheduler = "PV-EASY" if options.get("scheduler") == "pv-easy" else "EASY-Last"
        return "\n".join(head + [
            'kind = "pv-easy"', f"name = {_toml_value(name)}", f"tau = {s.tau:g}", "",
            *_workload_section(s, keys=False), "",
            "# the whole trace (the PV-EASY campaign's protocol), beside EASY", "[pv-easy]",
            f"traces = {_toml_value([trace])}", f"schedulers = {_toml_value(['EASY', scheduler])}",
            *([f"procs = [{s.source.procs}]"] if s.source.procs else []),
            f"cleaning = {_toml_value(s.source.cleaning)}"]) + "\n"
    return "\n".join(head + [
        'kind = "classification"', f"name = {_toml_value(name)}", f"seed = {s.seed}", f"tau = {s.tau:g}", "",
        *_workload_section(s, keys=False), "",
        "# the whole trace (the classification campaign's protocol), beside plain EASY with the same policy",
        "[classification]", f"traces = {_toml_value([trace])}",
        f"policies = {_toml_value([options.get('policy', 'FCFS')])}", 'variants = ["base", "rf"]']) + "\n"
