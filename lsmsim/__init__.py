"""lsmsim: a discrete-event simulator of RocksDB-style LSM key-value stores and their
write stalls. Start with `simulate()`; see README.md."""

import os as _os

# Installed, the plug-in folders are subpackages (setup.cfg's package_dir: lsmsim.policies,
# lsmsim.device_models, lsmsim.scenarios). In a source checkout they sit beside this package
# at the repository's top level: the package's path reaches them there too. (os.path, not
# pathlib: this runs before the command can take a Ctrl-C, so it imports nothing more.)
_CHECKOUT = _os.path.dirname(_os.path.dirname(_os.path.realpath(__file__)))
if (_os.path.isfile(_os.path.join(_CHECKOUT, "setup.cfg"))
        and _os.path.isfile(_os.path.join(_CHECKOUT, "policies", "__init__.py"))):
    __path__.append(_CHECKOUT)

# The public names, imported on first use (PEP 562): `import lsmsim` stays cheap, so that the
# `lsmsim` command's entry point (`lsmsim.cli.console`) is running, and can end a Ctrl-C
# with one line, before the simulator is loaded.
_PUBLIC = {"LsmOptions": "lsmsim.options", "OptionError": "lsmsim.options",
           "Policy": "lsmsim.policy", "RunParameterError": "lsmsim.simulation",
           "SimulationResult": "lsmsim.result", "Trace": "lsmsim.trace",
           "Workload": "lsmsim.workload", "make_workload": "lsmsim.workload",
           "simulate": "lsmsim.simulation", "import_trace": "lsmsim.traces.trace_import"}

__all__ = sorted(_PUBLIC)
__version__ = "0.1.0"


def __getattr__(name: str):  # type: ignore[no-untyped-def]
    """A public name, imported from its module on first use."""
    module = _PUBLIC.get(name)
    if module is None:
        raise AttributeError(f"module 'lsmsim' has no attribute {name!r}")
    from importlib import import_module
    value = getattr(import_module(module), name)
    globals()[name] = value
    return value


def __dir__() -> list[str]:
    return sorted([*globals(), *_PUBLIC])
