"""The SWF header: fields repeated and joined, the leading integer of a numeric field, the machine size."""

from __future__ import annotations

import pytest
from bftune.workloads.errors import WorkloadError
from bftune.workloads.swf_header import add_header_line, comment_lines, machine_size, start_time


def test_fields_join_repeats_and_read_their_leading_integer():
    header: dict[str, str] = {}
    for line in ("; MaxNodes: 100 (IBM SP2)", "; Note: first", "; Note: second", ";  not a field", "; Empty:"):
        add_header_line(header, line)
    assert header == {"MaxNodes": "100 (IBM SP2)", "Note": "first\nsecond", "Empty": ""}
    assert machine_size(header, None, "t.swf") == 100
    assert machine_size(header, 64, "t.swf") == 64
    assert start_time({"UnixStartTime": "843480031 (Mon)"}, "t.swf") == 843480031 and start_time({}, "t") is None
    with pytest.raises(WorkloadError, match="t.swf: the header has no usable MaxProcs or MaxNodes"):
        machine_size({"MaxProcs": "-1"}, None, "t.swf")


def test_comment_lines_are_found_in_the_bytes():
    data = b"; Version: 2.2\n;  MaxProcs: 16\n1 0 0 5 2 -1 -1 2 10 -1 1 1 1 -1 1 -1 -1 -1\n"
    assert comment_lines(data) == ["; Version: 2.2", ";  MaxProcs: 16"]
    assert comment_lines(b"1 0 0 5 2\n") == []
