"""SILK's TOTAL as a sensitivity range for the experiments that run SILK-O.

SILK runs as ADOC's authors configured it: TOTAL (`--SILK_bandwidth_limitation`, the
policy's `bandwidth_MBps`) is the media bandwidth (ADOC §6.1, Table 1; `policies/silk.py`),
and PEAK is 0.75 TOTAL. How a claim's verdict depends on that choice is shown by the same
run at TOTAL x0.5 and x2 (`silk_total_runs`), measured by `with_variants`: the verdict
stays the one at TOTAL x1, the others are printed beside it.
"""

from dataclasses import replace

from lsmsim.device_models import load_device
from lsmsim.sweeps.reproduce import Run
from lsmsim.storage_device import rated_write_bps

SCALES = (0.5, 2.0)


def total_MBps(device: str) -> float:
    """TOTAL as SILK's policy takes it by default: the device's rated write bandwidth."""
    return rated_write_bps(load_device(device)) / 1e6


def scaled_label(label: str, scale: float) -> str:
    return f"{label}-total{scale:g}x"


def silk_total_runs(run: Run) -> tuple[Run, ...]:
    """`run` (a SILK run at the default TOTAL) at each of `SCALES` x its TOTAL."""
    return tuple(replace(run, label=scaled_label(run.label, scale),
                         policy=f"{run.policy}:bandwidth_MBps="
                                f"{scale * total_MBps(run.device_file or run.device):g}")
                 for scale in SCALES)


def total_variants(labels: list[str]) -> dict[str, dict[str, str]]:
    """For `with_variants`: each scale's runs standing in for the SILK runs `labels`."""
    return {f"TOTAL x{scale:g}": {label: scaled_label(label, scale) for label in labels}
            for scale in SCALES}
