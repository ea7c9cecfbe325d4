"""The trace catalogue (bftune.workloads.catalogue) and verified downloads (bftune.workloads.download), against a
local HTTP server."""

from __future__ import annotations

import functools
import gzip
import hashlib
import http.server
import subprocess
import sys
import threading
import time
import warnings
from pathlib import Path

import pytest
from bftune.workloads import catalogue as dl_catalogue
from bftune.workloads import download as dl
from bftune.workloads.archive import data_dir
from bftune.workloads.catalogue import CATALOGUE, get_source, short_name, trace_names
from bftune.workloads.download import DownloadError, UnpinnedChecksumWarning, download, sha256_file
from bftune.workloads.errors import WorkloadError
from locations import SHARED_WORKLOADS

KTH_FILE = "KTH-SP2-1996-2.1-cln.swf.gz"


class _RecordingHandler(http.server.SimpleHTTPRequestHandler):
    def do_GET(self):  # noqa: N802 - http.server's name
        self.server.requests.append(self.path)  # type: ignore[attr-defined]
        super().do_GET()

    def log_message(self, format, *args):  # keep test output quiet
        pass


@pytest.fixture
def server(tmp_path, monkeypatch):
    """A local archive mirror: (base_url, root directory, list of requested paths)."""
    monkeypatch.setenv("no_proxy", "*")
    monkeypatch.setenv("NO_PROXY", "*")
    root = tmp_path / "mirror"
    root.mkdir()
    handler = functools.partial(_RecordingHandler, directory=str(root))
    httpd = http.server.ThreadingHTTPServer(("127.0.0.1", 0), handler)
    httpd.requests = []  # type: ignore[attr-defined]
    thread = threading.Thread(target=httpd.serve_forever, kwargs={"poll_interval": 0.05}, daemon=True)
    thread.start()
    try:
        yield f"http://127.0.0.1:{httpd.server_address[1]}/", root, httpd.requests  # type: ignore[attr-defined]
    finally:
        httpd.shutdown()
        httpd.server_close()
        thread.join(timeout=5)


def publish(root: Path, directory: str, filename: str, data: bytes) -> None:
    (root / directory).mkdir(parents=True, exist_ok=True)
    (root / directory / filename).write_bytes(data)


def kth_bytes() -> bytes:
    path = SHARED_WORKLOADS / KTH_FILE
    if not path.exists():
        pytest.skip(f"shared trace {path} is not available (the ../shared checkout is missing)")
    return path.read_bytes()


def only_file(directory: Path) -> list[str]:
    return sorted(p.name for p in directory.iterdir())


def test_catalogue_layout_and_lookup():
    names = trace_names()
    assert names[:6] == ["kth_sp2", "sdsc_sp2", "ctc_sp2", "hpc2n", "sdsc_blue", "cea_curie"]
    assert {"anl_intrepid", "unilu_gaia", "kit_fh2", "metacentrum_2013"} <= set(names)
    kth = CATALOGUE["kth_sp2"]
    assert kth.url() == "https://www.cs.huji.ac.il/labs/parallel/workload/l_kth_sp2/KTH-SP2-1996-2.1-cln.swf.gz"
    assert kth.url("http://mirror/x") == "http://mirror/x/l_kth_sp2/KTH-SP2-1996-2.1-cln.swf.gz"
    assert get_source("KTH-SP2-1996-2.1-cln") is kth
    assert get_source(" kth-sp2-1996-2.1-cln.swf.gz ") is kth
    assert get_source("KTH_SP2") is kth
    assert CATALOGUE["anl_intrepid"].url().endswith("/l_anl_int/ANL-Intrepid-2009-1.swf.gz")
    assert CATALOGUE["metacentrum_2013"].url().endswith("/l_metacentrum2/METACENTRUM-2013-3.swf.gz")
    assert get_source("KTH-SP2") is kth and get_source("cea-curie") is CATALOGUE["cea_curie"]
    assert short_name("SDSC-BLUE-2000-4.2-cln") == "SDSC-BLUE" and short_name("synthetic:10:4") == "synthetic:10:4"
    with pytest.raises(WorkloadError, match="unknown trace 'nope'.*KTH-SP2"):
        get_source("nope")
    for source in CATALOGUE.values():
        assert source.filename.endswith(".swf.gz")
        assert source.sha256 is None or len(source.sha256) == 64


def test_pinned_checksums_match_the_shared_copies():
    if not SHARED_WORKLOADS.exists():
        pytest.skip(f"{SHARED_WORKLOADS} is not available (the ../shared checkout is missing)")
    for source in list(CATALOGUE.values())[:6]:
        assert source.sha256 == sha256_file(SHARED_WORKLOADS / source.filename), source.name


