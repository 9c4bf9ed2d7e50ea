"""Naming a policy's mistake: an exception raised out of a run, traced back to the policy
hook (or the policy's own SimPy process, or its compaction picker) it escaped from, as one
PolicyError naming the policy, the hook and the exception (`lsmsim.simulation.simulate`
raises it, chained to the original). One catch around the run, nothing per hook call.
"""

from __future__ import annotations

import types
from typing import Any, Iterator

import simpy

from lsmsim.policy import Policy, PolicyError

_TIMEOUT_INIT = simpy.events.Timeout.__init__.__code__
_PROCESS_RESUME = simpy.events.Process._resume.__code__
_DB_CONTROL = "lsmsim.db_control"
_DB_VIEW = "lsmsim.db_view"


def policy_failure(policy: Policy, picker: Any, exc: Exception,
                   engine_processes: frozenset[types.CodeType]
                   ) -> tuple[PolicyError, BaseException] | None:
    """`exc`, raised out of a run, as one PolicyError naming the policy, the hook (or the
    policy's own process, or its compaction picker's method) it escaped from, and the
    exception, with the original to chain it to. None when no code of the policy's is in
    its traceback (the engine's own error), or when it is a PolicyError that already names
    the policy (an answer the engine checked). `engine_processes`: the generators of the
    run's own processes; any other process is one the policy started."""
    frames, original = _run_frames(exc)
    if isinstance(original, PolicyError) and str(original).startswith(f"policy {policy.name}:"):
        return None
    if picker is not None and not _picker_codes(picker):
        picker = None   # the engine's own picker: its errors are the engine's
    codes = _policy_codes(policy, picker)
    innermost = frames[-1][0]
    if isinstance(original, RuntimeError) and innermost.f_code is _PROCESS_RESUME:
        # SimPy refused what a process yielded (`yield 1.0` for env.timeout(1.0)).
        generator = getattr(innermost.f_locals.get("self"), "_generator", None)
        code = getattr(generator, "gi_code", None)
        if code is None or code in engine_processes:
            return None
        yielded = innermost.f_locals.get("event")
        return (PolicyError(f"policy {policy.name}: its process "
                            f"{codes.get(code) or code.co_qualname} yielded {yielded!r}; "
                            "yield a SimPy event, such as env.timeout(seconds)"), original)

    def own(frame: types.FrameType, starts_process: bool) -> bool:
        if starts_process and frame.f_code not in engine_processes:
            return True   # a process the policy started, wherever its generator is defined
        return frame.f_code in codes

    entry = None  # the last frame where the engine (or SimPy) called into the policy
    called_from_policy = False
    for index, (frame, starts_process) in enumerate(frames):
        policy_frame = own(frame, starts_process)
        if policy_frame and (starts_process or not called_from_policy):
            entry = index
        called_from_policy = policy_frame
    if entry is None:
        return None
    frame, starts_process = frames[entry]
    code = frame.f_code
    # A method by the name the engine calls it by (a hook may be a function of another name).
    name = (codes.get(code) or (code.co_name if frame.f_locals.get("self") is policy
                                else code.co_qualname))
    if starts_process:
        where = f"its process {name}"
    elif picker is not None and (frame.f_locals.get("self") is picker
                                 or code in _picker_codes(picker)):
        where = f"its compaction picker's {name}"
    else:
        where = name
    if isinstance(original, ValueError) and innermost.f_code is _TIMEOUT_INIT:
        delay = innermost.f_locals.get("delay")
        return (PolicyError(f"policy {policy.name}: {where} called env.timeout({delay!r}); "
                            "give a delay of 0 seconds or more"), original)
    for inner, _ in frames[entry + 1:]:   # the view or control call it failed in, if any
        module = inner.f_globals.get("__name__")
        if module in (_DB_CONTROL, _DB_VIEW):
            owner = "control" if module == _DB_CONTROL else "view"
            where = f"{where}: {owner}.{inner.f_code.co_name}"
            break
    message = str(original)
    return (PolicyError(f"policy {policy.name}: {where} raised {type(original).__name__}"
                        + (f": {message}" if message else "")), original)


def _run_frames(exc: BaseException) -> tuple[list[tuple[types.FrameType, bool]], BaseException]:
    """The frames `exc` passed through, outermost first, each with whether it is the first
    frame of a SimPy process, and the original exception. An exception a process raised
    is raised again by SimPy as a copy whose cause is the original (`Environment.step`,
    `Process._resume`); the original's frames follow, its first the process's generator."""
    frames: list[tuple[types.FrameType, bool]] = []
    starts_process = False
    while True:
        tb = exc.__traceback__
        first = True
        while tb is not None:
            frames.append((tb.tb_frame, starts_process and first))
            first = False
            tb = tb.tb_next
        cause = exc.__cause__
        if (cause is None or type(cause) is not type(exc) or cause.args != exc.args
                or cause.__traceback__ is None):
            return frames, exc
        exc, starts_process = cause, True


def _policy_codes(policy: Policy, picker: Any) -> dict[types.CodeType, str]:
    """The code of every method of the policy's own classes (not the base `Policy`'s
    defaults, which are the engine's: an error there is lsmsim's, not the policy's) and of
    its own compaction picker, each with the name it is called by, and of the functions
    defined inside them (name "")."""
    codes: dict[types.CodeType, str] = {}
    for cls in type(policy).__mro__:
        if cls is Policy or cls is object:
            break
        _add_class_codes(codes, cls)
    if picker is not None:
        for code, name in _picker_codes(picker).items():
            codes.setdefault(code, name)
    return codes


def _picker_codes(picker: Any) -> dict[types.CodeType, str]:
    """`_policy_codes` of a policy's own compaction picker (not the engine's pickers, nor
    the classes of lsmsim's they build on)."""
    codes: dict[types.CodeType, str] = {}
    for cls in type(picker).__mro__[:-1]:
        module = cls.__module__
        if module == "lsmsim" or (module.startswith("lsmsim.")
                                  and not module.startswith("lsmsim.policies")):
            continue
        _add_class_codes(codes, cls)
    return codes


def _add_class_codes(codes: dict[types.CodeType, str], cls: type) -> None:
    for name, value in vars(cls).items():
        if isinstance(value, (staticmethod, classmethod)):
            value = value.__func__
        elif isinstance(value, property):
            value = value.fget
        while value is not None:
            code = getattr(value, "__code__", None)
            if isinstance(code, types.CodeType):
                codes.setdefault(code, name)
                for nested in _nested_codes(code):
                    codes.setdefault(nested, "")
            value = getattr(value, "__wrapped__", None)


def _nested_codes(code: types.CodeType) -> Iterator[types.CodeType]:
    """The code of the functions (closures, generators, lambdas) defined inside `code`."""
    for const in code.co_consts:
        if isinstance(const, types.CodeType):
            yield const
            yield from _nested_codes(const)
