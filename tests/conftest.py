"""Shared fixtures: CPU only; Triton runs under its interpreter in every test process."""

from __future__ import annotations

import os

os.environ.setdefault("TRITON_INTERPRET", "1")