def test_download_verifies_and_then_reuses(server, tmp_path):
    base_url, root, requests = server
    data = kth_bytes()
    publish(root, "l_kth_sp2", KTH_FILE, data)
    dest_dir = tmp_path / "traces" / "nested"
    with warnings.catch_warnings():
        warnings.simplefilter("error")  # a pinned trace gives no warning
        path = download("kth_sp2", dest_dir, base_url=base_url)
    assert path == dest_dir / KTH_FILE
    assert path.read_bytes() == data
    assert only_file(dest_dir) == [KTH_FILE]  # no temporary file left
    assert requests == [f"/l_kth_sp2/{KTH_FILE}"]

    # already there with the right checksum: no request at all
    assert download("kth_sp2", dest_dir, base_url=base_url) == path
    assert len(requests) == 1


def test_corrupted_download_is_rejected_and_removed(server, tmp_path):
    base_url, root, _ = server
    data = bytearray(kth_bytes())
    data[1000] ^= 0xFF
    publish(root, "l_kth_sp2", KTH_FILE, bytes(data))
    dest_dir = tmp_path / "traces"
    with pytest.raises(DownloadError) as info:
        download("kth_sp2", dest_dir, base_url=base_url)
    message = str(info.value)
    assert CATALOGUE["kth_sp2"].sha256 in message
    assert hashlib.sha256(bytes(data)).hexdigest() in message
    assert "expected" in message and "got" in message
    assert only_file(dest_dir) == []  # neither the trace nor the temporary file


def test_bad_local_copy_is_replaced_good_one_is_kept(server, tmp_path):
    base_url, root, requests = server
    data = kth_bytes()
    publish(root, "l_kth_sp2", KTH_FILE, data)
    dest_dir = tmp_path / "traces"
    dest_dir.mkdir()
    (dest_dir / KTH_FILE).write_bytes(b"truncated")
    path = download("kth_sp2", dest_dir, base_url=base_url)
    assert path.read_bytes() == data and len(requests) == 1

    # a good local copy is used even if the mirror now serves garbage
    publish(root, "l_kth_sp2", KTH_FILE, b"garbage")
    assert download("kth_sp2", dest_dir, base_url=base_url).read_bytes() == data
    assert len(requests) == 1


def test_unpinned_trace_is_accepted_with_a_warning(server, tmp_path):
    base_url, root, _ = server
    body = gzip.compress(b"; MaxProcs: 4\n1 0 -1 10 1 -1 -1 1 20 -1 1 1 1 1 1 1 -1 -1\n")
    publish(root, "l_kit_fh2", "KIT-FH2-2016-1.swf.gz", body)
    dest_dir = tmp_path / "traces"
    with pytest.warns(UnpinnedChecksumWarning, match=hashlib.sha256(body).hexdigest()):
        path = download("kit_fh2", dest_dir, base_url=base_url)
    assert path.read_bytes() == body
    with pytest.warns(UnpinnedChecksumWarning, match="unverified"):
        assert download("kit_fh2", dest_dir, base_url=base_url) == path


def test_error_page_and_missing_file(server, tmp_path):
    base_url, root, _ = server
    publish(root, "l_unilu_gaia", "UniLu-Gaia-2014-2.swf.gz", b"<html>moved</html>")
    dest_dir = tmp_path / "traces"
    with pytest.raises(DownloadError, match="not a gzip"):
        download("unilu_gaia", dest_dir, base_url=base_url)
    with pytest.raises(DownloadError, match="HTTP 404"):
        download("anl_intrepid", dest_dir, base_url=base_url)
    assert only_file(dest_dir) == []


def test_unreachable_server_and_bad_scheme(tmp_path, monkeypatch):
    monkeypatch.setenv("no_proxy", "*")
    with pytest.raises(DownloadError, match="download failed"):
        download("kth_sp2", tmp_path, base_url="http://127.0.0.1:9/", timeout=5)
    with pytest.raises(DownloadError, match="scheme"):
        download("kth_sp2", tmp_path, base_url="ftp://example.org/")
    assert only_file(tmp_path) == []


def test_file_url_mirror(tmp_path):
    data = kth_bytes()
    mirror = tmp_path / "mirror"
    publish(mirror, "l_kth_sp2", KTH_FILE, data)
    path = download("kth_sp2", tmp_path / "out", base_url=mirror.as_uri())
    assert path.read_bytes() == data
    assert dl.sha256_file(path) == CATALOGUE["kth_sp2"].sha256


