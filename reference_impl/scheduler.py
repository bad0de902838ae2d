"""The scheduler loop: one session per cycle (pkg/scheduler/scheduler.go runOnce).

    open session -> run each configured action in order -> close session -> the world moves on
"""

from __future__ import annotations

from collections.abc import Callable
from dataclasses import dataclass, field
from time import perf_counter

from schedcheck.reference.actions.base import get_action
from schedcheck.reference.cache.cache import SchedulerCache
from schedcheck.reference.framework.conf import SchedulerConf
from schedcheck.reference.framework.framework import close_session, open_session
from schedcheck.reference.framework.session import Session, SessionObserverHooks
from schedcheck.reference.k8s import ClusterObjects
from schedcheck.reference.plugins.deviceshare import device_flags
from schedcheck.reference.util.scheduler_helper import ServerOptions


@dataclass
class CycleReport:
    """What one session left behind, read before the world moves on."""

    cycle: int
    session: Session
    skipped_actions: list[str] = field(default_factory=list)
    # wall seconds of "open", of each action that ran (by name) and of "close"; read by `schedcheck bench`
    phase_seconds: dict[str, float] = field(default_factory=dict)



class Scheduler:
    def __init__(
        self,
        objects: ClusterObjects,
        conf: SchedulerConf,
        seed: int = 0,
        server_options: ServerOptions | None = None,
        hooks_factory: Callable[[], SessionObserverHooks] | None = None,
        now: str | None = None,
        tie_chooser: Callable[..., object] | None = None,
        copy_objects: bool = True,
    ) -> None:
        """`copy_objects=False` hands `objects` to the cache, which then changes them as sessions go by
        (for a caller that built them for this run alone; the copy is most of a small run's start-up)."""
        self.conf = conf
        self.tie_chooser = tie_chooser  # see Session.tie_chooser
        self.seed = seed
        self.cache = SchedulerCache(objects, server_options=server_options, now=now, copy_objects=copy_objects,
                                    device_flags=device_flags(conf))
        self.hooks_factory = hooks_factory
        self.cache.set_pipeline_persistence(conf.persistent_pipelines)
        self.cycle = 0

    def run_once(self) -> CycleReport:
        hooks = self.hooks_factory() if self.hooks_factory else None
        started = perf_counter()
        ssn = open_session(self.cache, self.conf, self.cycle, self.seed, hooks)
        ssn.tie_chooser = self.tie_chooser
        observe = getattr(self.tie_chooser, "observe", None)  # a guided replay follows every placement
        if observe is not None:
            ssn.hooks.on_operation.append(observe)
        report = CycleReport(self.cycle, ssn)
        phases = report.phase_seconds
        phases["open"] = perf_counter() - started
        try:
            for name in self.conf.actions:
                action = get_action(name)
                if action is None:
                    report.skipped_actions.append(name)
                    continue
                started = perf_counter()
                ssn.current_action = name
                action.execute(ssn)
                for hook in ssn.hooks.on_action_end:
                    hook(ssn, name)
                phases[name] = phases.get(name, 0.0) + perf_counter() - started
            ssn.current_action = ""
        except BaseException:
            ssn.aborted = True  # closed all the same, as upstream's deferred CloseSession runs while it panics
            raise
        finally:
            started = perf_counter()
            close_session(ssn)
            phases["close"] = perf_counter() - started
        return report

    def advance(self) -> None:
        self.cache.advance()
        self.cycle += 1

    def run(self, cycles: int) -> list[CycleReport]:
        reports = []
        for index in range(cycles):
            if index:
                self.advance()
            reports.append(self.run_once())
        return reports
