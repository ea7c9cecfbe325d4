"""The catalogue of Parallel Workloads Archive traces bftune knows by name: file, checksum, where to get it.

Why a catalogue: experiments name traces (``KTH-SP2``), not files or URLs,
and a trace that silently changed would silently change every result.  Each
entry pins the sha256 of the ``.swf.gz`` file where we know it; entries with
``sha256=None`` are *not pinned*: a download is accepted, but
:class:`~bftune.workloads.download.UnpinnedChecksumWarning` says so and gives
the checksum obtained, to be pinned here.  A pinned entry pins the file's size in
bytes too: a download stops as soon as a body grows past it (an endless body
would otherwise fill the disk before the checksum could refuse it); an
unpinned one is bounded by :data:`MAX_UNPINNED_BYTES`.

One entry, several spellings: the key (``kth_sp2``), the short name the
archive and the literature use (``KTH-SP2``), the archive's name of the file
(``KTH-SP2-1996-2.1-cln``) and the file name all find it (:func:`get_source`,
case-insensitive).  Where a trace lives on disk is the data directory's
business (:mod:`bftune.workloads.archive`); how it is fetched, the
downloader's (:mod:`bftune.workloads.download`).

URLs follow the archive's layout,
``https://www.cs.huji.ac.il/labs/parallel/workload/<dir>/<file>``, e.g.
``l_kth_sp2/KTH-SP2-1996-2.1-cln.swf.gz``; a ``base_url`` replaces the part
before ``<dir>`` (a mirror, or a local server in tests).

Please credit the archive and the trace contributors when publishing results
(the archive's pages name them).
"""

from __future__ import annotations

from dataclasses import dataclass

from bftune.workloads.errors import WorkloadError

PWA_BASE_URL = "https://www.cs.huji.ac.il/labs/parallel/workload/"
#: The most bytes a download of a trace without a pinned size may bring: the archive's cleaned ``.swf.gz``
#: files are a few MB (CEA-Curie's 312,826 jobs: 3.6 MB); 256 MiB is 60 times that, yet stops a body
#: that never ends long before a disk fills.
MAX_UNPINNED_BYTES = 256 * 1024 * 1024


@dataclass(frozen=True)
class TraceSource:
    """One archive trace: its names, where it lives in the archive and what it must hash to."""

    name: str  # catalogue key, e.g. "kth_sp2"
    short: str  # the name the archive and the literature use, e.g. "KTH-SP2"
    directory: str  # the archive's directory, e.g. "l_kth_sp2"
    filename: str  # e.g. "KTH-SP2-1996-2.1-cln.swf.gz"
    sha256: str | None  # of the .gz file; None = not pinned
    max_procs: int | None = None  # header MaxProcs, for information
    jobs: int | None = None  # records in the file, for information
    note: str = ""
    size: int | None = None  # bytes of the .gz file, pinned with its sha256; None = not pinned

    @property
    def stem(self) -> str:
        """File name without ``.swf.gz``: the trace's name in the archive."""
        return self.filename.removesuffix(".gz").removesuffix(".swf")

    def url(self, base_url: str | None = None) -> str:
        """The download URL, under ``base_url`` (default: the archive)."""
        base = (base_url or PWA_BASE_URL).rstrip("/") + "/"
        return f"{base}{self.directory}/{self.filename}"

    @property
    def max_bytes(self) -> int:
        """The most bytes a download of this trace may bring: its pinned size, else :data:`MAX_UNPINNED_BYTES`."""
        return self.size if self.size is not None else MAX_UNPINNED_BYTES


#: The known traces, by catalogue key.
CATALOGUE: dict[str, TraceSource] = {
    source.name: source
    for source in (
        TraceSource(
            "kth_sp2", "KTH-SP2", "l_kth_sp2", "KTH-SP2-1996-2.1-cln.swf.gz",
            "3e152f201fd2e96808a735bced6ea6eb0bb07fdc447689cafb0750d87b264c0b", 100, 28_476, size=411_455,
        ),
        TraceSource(
            "sdsc_sp2", "SDSC-SP2", "l_sdsc_sp2", "SDSC-SP2-1998-4.2-cln.swf.gz",
            "e03fe48be50c4ab04d6bb2285296d9c3399e9c1f27ee79b754ad32a14abd9bac", 128, 59_715, size=1_205_570,
        ),
        TraceSource(
            "ctc_sp2", "CTC-SP2", "l_ctc_sp2", "CTC-SP2-1996-3.1-cln.swf.gz",
            "9fa28ac16c4386fb81b72a91d8bd8888281df2948a9d912769d387c5ee285bb4", 338, 77_222, size=1_487_336,
            note="requested processors are -1 throughout: procs come from allocated processors",
        ),
        TraceSource(
            "hpc2n", "HPC2N", "l_hpc2n", "HPC2N-2002-2.2-cln.swf.gz",
            "3c534857d6065cfd9cc35aac8d064c9c17172be7acf336de835006f43a626e64", 240, 202_871, size=2_997_773,
        ),
        TraceSource(
            "sdsc_blue", "SDSC-BLUE", "l_sdsc_blue", "SDSC-BLUE-2000-4.2-cln.swf.gz",
            "9aab21f3cfa108f3ecefa52391b384d996dcf4216f920186f47a734646b2c658", 1152, 243_306, size=4_070_091,
        ),
        TraceSource(
            "cea_curie", "CEA-Curie", "l_cea_curie", "CEA-Curie-2011-2.1-cln.swf.gz",
            "2a0fdbd40837590b491bbbac7d4cfe521de1f0b14c0dc39bbf82c4e49ea75bce", 93_312, 312_826, size=3_629_411,
            note="MaxProcs 93312 is the whole machine (thin + fat + hybrid nodes)",
        ),
        TraceSource("anl_intrepid", "ANL-Intrepid", "l_anl_int", "ANL-Intrepid-2009-1.swf.gz", None),
        TraceSource("unilu_gaia", "UniLu-Gaia", "l_unilu_gaia", "UniLu-Gaia-2014-2.swf.gz", None),
        TraceSource("kit_fh2", "KIT-FH2", "l_kit_fh2", "KIT-FH2-2016-1.swf.gz", None),
        TraceSource("metacentrum_2013", "METACENTRUM", "l_metacentrum2", "METACENTRUM-2013-3.swf.gz", None),
    )
}  # fmt: skip


def trace_names() -> list[str]:
    """Catalogue keys, in catalogue order."""
    return list(CATALOGUE)


def find_source(name: str) -> TraceSource | None:
    """The entry for ``name`` in any of its spellings (module docstring), or None."""
    wanted = name.strip().lower()
    key = wanted.replace("-", "_")
    for source in CATALOGUE.values():
        if key in (source.name, source.short.lower().replace("-", "_")) or \
                wanted in (source.stem.lower(), source.filename.lower()):
            return source
    return None


def get_source(name: str) -> TraceSource:
    """The entry for ``name`` in any of its spellings; :class:`WorkloadError` listing the catalogue if unknown."""
    source = find_source(name)
    if source is None:
        raise WorkloadError(f"unknown trace {name!r}; known traces: "
                            f"{', '.join(s.short for s in CATALOGUE.values())}")
    return source


def short_name(label: str) -> str:
    """A trace's short name (``KTH-SP2``) from its file's label (``KTH-SP2-1996-2.1-cln``); other labels as given."""
    source = find_source(label)
    return label if source is None else source.short
