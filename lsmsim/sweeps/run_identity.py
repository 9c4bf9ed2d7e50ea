"""What a run is, resolved: the identity under which its result is cached.

A cell of `compare`, `reproduce` or `sweep` is given as `compare.run_cell`'s arguments
(policy spec, device, workload, simulated seconds, `simulate` keyword arguments, series
kept). Names mean files that may change, so the identity holds what they resolve to: the
device and machine models' numbers, the workload's every field, every RocksDB option, the
policy's parameters with their defaults and the hash of the module that defines it (a
user's policy outside lsmsim's packages, edited, is a new run).
"""

from __future__ import annotations

import dataclasses
import inspect
from typing import Any, Mapping

from lsmsim.options import LsmOptions
from lsmsim.sweeps.result_cache import file_fingerprint
from lsmsim.workload import Workload, make_workload

# `simulate` keywords that are not workload fields.
RUN_KEYWORDS = ("options", "machine", "seed", "interval_s", "key_buckets", "without")


def run_identity(policy: str, device: Any, workload: str | Workload, duration_s: float,
                 simulate_kwargs: Mapping[str, Any], series: tuple[str, ...] = ()
                 ) -> dict[str, Any]:
    """The resolved configuration of one `compare.run_cell` call, JSON-able."""
    from lsmsim.device_models import load_device
    from lsmsim.keyspace import DEFAULT_BUCKETS
    from lsmsim.machine import load_machine
    from lsmsim.policies import make_policy

    kwargs = dict(simulate_kwargs)
    fields = {k: v for k, v in kwargs.items() if k not in RUN_KEYWORDS}
    if isinstance(workload, str):
        workload = make_workload(workload, **fields)
    elif fields:
        workload = dataclasses.replace(workload, **fields)
    options = kwargs.get("options")
    if not isinstance(options, LsmOptions):
        options = LsmOptions.from_mapping(options or {})
    device_model = load_device(device) if isinstance(device, str) else device
    machine = kwargs.get("machine", "server")
    machine_model = load_machine(machine) if isinstance(machine, str) else machine
    made = make_policy(policy)
    return {
        "policy": made.describe(),
        "policy_source": file_fingerprint(inspect.getfile(type(made))),
        "device": _plain(device_model),
        "machine": _plain(machine_model),
        "workload": _plain(workload),
        "options": options.as_dict(),
        "duration_s": duration_s,
        "seed": kwargs.get("seed", 0),
        "interval_s": kwargs.get("interval_s", 1.0),
        "key_buckets": kwargs.get("key_buckets", DEFAULT_BUCKETS),
        "without": sorted(kwargs.get("without", ())),
        "series": list(series),
    }


def _plain(value: Any) -> Any:
    """A dataclass as its fields (nested), anything else as it is."""
    if dataclasses.is_dataclass(value) and not isinstance(value, type):
        return dataclasses.asdict(value)
    return value
