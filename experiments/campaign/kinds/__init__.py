"""The registry of campaign kinds: one module per kind, one line per kind in :data:`KINDS`.

To add a kind, see the package docstring of ``bftune.experiments.campaign``.
"""

from __future__ import annotations

from bftune.experiments.campaign.kinds import classification, index, offline, online, pveasy
from bftune.experiments.campaign.kinds.kind import CampaignKind
from bftune.experiments.campaign.specs import CampaignError

#: Every kind, by its ``[campaign] kind`` name, in the order the docs list them.
KINDS: dict[str, CampaignKind] = {kind.name: kind for kind in (
    offline.KIND,
    online.KIND,
    classification.KIND,
    index.KIND,
    pveasy.KIND,
)}


def get_kind(name: str) -> CampaignKind:
    """The kind called ``name``; a :class:`CampaignError` listing the kinds otherwise."""
    try:
        return KINDS[name]
    except KeyError:
        raise CampaignError(f"unknown campaign kind {name!r}; kinds: {', '.join(KINDS)}") from None
