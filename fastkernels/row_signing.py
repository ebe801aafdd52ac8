"""Rows a worker writes are signed, so rows a candidate writes into the same file are never taken for the harness's.

A candidate runs inside the worker and can find the worker's rows file (its log is the worker's stdout, and the job
file beside it names the rows file), then append a PASSED row with any speedup before the harness writes the real
one. So the runner hands every worker a fresh random key that never touches the environment, the command line or a
file: it crosses in the forked process's arguments, or on the exec'd worker's stdin, before any candidate is
imported. The worker writes the HMAC of each row line to `<task>.rows.mac` before the line itself, and the runner
takes only lines whose MAC is there. Lines without one earn nothing; they are not held against the task (code in
another run of a sweep could write them into an honest task's file), only noted in its rows' `review`. Code that
walks the interpreter's objects could still read the key out of the worker's memory; the static check flags that in
its plain forms (gc, frames).
"""

from __future__ import annotations

import hashlib
import hmac
import secrets
from pathlib import Path

KEY_BYTES = 32


def new_key() -> bytes:
    return secrets.token_bytes(KEY_BYTES)


def mac_path(rows_path: Path) -> Path:
    """`<task>.rows.mac` beside `<task>.rows.jsonl`."""
    return rows_path.with_name(rows_path.name.removesuffix(".jsonl") + ".mac")


def sign(key: bytes, line: str) -> str:
    return hmac.new(key, line.encode(), hashlib.sha256).hexdigest()


def signed_lines(rows_path: Path, key: bytes) -> tuple[list[str], int]:
    """The complete row lines of `rows_path` that carry the worker's MAC, in order, and how many complete lines carry
    none (a torn last line, cut by a crash mid-write, counts as neither)."""
    if not rows_path.exists():
        return [], 0
    macs_file = mac_path(rows_path)
    macs = set(macs_file.read_text().split()) if macs_file.exists() else set()
    # after the last newline: nothing, or a line still being written
    complete = [line for line in rows_path.read_text().split("\n")[:-1] if line.strip()]
    signed = [line for line in complete if sign(key, line) in macs]
    return signed, len(complete) - len(signed)
