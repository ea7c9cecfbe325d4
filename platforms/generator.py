"""Zero-latency Batsim platforms whose resource ids equal the host numbers.

Why not reuse Batsim's recorded ``zero_lat_100.xml`` platform: it declares its
hosts with ``<cluster prefix="h" radical="0-99">``, i.e. ``h0 .. h99``, and
Batsim numbers compute resources in *lexicographic* order of host name, so
there resource 2 is ``h10``, not ``h2``.  A SimGrid ``radical`` cannot
zero-pad, so we declare the hosts one by one, zero-padded to
``width = len(str(m - 1))`` digits (``h00 .. h99`` for m = 100, ``h0 .. h9``
for m = 10): string order is then numeric order and resource i is host
``h<i>`` (docs/semantics/scheduling.md#batsim-semantics).

What is generated (SimGrid 3.32, platform DTD v4.1), checked by loading it
with libsimgrid 3.32:

- one zone ``AS0`` with ``routing="Cluster"`` (SimGrid's star/cluster model:
  what ``<cluster>`` expands to), holding the m compute hosts and the master
  host ``master_host0`` (``<prop id="role" value="master"/>``, Batsim's
  server; not a compute resource);
- every host at 1 Gflop/s with its own split-duplex link (``<host_link>``)
  and one ``<backbone>``; every link 1 TBps with latency 0.

So the route between two hosts is host link UP -> backbone -> host link DOWN,
as in the shared file (there: compute link UP -> ``backbone`` -> master link
DOWN), with the same speed, bandwidth and zero latency.  Zero latency keeps
every Batsim time an exact integer; jobs are ``delay`` profiles, so the
network plays no other part.
"""

from __future__ import annotations

import os
import re
import sys
import xml.etree.ElementTree as ET
from pathlib import Path
from xml.sax.saxutils import quoteattr

from bftune.support.files import atomic_write_text
from bftune.workloads import limits

MASTER_HOST = "master_host0"
HOST_PREFIX = "h"

_HEADER = """<?xml version='1.0'?>
<!DOCTYPE platform SYSTEM "https://simgrid.org/simgrid.dtd">
<platform version="4.1">
"""


def host_width(m: int) -> int:
    """Digits of the zero-padded host numbers for m hosts: ``len(str(m - 1))``, at least 1."""
    _check_m(m)
    return max(1, len(str(m - 1)))


def host_names(m: int, prefix: str = HOST_PREFIX) -> list[str]:
    """Names of the m compute hosts; index i is Batsim resource id i (``h00`` .. ``h99`` for m = 100)."""
    width = host_width(m)
    return [f"{prefix}{i:0{width}d}" for i in range(m)]


def platform_xml(
    m: int,
    *,
    prefix: str = HOST_PREFIX,
    speed: str = "1Gf",
    bandwidth: str = "1TBps",
    latency: str = "0",
) -> str:
    """The platform XML text for ``m`` compute hosts plus the master host."""
    names = host_names(m, prefix)
    if MASTER_HOST in names:
        raise ValueError(f"host prefix {prefix!r} would clash with the master host {MASTER_HOST!r}")
    lines = [_HEADER.rstrip("\n"), '<zone id="AS0" routing="Cluster">']
    for name in names:
        lines.extend(_host(name, speed, bandwidth, latency))
    lines.extend(_host(MASTER_HOST, speed, bandwidth, latency, role="master"))
    lines.append(f'    <backbone id="backbone" bandwidth={quoteattr(bandwidth)} latency={quoteattr(latency)} />')
    lines.append("</zone>")
    lines.append("</platform>")
    return "\n".join(lines) + "\n"


def write_platform(m: int, path: str | os.PathLike[str], **options: str) -> Path:
    """Write :func:`platform_xml` for ``m`` hosts to ``path`` atomically; returns the path."""
    return atomic_write_text(path, platform_xml(m, **options))


def batsim_resource_order(names: list[str]) -> list[str]:
    """Compute host names in Batsim resource-id order (lexicographic, byte-wise)."""
    return sorted(names, key=lambda name: name.encode("utf-8"))


def compute_hosts(path: str | os.PathLike[str]) -> list[str]:
    """Compute hosts of a platform file in Batsim resource-id order (index = resource id).

    Understands explicit ``<host>`` elements and ``<cluster prefix radical
    suffix>`` shorthands (so it also reads the shared platforms, where it
    returns ``h0, h1, h10, h11, ...``).  Hosts whose ``role`` property is
    ``master`` (or ``storage``) are not compute resources.
    """
    root = ET.parse(path).getroot()
    names: list[str] = []
    for element in root.iter():
        if element.tag == "host":
            if _role(element) not in ("master", "storage"):
                names.append(element.attrib["id"])
        elif element.tag == "cluster":
            if _role(element) in ("master", "storage"):
                continue
            prefix, suffix = element.attrib.get("prefix", ""), element.attrib.get("suffix", "")
            names.extend(f"{prefix}{i}{suffix}" for i in _radical(element.attrib["radical"]))
    return batsim_resource_order(names)


def _host(name: str, speed: str, bandwidth: str, latency: str, role: str | None = None) -> list[str]:
    link = f"{name}_link"
    out = [f"    <host id={quoteattr(name)} speed={quoteattr(speed)}" + (">" if role else " />")]
    if role:
        out.append(f'        <prop id="role" value={quoteattr(role)} />')
        out.append("    </host>")
    out.append(
        f"    <link id={quoteattr(link)} bandwidth={quoteattr(bandwidth)} latency={quoteattr(latency)}"
        ' sharing_policy="SPLITDUPLEX" />'
    )
    out.append(f"    <host_link id={quoteattr(name)} up={quoteattr(link + '_UP')} down={quoteattr(link + '_DOWN')} />")
    return out


def _role(element: ET.Element) -> str | None:
    for prop in element.findall("prop"):
        if prop.attrib.get("id") == "role":
            return prop.attrib.get("value")
    return None


def _radical(radical: str) -> list[int]:
    values: list[int] = []
    for part in radical.split(","):
        match = re.fullmatch(r"\s*(\d+)\s*(?:-\s*(\d+)\s*)?", part)
        if match is None:
            raise ValueError(f"cannot read cluster radical {radical!r}")
        lo = int(match.group(1))
        hi = int(match.group(2)) if match.group(2) is not None else lo
        values.extend(range(lo, hi + 1))
    return values


def _check_m(m: int) -> None:
    if isinstance(m, bool) or not isinstance(m, int) or m < 1:
        raise ValueError(f"the number of compute hosts must be a positive integer, not {m!r}")
    limits.procs(m, "the number of compute hosts")


def main(argv: list[str] | None = None) -> int:
    """``python -m bftune.platforms.generator M PATH``: regenerate a shipped platform file."""
    args = sys.argv[1:] if argv is None else argv
    if len(args) != 2:
        print("usage: python -m bftune.platforms.generator M PATH", file=sys.stderr)
        return 2
    write_platform(int(args[0]), args[1])
    return 0


if __name__ == "__main__":
    raise SystemExit(main())
