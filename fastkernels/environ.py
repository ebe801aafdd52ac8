"""Setting os.environ from a mapping where None means unset: how the harness moves a variable and puts it back (the
fork server's import-time environment, each case's compile caches)."""

from __future__ import annotations

import os
from typing import Mapping


def set_environment(values: Mapping[str, str | None]) -> None:
    """Set each variable in os.environ, or unset it where its value is None."""
    for key, value in values.items():
        if value is None:
            os.environ.pop(key, None)
        else:
            os.environ[key] = value