def test_cli_download_by_the_archive_name(server, tmp_path, capsys):
    """`bftune download KTH-SP2` as the issue spells it, against a local mirror."""
    from bftune.experiments.cli.main import main

    base_url, root, requests = server
    publish(root, "l_kth_sp2", KTH_FILE, kth_bytes())
    dest = tmp_path / "traces"
    assert main(["download", "KTH-SP2", "--dest", str(dest), "--base-url", base_url]) == 0
    assert (dest / KTH_FILE).exists()
    assert str(dest / KTH_FILE) in capsys.readouterr().out
    publish(root, "l_kth_sp2", KTH_FILE, b"\x1f\x8b" + b"corrupt" * 10)
    (dest / KTH_FILE).unlink()
    assert main(["download", "kth-sp2", "--dest", str(dest), "--base-url", base_url]) == 2
    err = capsys.readouterr().err
    assert err.startswith("bftune: error:") and "sha256" in err.lower()
    assert not any(dest.iterdir())  # nothing half-written left behind


def test_a_warning_of_bftune_is_one_line_on_the_command_line(server, tmp_path):
    """UnpinnedChecksumWarning was printed in Python's format: a source line of bftune and the warn() call."""
    base_url, root, _ = server
    publish(root, "l_kit_fh2", "KIT-FH2-2016-1.swf.gz", gzip.compress(b"; MaxProcs: 4\n"))
    done = subprocess.run([sys.executable, "-m", "bftune.experiments.cli.main", "download", "kit_fh2", "--dest",
                           str(tmp_path / "traces"), "--base-url", base_url], capture_output=True, text=True,
                          timeout=120)
    assert done.returncode == 0, done.stderr
    (line,) = done.stderr.splitlines()
    assert line.startswith("bftune: warning: ") and "no pinned sha256" in line


# --- bounds: size, read timeout, deadline; progress ------------------------------------------------------------


class _Misbehaving(http.server.BaseHTTPRequestHandler):
    """A server that misbehaves as ``self.server.mode`` says, until ``self.server.stop`` is set."""

    protocol_version = "HTTP/1.0"

    def do_GET(self):  # noqa: N802 - http.server's name
        server = self.server
        mode = server.mode  # type: ignore[attr-defined]
        self.send_response(200)
        if mode == "announced":
            self.send_header("Content-Length", str(10 * 1024**3))
        self.end_headers()
        try:
            if mode in ("endless", "announced"):
                block = b"\x1f\x8b" + bytes(1 << 16)
                # "endless" up to 32 MiB: without a size bound the test fails (checksum) instead of filling a disk
                while not server.stop.is_set() and server.sent < 32 << 20:  # type: ignore[attr-defined]
                    self.wfile.write(block)
                    server.sent += len(block)  # type: ignore[attr-defined]
            elif mode == "stall":
                self.wfile.write(b"\x1f\x8b")
                self.wfile.flush()
                server.stop.wait(10)  # type: ignore[attr-defined]
            elif mode == "drip":  # for 3 s at most: without a deadline the test fails instead of hanging
                end = time.monotonic() + 3
                while not server.stop.is_set() and time.monotonic() < end:  # type: ignore[attr-defined]
                    self.wfile.write(b"\x1f")
                    self.wfile.flush()
                    server.stop.wait(0.05)  # type: ignore[attr-defined]
        except OSError:  # the client gave up: what it should do
            pass

    def log_message(self, format, *args):
        pass


@pytest.fixture
def misbehaving(monkeypatch):
    """Start a server of a given mode: ``start(mode) -> base_url``; its ``sent`` bytes on ``.servers``."""
    monkeypatch.setenv("no_proxy", "*")
    monkeypatch.setenv("NO_PROXY", "*")
    servers = []

    def start(mode: str) -> str:
        httpd = http.server.ThreadingHTTPServer(("127.0.0.1", 0), _Misbehaving)
        httpd.mode, httpd.sent, httpd.stop = mode, 0, threading.Event()  # type: ignore[attr-defined]
        threading.Thread(target=httpd.serve_forever, kwargs={"poll_interval": 0.05}, daemon=True).start()
        servers.append(httpd)
        return f"http://127.0.0.1:{httpd.server_address[1]}/"

    start.servers = servers  # type: ignore[attr-defined]
    yield start
    for httpd in servers:
        httpd.stop.set()  # type: ignore[attr-defined]
        httpd.shutdown()
        httpd.server_close()


