"""Where things are, for every test: the checkout, ../shared and its parts."""

from pathlib import Path

TESTS = Path(__file__).resolve().parents[1]
REPO = TESTS.parent
SHARED = REPO.parent / "shared"
SHARED_WORKLOADS = SHARED / "workloads"
SHARED_BATSIM = SHARED / "batsim"
TRANSCRIPTS = SHARED_BATSIM / "transcripts"
KTH = SHARED_WORKLOADS / "KTH-SP2-1996-2.1-cln.swf.gz"
CTC = SHARED_WORKLOADS / "CTC-SP2-1996-3.1-cln.swf.gz"
