"""Campaign configs (issue 4): validation errors name file and key; the shipped configs expand as the studies say."""

from __future__ import annotations

import pytest
from config_errors import config_error
from bftune.experiments.campaign.config import load_config
from bftune.experiments.campaign.paths import CONFIG_DIR
from locations import SHARED

KTH = SHARED / "workloads" / "KTH-SP2-1996-2.1-cln.swf.gz"
needs_kth = pytest.mark.skipif(not KTH.exists(), reason=f"{KTH} is not available (the ../shared checkout is missing)")


BAD_CONFIGS = [
    ("[workload]\ntrace = 'synthetic:10:4'\n", "[campaign]"),
    ("[campaign]\nname = 'x'\n[workload]\ntrace = 'synthetic:10:4'\n", "[campaign] kind"),
    ("[campaign]\nkind = 'sideways'\n[workload]\ntrace = 'synthetic:10:4'\n", "[campaign] kind"),
    ("[campaign]\nkind = 'online'\nseed = 'abc'\n[workload]\ntrace = 'synthetic:10:4'\n", "[campaign] seed"),
    ("[campaign]\nkind = 'online'\n[workload]\ntrace = 'nowhere/none.swf'\n", "[workload] trace"),
    ("[campaign]\nkind = 'online'\n[workload]\ntrace = 'synthetic:ten:4'\n", "[workload] trace"),
    ("[campaign]\nkind = 'online'\n[workload]\ntrace = 'synthetic:10:4'\n[online]\nresample = 3\n",
     "[online] resample: unknown key"),
    ("[campaign]\nkind = 'online'\n[workload]\ntrace = 'synthetic:10:4'\n[online]\nresamples = 0\n",
     "[online] resamples"),
    ("[campaign]\nkind = 'online'\n[workload]\ntrace = 'synthetic:10:4'\n[online]\nfixed = ['FCFS', 'NOPE']\n",
     "[online] fixed: unknown policy 'NOPE'"),
    ("[campaign]\nkind = 'online'\n[workload]\ntrace = 'synthetic:10:4'\n[online]\ncandidates = ['SPF', 'spf']\n",
     "[online] candidates"),
    ("[campaign]\nkind = 'online'\n[workload]\ntrace = 'synthetic:10:4'\n[online]\nselectors = ['fixed']\n",
     "[online] selectors"),
    ("[campaign]\nkind = 'online'\n[workload]\ntrace = 'synthetic:10:4'\n[online]\nepsilon = 2.0\n",
     "[online] epsilon"),
    ("[campaign]\nkind = 'online'\n[workload]\ntrace = 'synthetic:10:4'\n[online]\nperiods = ['1 fortnight']\n",
     "[online] periods"),
    ("[campaign]\nkind = 'online'\n[workload]\ntrace = 'synthetic:10:4'\n[offline]\nweeks = 3\n",
     "[top level] offline"),
    ("[campaign]\nkind = 'offline'\n[workload]\ntrace = 'synthetic:10:4'\n[offline]\nthresholds = ['soon']\n",
     "[offline] thresholds"),
    ("[campaign]\nkind = 'offline'\n[workload]\ntrace = 'synthetic:10:4'\n[offline]\nweeks = 2.5\n",
     "[offline] weeks"),
    ("[campaign]\nkind = 'offline'\n[workload]\ntrace = 'synthetic:10:4'\n[offline]\nsplits = ['validation']\n",
     "[offline] splits"),
    ("[campaign]\nkind = 'offline'\n[workload]\ntrace = 'synthetic:10:4'\n[offline]\nreservation = 'maybe'\n",
     "[offline] reservation"),
    ("[campaign\nkind = 'offline'\n", "not valid TOML"),
]


@pytest.mark.parametrize("text,expected", BAD_CONFIGS, ids=[e for _, e in BAD_CONFIGS])
def test_config_errors_name_file_and_key(tmp_path, text, expected):
    assert expected in config_error(tmp_path, text)


def test_cli_reports_config_error_and_exit_code(tmp_path, capsys):
    from bftune.experiments.cli.main import main

    path = tmp_path / "bad.toml"
    path.write_text("[campaign]\nkind = 'online'\n[workload]\ntrace = 'synthetic:10:4'\n[online]\nfixed = ['NOPE']\n")
    assert main(["campaign", str(path), "--out", str(tmp_path / "out")]) == 2
    err = capsys.readouterr().err
    assert "bad.toml: [online] fixed" in err and "NOPE" in err
    assert not (tmp_path / "out").exists()


@needs_kth
def test_shipped_configs_expand_to_the_paper_campaigns():
    offline = load_config(CONFIG_DIR / "offline_tuning.toml")
    assert offline.kind == "offline"
    # 49 pairs x 5 thresholds x 2 halves; the baseline FCFS-FCFS none is one of them
    assert len(offline.specs) == 49 * 5 * 2
    assert sum(s.labels["baseline"] for s in offline.specs) == 2
    assert {s.labels["split"] for s in offline.specs} == {"train", "test"}
    assert {s.weeks for s in offline.specs} == {250}
    assert len({s.run_id for s in offline.specs}) == len(offline.specs)
    # one resampling per half: every run of a half shares its seed
    assert len({(s.split, s.resample_seed) for s in offline.specs}) == 2

    online = load_config(CONFIG_DIR / "online_selection.toml")
    assert online.kind == "online"
    per_trace = 12 + 4 * 2
    assert len(online.specs) == 60 * per_trace
    assert {s.weeks for s in online.specs} == {104}
    strategies = online.settings["strategies"]
    assert strategies[:12] == ["FCFS", "LCFS", "SPF", "LPF", "SQF", "LQF", "LEXP", "SEXP", "LRF", "SRF", "LAF", "SAF"]
    assert set(strategies[12:]) == {f"{s}/{p}" for s in ("random", "full", "noisy", "bandit") for p in ("1d", "1w")}
    assert all(s.options["threshold"] == "40h" for s in online.specs)
    base = [s for s in online.specs if s.labels["baseline"]]
    assert len(base) == 60 and all(s.options["policy"] == "FCFS" and "selector" not in s.options for s in base)
    assert len({s.resample_seed for s in online.specs}) == 60

    quick = load_config(CONFIG_DIR / "online_selection_quick.toml")
    assert len(quick.specs) == 3 * per_trace


@pytest.mark.slow
def test_a_shipped_config_is_found_by_name_and_listed(tmp_path, capsys, monkeypatch):
    from bftune.experiments.cli.main import main

    monkeypatch.chdir(tmp_path)  # not the checkout: the name is looked up among the package's own configs
    assert main(["campaign", "--list"]) == 0
    listed = capsys.readouterr().out
    assert "tiny_synthetic_offline" in listed and "2 x 2 pairs" in listed
    assert main(["campaign", "tiny_synthetic_offline", "--out", "c", "--workers", "1", "--no-progress"]) == 0
    assert "16 runs done" in capsys.readouterr().out and (tmp_path / "c" / "summary_offline.csv").is_file()
    assert main(["campaign", "no_such_config", "--out", "d"]) == 2
    err = capsys.readouterr().err.strip()
    assert err.startswith("bftune: error: no_such_config: no such file, nor a shipped config (shipped: ")
    assert "\n" not in err and "tiny_synthetic_offline" in err and not (tmp_path / "d").exists()
