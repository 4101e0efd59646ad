"""``--executor ray``: one ``num_gpus=1`` actor per GPU of a Ray cluster (CPU actors with ``--device cpu``).

Each actor runs entries through the same fresh worker process as the local executor (pinned by Ray's
own ``CUDA_VISIBLE_DEVICES``), so a CUDA error kills a worker process, never the actor. A pool whose
GPUs are of different models is refused unless ``allow_mixed``: timings from an H100 and an H200 in one
suite are not comparable (kernel_tuner's parallel runner refuses the same). Rows come back as JSON, so
the driver writes ``results.jsonl``; optimize run folders stay on the node that made them.
"""

from __future__ import annotations

import os
from collections.abc import Sequence
from pathlib import Path
from typing import Any

import ray
from ray.util import ActorPool

from perfagent.suite.executors import ResultSink, launch_worker
from perfagent.suite.hygiene import GpuProbe, host, pinned_gpu
from perfagent.suite.manifest import SuiteEntry
from perfagent.suite.models import EntryResult, SuiteSettings
from profilers.core_errors import BadInput


class SuiteActor:
    """Runs suite entries on the GPU Ray gave it."""

    def __init__(self, index: int) -> None:
        self.index = index
        self.gpu = pinned_gpu()

    def describe(self) -> dict[str, str | None]:
        """Host, pinned GPU and its model name (for the mixed-pool check)."""
        probe = GpuProbe(self.gpu)
        probe.start()
        return {"host": host(), "gpu": self.gpu, "name": probe.name}

    def run(self, entry: dict[str, Any], settings: dict[str, Any], out: str) -> str:
        """One entry's row, as JSON."""
        e = SuiteEntry.model_validate(entry)
        label = f"ray/{self.index}@{host()}" + (f" (GPU {self.gpu})" if self.gpu else " (cpu)")
        row = launch_worker(
            e,
            SuiteSettings.model_validate(settings),
            Path(out),
            slot=f"ray{self.index}-{os.getpid()}",
            gpu=self.gpu,
            worker=label,
        )
        return row.model_dump_json()


class RayExecutor:
    """One Ray actor per GPU (or per CPU worker), fed from an ``ActorPool``."""

    name = "ray"

    def __init__(self, *, device: str, workers: int | None, address: str | None, allow_mixed: bool) -> None:
        ray.init(
            address=address,
            include_dashboard=False,
            ignore_reinit_error=True,
            log_to_driver=False,
            configure_logging=False,
        )
        gpus = int(ray.cluster_resources().get("GPU", 0))  # type: ignore[no-untyped-call]
        use_gpu = device != "cpu" and gpus > 0
        if device == "cuda" and not use_gpu:
            raise BadInput(
                "--device cuda but the Ray cluster has no GPUs", hint="use --device cpu --workers N"
            )
        count = min(workers or gpus, gpus) if use_gpu else (workers or 1)
        actor_cls = (
            ray.remote(num_gpus=1, num_cpus=1)(SuiteActor) if use_gpu else ray.remote(num_cpus=1)(SuiteActor)
        )
        self.actors: list[Any] = [actor_cls.remote(i) for i in range(count)]  # type: ignore[attr-defined]
        self.workers = count
        self.pool_description = ray.get([a.describe.remote() for a in self.actors])
        models = {d["name"] for d in self.pool_description if d["name"]}
        if len(models) > 1 and not allow_mixed:
            raise BadInput(
                f"the Ray pool mixes GPU models ({', '.join(sorted(models))}): timings would not be comparable",
                hint="pass --allow-mixed to run anyway, or limit the cluster to one GPU model",
            )

    def run(
        self, entries: Sequence[SuiteEntry], settings: SuiteSettings, out: Path, on_result: ResultSink
    ) -> None:
        pool = ActorPool(self.actors)
        payload = settings.model_dump(mode="json")
        rows = pool.map_unordered(
            lambda actor, e: actor.run.remote(e.model_dump(mode="json"), payload, str(out)), list(entries)
        )
        for row in rows:
            on_result(EntryResult.model_validate_json(row))

    def close(self) -> None:
        """Release the actors (the Ray instance stays for the driver's other work)."""
        for a in self.actors:
            ray.kill(a)
