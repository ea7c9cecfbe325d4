"""Hand-written SWF text for the SWF reader and writer tests: one job line, a header with provenance."""

from __future__ import annotations


def job_line(
    jid, submit=0, runtime=10, alloc=1, req_procs=-1, req_time=100, user=1, status=1, wait=-1, avg_cpu="-1"
) -> str:
    return (
        f"{jid} {submit} {wait} {runtime} {alloc} {avg_cpu} -1 {req_procs} {req_time} -1 "
        f"{status} {user} 7 3 2 1 -1 -1"
    )


HEADER = """; Version: 2.2
; Computer: Test box
; Acknowledge: Someone
; Information: http://example.org/
;              http://www.cs.huji.ac.il/labs/parallel/workload/
; UnixStartTime: 843480031
; TimeZoneString: Europe/Stockholm
; MaxNodes: 8
; MaxProcs: 16
; Note: first note
; Note: second note
"""
