"""Study 000's Tables 1-2: how far ours and the study's simulator lie apart, said from the stored simulations."""

from __future__ import annotations

import json

from bftune.experiments.studies.s000 import report, tables12


def test_the_spread_between_the_simulators_is_stated_not_called_small(tmp_path):
    folder = tmp_path / "tables12"
    folder.mkdir()
    for policy, ours, ocs in (("SPF", (2745.4, 960457), (2784.9, 661280)), ("FCFS", (3913.6, 167736),
                                                                           (3974.7, 176090))):
        (folder / f"CTC-SP2_{policy}_bftune.json").write_text(json.dumps({"avg_wait": ours[0], "max_wait": ours[1]}))
        (folder / f"CTC-SP2_{policy}_ocs.json").write_text(json.dumps({"avg_wait": ocs[0], "max_wait": ocs[1]}))
    text = tables12.section(tmp_path)
    assert ("Ours against ocst: AvgWait -1.5 to -1.4 %, MaxWait -4.7 to +45.2 % (most on CTC-SP2 EASY-SPF: 960,457 s "
            "against 661,280 s).") in text
    assert "small differences" not in text
    assert ("ours against ocst on Tables 1-2:\n  AvgWait -1.5 to -1.4 %, MaxWait -4.7 to +45.2 %"
            in report.report(tmp_path, "paper", None))
    assert tables12.simulators(tmp_path / "none") == ""
