from pathlib import Path

import pytest

FIXTURES = Path(__file__).resolve().parents[3] / "fixtures"


@pytest.fixture
def incidents() -> Path:
    return FIXTURES / "incidents"
