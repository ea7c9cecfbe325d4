"""Zero-latency platform generator (bftune.platforms.generator)."""

from __future__ import annotations

import ctypes.util
import json
import subprocess
import sys
import xml.etree.ElementTree as ET

import pytest
from bftune.platforms.generator import (
    MASTER_HOST,
    batsim_resource_order,
    compute_hosts,
    host_names,
    host_width,
    platform_xml,
    write_platform,
)
from locations import REPO, SHARED

PLATFORMS = REPO / "platforms"
SHARED_PLATFORMS = SHARED / "batsim" / "platforms"


@pytest.mark.parametrize(
    "m, width, first, last",
    [(1, 1, "h0", "h0"), (10, 1, "h0", "h9"), (11, 2, "h00", "h10"), (100, 2, "h00", "h99"), (1001, 4, "h0000", "h1000")],
)
def test_names_are_zero_padded(m, width, first, last):
    names = host_names(m)
    assert host_width(m) == width
    assert (names[0], names[-1], len(names)) == (first, last, m)
    assert len(set(names)) == m


@pytest.mark.parametrize("m", [1, 2, 9, 10, 11, 16, 99, 100, 101, 1000, 1024])
def test_lexicographic_order_is_id_order(m):
    names = host_names(m)
    ordered = batsim_resource_order(names)
    assert all(ordered.index(name) == i for i, name in enumerate(names))
    assert sorted(names) == names


def test_bad_sizes_rejected():
    for bad in (0, -3, 2.0, True):
        with pytest.raises(ValueError):
            host_names(bad)  # type: ignore[arg-type]
    with pytest.raises(ValueError, match="clash"):
        platform_xml(4, prefix="master_host")


def test_xml_structure(tmp_path):
    path = write_platform(16, tmp_path / "p.xml")
    text = path.read_text()
    assert text.startswith("<?xml version='1.0'?>\n<!DOCTYPE platform SYSTEM \"https://simgrid.org/simgrid.dtd\">\n")
    root = ET.parse(path).getroot()
    assert root.tag == "platform" and root.attrib["version"] == "4.1"
    (zone,) = root.findall("zone")
    assert zone.attrib == {"id": "AS0", "routing": "Cluster"}
    hosts = zone.findall("host")
    assert [h.attrib["id"] for h in hosts] == host_names(16) + [MASTER_HOST]
    assert {h.attrib["speed"] for h in hosts} == {"1Gf"}
    master = hosts[-1]
    assert [(p.attrib["id"], p.attrib["value"]) for p in master.findall("prop")] == [("role", "master")]
    assert all(not h.findall("prop") for h in hosts[:-1])
    links = zone.findall("link")
    assert len(links) == 17
    assert {(lk.attrib["bandwidth"], lk.attrib["latency"]) for lk in links} == {("1TBps", "0")}
    assert [hl.attrib["id"] for hl in zone.findall("host_link")] == host_names(16) + [MASTER_HOST]
    (backbone,) = zone.findall("backbone")
    assert (backbone.attrib["bandwidth"], backbone.attrib["latency"]) == ("1TBps", "0")


def test_compute_hosts_reads_ours_and_the_shared_cluster_form(tmp_path):
    path = write_platform(12, tmp_path / "p.xml")
    assert compute_hosts(path) == host_names(12)
    shared = SHARED_PLATFORMS / "zero_lat_16.xml"
    if not shared.exists():
        pytest.skip(f"shared platform {shared} is not available")
    # the shared platform uses unpadded names: resource 2 is h10 there
    assert compute_hosts(shared)[:4] == ["h0", "h1", "h10", "h11"]
    assert len(compute_hosts(shared)) == 16


@pytest.mark.parametrize("m", [16, 100])
def test_shipped_platforms_are_generator_output(m):
    shipped = PLATFORMS / f"zero_lat_{m}.xml"
    assert shipped.read_text() == platform_xml(m)
    assert compute_hosts(shipped) == host_names(m)


_SIMGRID_PROBE = r"""
import ctypes, json, sys
lib = ctypes.CDLL(sys.argv[1])
argc = ctypes.c_int(1)
argv = (ctypes.c_char_p * 2)(b"probe", None)
lib.simgrid_init(ctypes.byref(argc), argv)
lib.simgrid_load_platform(sys.argv[2].encode())
lib.sg_host_count.restype = ctypes.c_size_t
lib.sg_host_list.restype = ctypes.POINTER(ctypes.c_void_p)
lib.sg_host_get_name.restype = ctypes.c_char_p
lib.sg_host_get_name.argtypes = [ctypes.c_void_p]
lib.sg_host_get_property_value.restype = ctypes.c_char_p
lib.sg_host_get_property_value.argtypes = [ctypes.c_void_p, ctypes.c_char_p]
lib.sg_host_get_speed.restype = ctypes.c_double
lib.sg_host_get_speed.argtypes = [ctypes.c_void_p]
for f in ("sg_host_get_route_latency", "sg_host_get_route_bandwidth"):
    getattr(lib, f).restype = ctypes.c_double
    getattr(lib, f).argtypes = [ctypes.c_void_p, ctypes.c_void_p]
n = lib.sg_host_count()
hosts = [lib.sg_host_list()[i] for i in range(n)]
names = [lib.sg_host_get_name(h).decode() for h in hosts]
master = hosts[names.index("master_host0")]
out = {
    "names": names,
    "roles": {nm: (lib.sg_host_get_property_value(h, b"role") or b"").decode() for nm, h in zip(names, hosts)},
    "speeds": sorted({lib.sg_host_get_speed(h) for h in hosts}),
    "latency": max(lib.sg_host_get_route_latency(h, master) for h in hosts if h != master),
    "bandwidth": min(lib.sg_host_get_route_bandwidth(h, master) for h in hosts if h != master),
    "latency_0_1": lib.sg_host_get_route_latency(hosts[0], hosts[1]),
}
print(json.dumps(out))
"""


@pytest.mark.parametrize("m", [16, 100])
def test_simgrid_loads_the_shipped_platform(m, tmp_path):
    lib = ctypes.util.find_library("simgrid")
    if lib is None:
        pytest.skip("libsimgrid is not installed: cannot check the platform with SimGrid itself")
    probe = tmp_path / "probe.py"
    probe.write_text(_SIMGRID_PROBE)
    # a separate process: SimGrid's engine can load one platform per process
    proc = subprocess.run(
        [sys.executable, str(probe), lib, str(PLATFORMS / f"zero_lat_{m}.xml")],
        capture_output=True,
        text=True,
        timeout=60,
    )
    assert proc.returncode == 0, proc.stderr
    out = json.loads(proc.stdout.strip().splitlines()[-1])
    assert sorted(out["names"]) == sorted(host_names(m) + [MASTER_HOST])
    assert out["roles"][MASTER_HOST] == "master"
    assert all(out["roles"][name] == "" for name in host_names(m))
    assert out["speeds"] == [1e9]
    assert out["latency"] == 0.0 and out["latency_0_1"] == 0.0
    assert out["bandwidth"] == pytest.approx(1e12)
