"""lsmsim: a discrete-event simulator of RocksDB-style LSM key-value stores and their
write stalls. Start with `simulate()`; see README.md."""

from pathlib import Path as _Path

# Installed, the plug-in folders are subpackages (setup.cfg's package_dir: lsmsim.policies,
# lsmsim.device_models, lsmsim.scenarios). In a source checkout they sit beside this package
# at the repository's top level: the package's path reaches them there too.
_CHECKOUT = _Path(__file__).resolve().parent.parent
if (_CHECKOUT / "setup.cfg").is_file() and (_CHECKOUT / "policies" / "__init__.py").is_file():
    __path__.append(str(_CHECKOUT))

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
        from lsmsim.traces.trace_import import import_trace
        return import_trace
    raise AttributeError(f"module 'lsmsim' has no attribute {name!r}")
