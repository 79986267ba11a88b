"""Shared test setup."""

import pytest


@pytest.fixture(scope="session", autouse=True)
def _corba_stubs():
    """Compile the omniORBpy stubs into rtcf/_gen once per session (a no-op when current)."""
    from rtcf.corba import idl

    idl.ensure_stubs()
