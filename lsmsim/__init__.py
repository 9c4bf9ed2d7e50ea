"""lsmsim: a discrete-event simulator of RocksDB-style LSM key-value stores and their
write stalls. Start with `simulate()`; see README.md."""

from lsmsim.options import LsmOptions, OptionError
from lsmsim.policy import Policy
from lsmsim.result import SimulationResult
from lsmsim.simulation import RunParameterError, simulate
from lsmsim.trace import Trace
from lsmsim.workload import Workload, make_workload

__all__ = ["LsmOptions", "OptionError", "Policy", "RunParameterError", "SimulationResult",
           "Trace", "Workload", "import_trace", "make_workload", "simulate"]
__version__ = "0.1.0"


def __getattr__(name: str):  # type: ignore[no-untyped-def]
    """`import_trace` is imported on first use: the LOG reader is not needed to simulate,
    and `lsmsim run` starts faster without it."""
    if name == "import_trace":
        from lsmsim.trace_import import import_trace
        return import_trace
    raise AttributeError(f"module 'lsmsim' has no attribute {name!r}")
