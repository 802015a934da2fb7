"""The `lp` fixture: the whole `Supervisor` over the fakes (`fakes.loop_over_fakes`)."""

from __future__ import annotations

from collections.abc import Iterator

import pytest

from tests.service.fakes import Loop, loop_over_fakes


@pytest.fixture
def lp(pitcrew_home: object) -> Iterator[Loop]:
    loop = loop_over_fakes()
    yield loop
    loop.sup.shutdown()