def test_pinned_sizes_match_the_shared_copies_and_bound_downloads():
    if not SHARED_WORKLOADS.exists():
        pytest.skip(f"{SHARED_WORKLOADS} is not available (the ../shared checkout is missing)")
    for source in CATALOGUE.values():
        if source.sha256 is not None:
            assert source.size == (SHARED_WORKLOADS / source.filename).stat().st_size, source.name
            assert source.max_bytes == source.size
        else:
            assert source.size is None and source.max_bytes == dl_catalogue.MAX_UNPINNED_BYTES


def test_an_endless_body_is_stopped_at_the_trace_size_and_nothing_is_kept(misbehaving, tmp_path):
    base_url = misbehaving("endless")
    start = time.monotonic()
    with pytest.raises(DownloadError, match=r"larger than the 411,455 bytes of trace KTH-SP2; stopped reading"):
        download("kth_sp2", tmp_path / "traces", base_url=base_url, timeout=5)
    assert time.monotonic() - start < 5
    assert only_file(tmp_path / "traces") == []


def test_a_body_announced_larger_than_the_bound_is_refused_before_reading(misbehaving, tmp_path):
    base_url = misbehaving("announced")
    with pytest.raises(DownloadError, match=r"announces 10,737,418,240 bytes, more than the 411,455 of trace KTH"):
        download("kth_sp2", tmp_path, base_url=base_url, timeout=5)
    assert only_file(tmp_path) == []


def test_an_unpinned_trace_is_bounded_too(misbehaving, tmp_path, monkeypatch):
    monkeypatch.setattr(dl_catalogue, "MAX_UNPINNED_BYTES", 300_000)
    base_url = misbehaving("endless")
    with pytest.raises(DownloadError, match=r"larger than the 300,000 bytes of trace KIT-FH2"):
        download("kit_fh2", tmp_path, base_url=base_url, timeout=5)
    assert only_file(tmp_path) == []


def test_a_silent_server_trips_the_read_timeout(misbehaving, tmp_path):
    base_url = misbehaving("stall")
    start = time.monotonic()
    with pytest.raises(DownloadError, match=r"no answer from the server for 0.3 s.*nothing was saved"):
        download("kth_sp2", tmp_path, base_url=base_url, timeout=0.3)
    assert time.monotonic() - start < 3
    assert only_file(tmp_path) == []


def test_a_dripping_server_trips_the_deadline(misbehaving, tmp_path):
    """A byte every 50 ms never trips a read timeout: the deadline of the whole download ends it."""
    base_url = misbehaving("drip")
    start = time.monotonic()
    with pytest.raises(DownloadError, match=r"not finished after 0.5 s \(\d+ bytes arrived"):
        download("kth_sp2", tmp_path, base_url=base_url, timeout=5, deadline=0.5)
    assert time.monotonic() - start < 3
    assert only_file(tmp_path) == []
    assert dl.DOWNLOAD_DEADLINE >= 600  # the default gives a slow but honest link time


@pytest.mark.parametrize("bad", [0, -1, float("nan"), float("inf")])
def test_bounds_must_be_positive_and_finite(tmp_path, bad):
    with pytest.raises(DownloadError, match="must be positive, finite seconds"):
        download("kth_sp2", tmp_path, base_url="http://127.0.0.1:9/", deadline=bad)
    assert only_file(tmp_path) == []


def test_progress_on_request_and_not_off_a_terminal(server, tmp_path, capsys):
    base_url, root, _ = server
    publish(root, "l_kth_sp2", KTH_FILE, kth_bytes())
    download("kth_sp2", tmp_path / "quiet", base_url=base_url)  # stderr is not a terminal here
    assert capsys.readouterr().err == ""
    download("kth_sp2", tmp_path / "shown", base_url=base_url, progress=True)
    err = capsys.readouterr().err
    assert "downloading KTH-SP2 (KiB): [" in err and "402/402 100.0%" in err


def test_a_downloaded_trace_is_not_hashed_again_when_read(server, tmp_path, monkeypatch):
    base_url, root, _ = server
    publish(root, "l_kth_sp2", KTH_FILE, kth_bytes())
    monkeypatch.setenv("BFTUNE_CACHE_DIR", str(tmp_path / "cache"))
    path = download("kth_sp2", tmp_path / "traces", base_url=base_url)
    calls = []
    monkeypatch.setattr(dl, "sha256_file", calls.append)
    assert data_dir(str(tmp_path / "traces")).require("KTH-SP2") == path
    assert download("kth_sp2", tmp_path / "traces", base_url=base_url) == path
    assert calls == []
