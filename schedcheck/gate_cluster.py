"""Gate workers on a Dask distributed cluster (`schedcheck gate --cluster tcp://HOST:8786`).

Each gate worker is one Dask task running `run_worker` with its own worker index, so its own search
seed (gate_properties derives every batch seed from the gate's seed and the worker index). The
workers share what they find through the example database: use a Redis database
(`--database redis://HOST:6379/0`) when the Dask workers run on other machines, since a folder is
only shared by the workers of one machine. `--cluster local` starts a local cluster of N processes.

The Dask workers need schedcheck installed (the same version): tasks name `run_worker` by import path.
"""

from __future__ import annotations

from collections.abc import Callable
from dataclasses import replace

from schedcheck.gate_properties import Failure, WorkerConfig, WorkerStats, run_worker

LOCAL = "local"
CONNECT_TIMEOUT = "15s"


class ClusterError(RuntimeError):
    """The cluster cannot be reached or used (one line, for the user)."""


def _worker(config: WorkerConfig) -> tuple[WorkerStats, Failure | None]:
    import warnings

    # Dask's own threads touch the global random module while Hypothesis draws, which Hypothesis takes
    # for a strategy using it; the gate's strategies use only their own Random instances.
    warnings.filterwarnings("ignore", message="Do not use the `random` module inside strategies")
    return run_worker(config)


def run_on_cluster(config: WorkerConfig, workers: int, address: str,
                   on_done: Callable[[WorkerStats, Failure | None], None] | None = None,
                   ) -> tuple[list[WorkerStats], list[Failure]]:
    """Run `workers` gate workers as tasks on the cluster at `address` (or a local one); collect every
    worker's statistics and failures. `on_done` hears of each worker as it finishes."""
    try:
        from dask.distributed import Client, LocalCluster, as_completed
    except ImportError as exc:
        raise ClusterError(f"--cluster needs dask's distributed package (pip install 'schedcheck[cluster]'): "
                           f"{exc}") from None
    cluster = None
    try:
        if address == LOCAL:
            cluster = LocalCluster(n_workers=workers, threads_per_worker=1, processes=True,
                                   dashboard_address=None, silence_logs=40)
            client = Client(cluster)
        else:
            # tasks on other machines cannot write progress files into this machine's folder
            config = replace(config, stats_dir=None)
            client = Client(address, timeout=CONNECT_TIMEOUT)
    except (OSError, TimeoutError, ValueError) as exc:
        if cluster is not None:
            cluster.close()
        raise ClusterError(f"{address}: cannot reach the Dask scheduler: {exc}") from None
    try:
        futures = [client.submit(_worker, replace(config, worker=index), pure=False,
                                 key=f"schedcheck-gate-{config.seed}-{index}") for index in range(workers)]
        stats: list[WorkerStats] = []
        failures: list[Failure] = []
        for future in as_completed(futures):
            worker_stats, failure = future.result()
            stats.append(worker_stats)
            if failure is not None:
                failures.append(failure)
            if on_done is not None:
                on_done(worker_stats, failure)
        return sorted(stats, key=lambda s: s.worker), failures
    finally:
        client.close()
        if cluster is not None:
            cluster.close()
