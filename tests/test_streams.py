"""support/streams.py: error lines stay one bounded line; bftune's warnings are one line."""

from __future__ import annotations

import warnings

from bftune.support.streams import MAX_ERROR_CHARS, error_line, one_line_warnings


def test_a_library_message_of_several_lines_is_one_line():
    assert error_line("Scheduler connection lost\n  second line\n\n") == \
        "bftune: error: Scheduler connection lost; second line"


def test_a_huge_message_keeps_its_head_and_its_advice_and_says_what_was_cut():
    message = "trace.txt, line 2: column JobID: " + "9" * 5_000 + " is not a job id; give sacct's output"
    line = error_line(message)
    assert len(line) < MAX_ERROR_CHARS + 100 and "\n" not in line
    assert line.startswith("bftune: error: trace.txt, line 2: column JobID: 999")
    assert line.endswith("is not a job id; give sacct's output")
    assert "characters cut ...]" in line


def test_batsims_log_tail_keeps_its_lines():
    assert error_line("batsim failed. Log:\n    a\n    b", lines=True).count("\n") == 2


def test_bftunes_own_warnings_are_one_line(capsys):
    class OwnWarning(UserWarning):
        pass

    OwnWarning.__module__ = "bftune.workloads.download"
    with one_line_warnings():
        warnings.warn("unpinned checksum", OwnWarning)
    assert capsys.readouterr().err == "bftune: warning: unpinned checksum\n"
