"""``--shard PARTS/N``: one machine's part of a campaign, for machines that share no Dask scheduler.

A researcher with a laptop, a workstation and a batch node splits one
campaign among them: each runs ``--shard K/N`` (or several parts, ``0-9/16``,
``10,12/16``: a faster machine takes more of them) into its own directory,
then the run files are copied into one directory (``runs/*.json``; a run's
file name is its ``run_id``, which does not depend on the machine when the
traces sit at the same absolute path) and the same command without
``--shard`` finds them all stored and writes the tables.

Runs are dealt round-robin in the campaign's order, so every part gets the
same mix of cheap and costly runs; runs that share period replays (a kind's
``replay_group``: full and noisy feedback on one resampled trace) go to the
same part, which keeps what sharing saves.  The split depends only on the
config, never on what is stored, so a part that is run again, or resumed,
selects the same runs.
"""

from __future__ import annotations

from dataclasses import dataclass

from bftune.experiments.campaign.kinds import get_kind
from bftune.experiments.campaign.specs import CampaignError, RunSpec

#: More parts than this would leave most of them empty for any campaign of a realistic size (hundreds to
#: tens of thousands of runs).
MAX_PARTS = 10_000


@dataclass(frozen=True)
class Shard:
    """The parts ``parts`` of a campaign dealt into ``count`` parts."""

    parts: frozenset[int]
    count: int

    @classmethod
    def parse(cls, text: str) -> Shard:
        """``K/N``, ``A-B/N`` or a comma list of both (``0-9,12/16``); parts count from 0."""
        why = "give PARTS/N: part numbers from 0 to N-1, e.g. 0/2, 0-9/16 or 3,5/8"
        head, slash, tail = text.strip().partition("/")
        try:
            count = int(tail)
        except ValueError:
            raise CampaignError(f"--shard {text!r}: {why}") from None
        if not slash or not 1 <= count <= MAX_PARTS:
            raise CampaignError(f"--shard {text!r}: N must be 1 to {MAX_PARTS:,}; {why}")
        parts: set[int] = set()
        for item in head.split(","):
            first, dash, last = item.strip().partition("-")
            try:
                low = int(first)
                high = int(last) if dash else low
            except ValueError:
                raise CampaignError(f"--shard {text!r}: {item.strip()!r} is not a part number or range; {why}") from None
            if not 0 <= low <= high < count:
                raise CampaignError(f"--shard {text!r}: parts {item.strip()} are not within 0 to {count - 1}; {why}")
            parts.update(range(low, high + 1))
        return cls(frozenset(parts), count)

    def select(self, specs: list[RunSpec]) -> list[RunSpec]:
        """The runs of these parts, in the campaign's order."""
        index: dict[object, int] = {}
        chosen = []
        for spec in specs:
            group = _group(spec)
            part = index.setdefault(group, len(index)) % self.count
            if part in self.parts:
                chosen.append(spec)
        return chosen

    def describe(self) -> str:
        ranges: list[list[int]] = []
        for part in sorted(self.parts):
            if ranges and ranges[-1][1] == part - 1:
                ranges[-1][1] = part
            else:
                ranges.append([part, part])
        text = ",".join(str(a) if a == b else f"{a}-{b}" for a, b in ranges)
        return f"shard {text}/{self.count}"


def _group(spec: RunSpec) -> object:
    """What goes to one part together: the run's replay group, else the run alone."""
    replay_group = get_kind(spec.kind).replay_group
    group = replay_group(spec) if replay_group is not None else None
    return ("run", spec.run_id) if group is None else ("replays", group)
