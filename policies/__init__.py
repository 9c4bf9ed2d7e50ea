"""Write-stall policies, found by name: `make_policy("rocksdb")`, `make_policy("x:k=v,k2=v2")`.

A user registers their own without editing lsmsim: `register("mine", MyPolicy)` from their
module (or a `lsmsim.policies` entry point of their package), then `--policy mine`.
"""

from __future__ import annotations

import difflib
from importlib.metadata import entry_points
from typing import Any, Callable

from lsmsim.policy import Policy, PolicyError
from lsmsim.policies.adoc import Adoc
from lsmsim.policies.cruisedb import CruiseDb
from lsmsim.policies.dopadb import DopaDb
from lsmsim.policies.rocksdb import RocksDbDefault
from lsmsim.policies.rocksdb_at import RocksDbAutoTuned
from lsmsim.policies.silk import Silk
from lsmsim.policies.two_stage import TwoStageThrottling

__all__ = ["PolicyError", "make_policy", "policy_names", "register"]

_REGISTRY: dict[str, Callable[..., Policy]] = {}


def register(name: str, factory: Callable[..., Policy]) -> None:
    """Make `factory(**params)` available as `--policy name`."""
    _REGISTRY[name] = factory


def policy_names() -> list[str]:
    _load_entry_points()
    return sorted(_REGISTRY)


def _load_entry_points() -> None:
    """Register the `lsmsim.policies` entry points of installed packages (built-in names
    win); scanning them takes milliseconds, so `make_policy` does it only for a name it
    does not know yet."""
    for entry in entry_points(group="lsmsim.policies"):
        if entry.name not in _REGISTRY:
            _REGISTRY[entry.name] = entry.load()


def make_policy(spec: str) -> Policy:
    """`name` or `name:param=value,param=value` -> a Policy instance."""
    name, _, raw = spec.partition(":")
    if name not in _REGISTRY:  # not built in or registered: look at the entry points
        names = policy_names()
        if name not in _REGISTRY:
            close = difflib.get_close_matches(name, names, n=2)
            hint = f" Did you mean {' or '.join(close)}?" if close else ""
            raise PolicyError(f"unknown policy {name!r}.{hint} "
                              f"Valid policies: {', '.join(names)}")
    params: dict[str, Any] = {}
    for item in filter(None, raw.split(",")):
        key, sep, value = item.partition("=")
        if not sep:
            raise PolicyError(f"policy {name}: parameter {item!r} must look like name=value")
        if key.strip() in params:  # a slip: the last of two values would win without a word
            raise PolicyError(f"policy {name}: parameter {key.strip()} given twice")
        params[key.strip()] = number_or_text(value.strip())
    try:
        return _REGISTRY[name](**params)
    except PolicyError:
        raise
    except (TypeError, ValueError) as exc:
        raise PolicyError(f"policy {name}: {exc}") from None


def number_or_text(value: str) -> Any:
    """A policy parameter's value as given on a command line: an int, a float, or the text."""
    for kind in (int, float):
        try:
            return kind(value)
        except ValueError:
            pass
    return value


register("rocksdb", RocksDbDefault)
register("rocksdb-at", RocksDbAutoTuned)
register("silk", Silk)
# The three SILK settings ADOC compares (ADOC §6.1, Table 3).
register("silk-d", Silk.variant("silk-d"))
register("silk-p", Silk.variant("silk-p", max_background_jobs=4, write_buffer_size=128 << 20))
register("silk-o", Silk.variant("silk-o", max_background_jobs=8, write_buffer_size=512 << 20))
register("adoc", Adoc)
# ADOC-T and ADOC-B as the released FEAT_Tuner runs them: its TEA mode (TuneByTEA only,
# TEA_enable=true, FEA_enable=false) and FEA mode (TuneByFEA only); `rules=paper` for §5.
register("adoc-t", Adoc.variant("adoc-t", tune_batch=False, rules="code"))
register("adoc-b", Adoc.variant("adoc-b", tune_threads=False, rules="code"))
register("two-stage", TwoStageThrottling)
register("cruisedb", CruiseDb)
register("dopadb", DopaDb)
