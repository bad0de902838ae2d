import pytest

from schedcheck.adapters import AdapterError, adapter_command


@pytest.fixture(scope="session")
def volcano_adapter() -> list[str]:
    """The upstream-Volcano adapter's argv, built once (cached across sessions by the builder)."""
    try:
        return adapter_command()
    except AdapterError as err:
        pytest.fail(f"the Volcano adapter cannot be built: {err} (see docs/volcano-adapter.md)", pytrace=False)
