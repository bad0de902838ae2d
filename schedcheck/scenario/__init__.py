# Upstream's test-only plugins register with the reference's plugin registry when any part of the scenario
# layer is imported: a process that holds a scenario (read, or unpickled from another process) can build them.
from schedcheck.scenario import testplugins as _testplugins  # noqa: F401
