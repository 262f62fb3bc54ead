"""Work measured by counting, never by the clock: this machine is shared and noisy, so a
timed assertion fails when it is busy; a count of calls does not change with the load."""

from __future__ import annotations

import sys
from typing import Any


def calls_made(fn: Any) -> int:
    """How many Python and C functions ``fn()`` calls: a measure of work that a busy machine cannot change."""
    count = 0

    def profile(frame: Any, event: str, arg: Any) -> None:
        nonlocal count
        if event in ("call", "c_call"):
            count += 1

    sys.setprofile(profile)
    try:
        fn()
    finally:
        sys.setprofile(None)
    return count
