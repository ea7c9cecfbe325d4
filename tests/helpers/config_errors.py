"""Loading a bad campaign config, for the tests of every campaign kind."""

from __future__ import annotations

from pathlib import Path

import pytest
from bftune.experiments.campaign.config import load_config
from bftune.experiments.campaign.specs import CampaignError


def config_error(folder: Path, text: str) -> str:
    """The one-line error that loading the campaign TOML ``text`` gives (it must name the file)."""
    path = folder / "bad.toml"
    path.write_text(text)
    with pytest.raises(CampaignError) as info:
        load_config(path)
    assert str(path) in str(info.value)
    return str(info.value)
