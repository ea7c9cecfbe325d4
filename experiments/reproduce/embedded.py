"""Studies whose report is their campaigns' own reports (study 002).

Their campaign kinds (``index``) already set every published
figure beside ours, with the gaps explained, in each campaign's
``report.md``; a reproduction rebuilds those reports from the stored runs
(so ``--report-only`` sees every run stored since; the same rebuild as
``bftune campaign --report-only``, lock included) and gathers them under
one heading per campaign, headings moved one level down.
"""

from __future__ import annotations

from pathlib import Path

from bftune.experiments.campaign.command import report_only
from bftune.experiments.reproduce.study import CampaignPlan


def campaigns_report(out: Path, plans: list[CampaignPlan]) -> str:
    """The reports of ``plans``' campaigns under ``out/campaigns``, rebuilt from their stored runs."""
    parts = []
    for plan in plans:
        directory = out / "campaigns" / plan.name
        if not (directory / "campaign.json").exists():
            parts.append(f"## Campaign `{plan.name}`\n\nNot run yet (no runs stored in `campaigns/{plan.name}/`).")
            continue
        path = report_only(str(directory))  # under the campaign's lock, as `bftune campaign --report-only`
        parts.append(_demote(path.read_text(), plan.name))
    return "\n\n".join(parts)


def _demote(text: str, name: str) -> str:
    """One heading level down, the campaign report's title naming the campaign; images relative to ``out``."""
    lines = []
    for line in text.splitlines():
        if line.startswith("#"):
            line = "#" + line
        lines.append(line.replace("](plots/", f"](campaigns/{name}/plots/"))
    return "\n".join(lines).strip()
