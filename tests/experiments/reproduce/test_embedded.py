"""Studies 002 and 003 gather their campaigns' own reports: rebuilt from stored runs, headings one level down."""

from __future__ import annotations

import pytest
from bftune.experiments.campaign.config import load_config
from bftune.experiments.campaign.runner import run_campaign
from bftune.experiments.campaign.specs import CampaignError
from bftune.experiments.campaign.store import DirectoryLock
from bftune.experiments.reproduce.embedded import campaigns_report
from bftune.experiments.reproduce.study import CampaignPlan
from locations import REPO

TINY = REPO / "experiments" / "configs" / "tiny_synthetic_pv_easy.toml"


@pytest.mark.slow
def test_a_campaign_report_is_rebuilt_from_its_runs_and_demoted(tmp_path):
    out = tmp_path / "repro"
    directory = out / "campaigns" / "pv"
    run_campaign(load_config(TINY), directory, workers=1, progress=False)
    stored = (directory / "report.md").read_text()
    assert stored.startswith("# ")
    (directory / "report.md").unlink()  # --report-only must rebuild it from the runs, not read a stale copy
    text = campaigns_report(out, [CampaignPlan("pv", TINY.read_text()), CampaignPlan("missing", "")])
    assert (directory / "report.md").exists()
    assert text.startswith("## ") and "\n# " not in text
    assert "strict-fairness violation" in text  # the kind's own figures are there
    assert "## Campaign `missing`\n\nNot run yet" in text
    assert "](plots/" not in text and "](campaigns/pv/plots/" in text  # images point into the campaign's directory


@pytest.mark.slow
def test_a_campaign_in_use_is_not_rebuilt_under_it(tmp_path):
    """The rebuild takes the campaign's lock: while a campaign runs there, the report says so, as one error."""
    out = tmp_path / "repro"
    directory = out / "campaigns" / "pv"
    run_campaign(load_config(TINY), directory, workers=1, progress=False)
    before = (directory / "report.md").read_bytes()
    with DirectoryLock(directory), pytest.raises(CampaignError, match="in use"):
        campaigns_report(out, [CampaignPlan("pv", TINY.read_text())])
    assert (directory / "report.md").read_bytes() == before
