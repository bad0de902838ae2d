# Upstream's test-only plugins register with the reference's plugin registry when any part of the scenario
# layer is imported: a process that holds a scenario (read, or unpickled from another process) can build them.
from schedcheck.scenario import testplugins as _testplugins  # noqa: F401
# The reader of an extender victim's Pod that the session does not hold (reference_impl/plugins/extender_victims.py).
from schedcheck.scenario import victim_pods as _victim_pods  # noqa: F401,E402
