"""The controller's clock moved ahead, for a pass that must happen after a wait (a job's TTL,
the grace its status gives a holder still to come) without the test waiting for it."""

from __future__ import annotations

from datetime import datetime, timedelta, tzinfo

import pytest

from msgen.reconcile import job_pass


def later(monkeypatch: pytest.MonkeyPatch, seconds: float) -> None:
    """The clock a pass reads (`job_pass.datetime`) `seconds` ahead of the real one."""
    class Later(datetime):
        @classmethod
        def now(cls, tz: tzinfo | None = None) -> Later:
            found = datetime.now(tz) + timedelta(seconds=seconds)
            return cls.fromtimestamp(found.timestamp(), tz)

    monkeypatch.setattr(job_pass, "datetime", Later)
