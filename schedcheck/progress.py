"""Progress of a long run (gate, conform, selftest, bench): a tqdm bar on a terminal, plain periodic
lines otherwise (a CI log gets one line every `interval` seconds, never carriage returns)."""

from __future__ import annotations

import time
from typing import IO, Any

PLAIN_INTERVAL = 15.0


class Progress:
    """`update(done, **figures)` as often as convenient; the display throttles itself.

    `total` and `done` are in `unit`s (seconds of a budget, mutants, sizes); `figures` are shown as
    `name value` pairs (scenarios, cycles/s, findings, ...)."""

    def __init__(self, out: IO[str], label: str, total: float, unit: str = "s",
                 interval: float = PLAIN_INTERVAL, terminal: bool | None = None) -> None:
        self.out, self.label, self.total, self.unit, self.interval = out, label, total, unit, interval
        self.started = time.monotonic()
        self._last_plain = self.started
        self._bar: Any = None
        if terminal if terminal is not None else _is_terminal(out):
            from tqdm import tqdm

            integer = unit != "s"
            self._bar = tqdm(total=total if integer else round(total, 1), desc=label, unit=unit, file=out,
                             leave=False, dynamic_ncols=True,
                             bar_format="{desc}: {percentage:3.0f}%|{bar}| {n_fmt}/{total_fmt} " + unit
                                        + " [{elapsed}<{remaining}{postfix}]")

    def update(self, done: float, **figures: Any) -> None:
        text = ", ".join(f"{name.replace('_', ' ')} {_fmt(value)}" for name, value in figures.items())
        if self._bar is not None:
            done = min(done, self.total)
            self._bar.n = done if self.unit != "s" else round(done, 1)
            self._bar.set_postfix_str(text, refresh=False)
            self._bar.refresh()
            return
        now = time.monotonic()
        if now - self._last_plain >= self.interval:
            self._last_plain = now
            self.out.write(f"{self.label}: {_fmt(done)}/{_fmt(self.total)} {self.unit}"
                           + (f", {text}" if text else "") + "\n")
            self.out.flush()

    def close(self) -> None:
        if self._bar is not None:
            self._bar.close()
            self._bar = None


def _fmt(value: Any) -> str:
    if isinstance(value, float):
        return f"{value:.1f}" if value < 100 else f"{value:.0f}"
    return str(value)


def _is_terminal(out: IO[str]) -> bool:
    try:
        return out.isatty()
    except (AttributeError, ValueError):
        return False
