"""`lsmsim tune POLICY --param NAME=LOW..HIGH ... --objective METRIC`: search a policy's
declared parameters (`Policy.parameters`) for the best value of a summary metric, with
Optuna (`pip install '.[tune]'` in the checkout).

Trials run in batches through the shared executor (`lsmsim.sweeps.executor`: the local
pool or Dask, the result cache in front) with Optuna's ask-and-tell interface: the study
lives in this process (in memory, or in `--storage`, e.g. sqlite:///tune.db, to resume
it later), so workers need neither Optuna nor access to the study's storage, and a
trial is an ordinary cell. The sampler is seeded and each batch is told in the order it
was asked, so the same command gives the same trials on any executor. The policy's
defaults are the first trial whenever they lie in the searched ranges, so the best found
is never worse than the defaults on the objective.

    --param increase_threads=1..8          an int or size parameter, uniform
    --param tuning_gap_s=0.5..5:log        a float, sampled on a log scale
    --param rules=paper,code               a choice (or a bool: true,false)
"""

from __future__ import annotations

import csv
import dataclasses
import difflib
import math
from dataclasses import dataclass, field
from pathlib import Path
from typing import Any, Sequence

from lsmsim.policy import Param, PolicyError
from lsmsim.sweeps.progress import Progress
from lsmsim.policies import number_or_text

# Short names of the usual objectives, and the direction each is better in.
OBJECTIVES = {
    "throughput": "throughput_ops_per_s",
    "tail_throughput": "tail_throughput_p99_ops_per_s",
    "tail_throughput_p999": "tail_throughput_p999_ops_per_s",
    "latency_p99": "latency_p99_us",
    "latency_p999": "latency_p999_us",
    "stall_time": "stall_time_s",
    "write_amplification": "write_amplification",
}
_LOWER_IS_BETTER = ("latency", "stall", "amplification", "peak_memtable", "_count")


class TuneError(ValueError):
    """A malformed `--param`, a parameter the policy does not declare, an unknown metric,
    or Optuna missing."""


@dataclass(frozen=True)
class SearchParam:
    """One searched parameter: a numeric range (`low`..`high`, on a log scale with `log`)
    or a list of `choices`."""

    name: str
    kind: str  # "int", "float" or "choice"
    low: float = 0.0
    high: float = 0.0
    log: bool = False
    choices: tuple[Any, ...] = ()

    def suggest(self, trial: Any) -> Any:
        """The value Optuna's `trial` picks for this parameter."""
        if self.kind == "choice":
            return trial.suggest_categorical(self.name, list(self.choices))
        if self.kind == "int":
            return trial.suggest_int(self.name, int(self.low), int(self.high), log=self.log)
        return trial.suggest_float(self.name, self.low, self.high, log=self.log)

    def contains(self, value: Any) -> bool:
        if self.kind == "choice":
            return value in self.choices
        return self.low <= value <= self.high


def parse_param(policy: str, text: str, declared: dict[str, Param]) -> SearchParam:
    """`NAME=LOW..HIGH[:log]` or `NAME=A,B,...` for a parameter `declared` by the policy;
    bounds and choices are parsed and range-checked as the parameter's own values are."""
    name, sep, spec = text.partition("=")
    name, spec = name.strip(), spec.strip()
    if not sep or not name or not spec:
        raise TuneError(f"--param {text!r}: expected NAME=LOW..HIGH or NAME=A,B (e.g. "
                        "increase_threads=1..8)")
    if name not in declared:
        close = difflib.get_close_matches(name, list(declared), n=1)
        hint = f" Did you mean {close[0]}?" if close else ""
        raise TuneError(f"--param {text!r}: policy {policy} has no parameter {name!r}.{hint} "
                        f"Its parameters: {', '.join(sorted(declared)) or 'none'}")
    param = declared[name]
    try:
        if ".." in spec:
            if param.kind in ("bool", "choice"):
                raise TuneError(f"--param {text!r}: {name} is a {param.kind}: list its "
                                f"values, e.g. {name}={','.join(param.choices or ('true', 'false'))}")
            bounds, _, scale = spec.partition(":")
            if scale not in ("", "log"):
                raise TuneError(f"--param {text!r}: the scale after ':' may only be 'log'")
            low_text, _, high_text = bounds.partition("..")
            low = param.parse(policy, name, number_or_text(low_text.strip()))
            high = param.parse(policy, name, number_or_text(high_text.strip()))
            if not low < high:
                raise TuneError(f"--param {text!r}: the range is empty (low must be below high)")
            if scale == "log" and low <= 0:
                raise TuneError(f"--param {text!r}: a log scale needs a positive low end")
            kind = "int" if param.kind in ("int", "size") else "float"
            return SearchParam(name, kind, low, high, log=scale == "log")
        choices = tuple(param.parse(policy, name, number_or_text(v.strip()))
                        for v in spec.split(",") if v.strip())
    except PolicyError as exc:
        raise TuneError(f"--param {text!r}: {exc}") from None
    if len(set(choices)) < 2:
        raise TuneError(f"--param {text!r}: give a range LOW..HIGH or at least two values")
    return SearchParam(name, "choice", choices=choices)


def check_search_space(policy: str, space: Sequence[SearchParam]) -> None:
    """Each parameter searched once and none that `policy` fixes (`adoc:rules=code`): Optuna
    keeps the first of two ranges of a name without a word, and a fixed parameter searched
    as well would give each trial's policy the parameter twice."""
    fixed = {item.partition("=")[0].strip() for item in policy.partition(":")[2].split(",")}
    seen: set[str] = set()
    for param in space:
        if param.name in seen:
            raise TuneError(f"--param {param.name}: given twice")
        if param.name in fixed:
            raise TuneError(f"--param {param.name}: the policy {policy!r} fixes it; search it "
                            "or fix it, not both")
        seen.add(param.name)


def objective_metric(name: str, known: Sequence[str]) -> str:
    """The summary metric an objective names (a short name of OBJECTIVES or the metric);
    one that is not among `known` (`summary_metrics`) is an error that says what was meant."""
    metric = OBJECTIVES.get(name, name)
    if metric not in known:
        close = difflib.get_close_matches(name, [*OBJECTIVES, *known], n=2)
        hint = f" Did you mean {' or '.join(close)}?" if close else ""
        raise TuneError(f"--objective {name!r}: not a metric of a run's summary.{hint} Short "
                        f"names: {', '.join(OBJECTIVES)}; or any numeric summary field "
                        "(lsmsim run ... writes them to summary.json)")
    return metric


def summary_metrics(policy: str, run: tuple[Any, ...]) -> list[str]:
    """The numeric fields of the summary of `run` (device, workload, seconds, simulate
    arguments, as trials run) with `policy`, from one simulated second of it."""
    from lsmsim.sweeps.compare import run_cell

    device, workload, _, kwargs = run
    cell = run_cell(policy, device, workload, 1.0, dict(kwargs))
    if cell.error:
        raise TuneError(f"the run to tune fails: {cell.error}")
    return sorted(key for key, value in cell.metrics.items()
                  if isinstance(value, (int, float)) and not isinstance(value, bool))


def lower_is_better(metric: str) -> bool:
    """Whether smaller values of `metric` are better (latencies, stalls, amplification)."""
    return any(word in metric for word in _LOWER_IS_BETTER)


@dataclass
class Trial:
    """One evaluated point: its number, parameter values, objective (NaN if it failed)
    and error."""

    number: int
    params: dict[str, Any]
    value: float = math.nan
    error: str = ""


@dataclass
class TuneResult:
    """Every trial in order, the best, and the policy's defaults' objective."""

    policy: str
    metric: str
    minimize: bool
    trials: list[Trial] = field(default_factory=list)
    default_value: float = math.nan
    defaults: dict[str, Any] = field(default_factory=dict)

    @property
    def best(self) -> Trial | None:
        done = [t for t in self.trials if math.isfinite(t.value)]
        if not done:
            return None
        pick = min if self.minimize else max
        return pick(done, key=lambda t: (t.value, -t.number) if not self.minimize
                    else (t.value, t.number))


def policy_spec(policy: str, values: dict[str, Any]) -> str:
    """`policy` (a name, perhaps with fixed parameters) with `values` added."""
    if not values:
        return policy
    items = ",".join(f"{k}={v!r}" if isinstance(v, float) else f"{k}={v}"
                     for k, v in values.items())
    return policy + ("," if ":" in policy else ":") + items


def tune(policy: str, space: Sequence[SearchParam], metric: str, run: tuple[Any, ...],
         trials: int, execution: Any, minimize: bool | None = None, seed: int = 0,
         batch: int | None = None, storage: str | None = None,
         study_name: str | None = None) -> TuneResult:
    """Search `space` for the best `metric` of `policy` on the run `run` (the
    `compare.run_cell` arguments after the policy: device, workload, seconds, simulate
    keywords) in `trials` trials, `batch` at a time (default: the executor's workers).
    The defaults come first when they lie in `space`. Raises `worker_pool.Interrupted`
    carrying the result so far on Ctrl-C or SIGTERM."""
    try:
        import optuna
    except ImportError:
        raise TuneError("lsmsim tune needs Optuna: pip install optuna (or '.[tune]' in the "
                        "lsmsim checkout)") from None
    from lsmsim.sweeps.compare import run_cells
    from lsmsim.sweeps.worker_pool import Interrupted
    from lsmsim.policies import make_policy

    base = make_policy(policy)
    minimize = lower_is_better(metric) if minimize is None else minimize
    optuna.logging.set_verbosity(optuna.logging.WARNING)
    study = _open_study(optuna, minimize, seed, storage, study_name)
    defaults = {p.name: base.params[p.name] for p in space}
    result = TuneResult(policy, metric, minimize, defaults=defaults)
    if all(p.contains(defaults[p.name]) for p in space) and not study.trials:
        study.enqueue_trial(defaults)
    batch = max(1, batch or execution.workers)
    progress = Progress(trials, "trials", enabled=execution.progress)
    quiet = dataclasses.replace(execution, progress=False)  # one line for the whole search
    try:
        result.default_value = _values(run_cells([(policy, *run)], execution=quiet),
                                       metric)[0][0]
        while len(result.trials) < trials:
            asked = [study.ask() for _ in range(min(batch, trials - len(result.trials)))]
            points = [{p.name: p.suggest(t) for p in space} for t in asked]
            specs, errors = [], {}
            for index, point in enumerate(points):
                spec = policy_spec(policy, point)
                try:
                    make_policy(spec)  # an order such as min_threads <= max_threads
                except PolicyError as exc:
                    errors[index] = str(exc)
                    continue
                specs.append((index, (spec, *run)))
            try:
                cells = run_cells([s for _, s in specs], execution=quiet)
            except Interrupted as stop:
                _tell(study, result, asked, points, specs, stop.results, errors, metric)
                raise stop.carrying(result) from None
            failures = _tell(study, result, asked, points, specs, cells, errors, metric)
            progress.advance(count=len(asked) - failures)
            for _ in range(failures):
                progress.advance(failed=True)
    except Interrupted as stop:
        raise stop.carrying(result) from None
    finally:
        progress.close()
    return result


def _open_study(optuna: Any, minimize: bool, seed: int, storage: str | None,
                study_name: str | None) -> Any:
    """A new study, or the one `study_name` names in `storage`; a storage URL that cannot be
    opened (malformed, its database driver missing, an unwritable file) is a TuneError
    naming it, before any trial."""
    try:
        return optuna.create_study(
            direction="minimize" if minimize else "maximize", storage=storage,
            study_name=study_name, load_if_exists=storage is not None,
            sampler=optuna.samplers.TPESampler(seed=seed))
    except Exception as exc:  # SQLAlchemy's URL, driver and connection errors share no base
        if storage is None:
            raise
        why = (str(exc).strip().splitlines() or [type(exc).__name__])[0]
        raise TuneError(f"--storage {storage!r}: cannot open the study: {why}") from None


def _values(cells: Sequence[Any], metric: str) -> list[tuple[float, str]]:
    """(objective, error) of each cell (NaN and the reason when it has no figure)."""
    out = []
    for cell in cells:
        if cell is None:
            out.append((math.nan, "not run: interrupted"))
        elif cell.error:
            out.append((math.nan, cell.error))
        elif metric not in cell.metrics:
            out.append((math.nan, f"no metric {metric!r} in the run's summary"))
        else:
            value = cell.metrics[metric]
            out.append((value, "" if math.isfinite(value) else f"{metric} is {value}"))
    return out


def _tell(study: Any, result: TuneResult, asked: list[Any], points: list[dict[str, Any]],
          specs: list[tuple[int, Any]], cells: Sequence[Any], errors: dict[int, str],
          metric: str) -> int:
    """Tell the study every asked trial's outcome, in the order asked; how many failed."""
    import optuna

    outcome = dict(errors)
    values: dict[int, float] = {}
    for (index, _), (value, error) in zip(specs, _values(cells, metric)):
        if error:
            outcome[index] = error
        else:
            values[index] = value
    for index, (trial, point) in enumerate(zip(asked, points)):
        if index in values:
            study.tell(trial, values[index])
            result.trials.append(Trial(trial.number, point, values[index]))
        else:
            study.tell(trial, state=optuna.trial.TrialState.FAIL)
            result.trials.append(Trial(trial.number, point, error=outcome.get(index, "")))
    return len(asked) - len(values)


def format_trials(result: TuneResult) -> str:
    """The trial table: number, each parameter, the objective, and errors."""
    names = list(result.defaults)
    headers = ["trial", *names, result.metric]
    rows = [[str(t.number), *(format_value(t.params.get(n)) for n in names),
             format_value(t.value) if not t.error else f"FAILED {t.error}"] for t in result.trials]
    widths = [max(len(r[i]) for r in [headers, *rows]) for i in range(len(headers))]
    lines = ["  ".join(v.rjust(w) for v, w in zip(row, widths)) for row in [headers, *rows]]
    lines.insert(1, "-" * len(lines[0]))
    return "\n".join(lines)


def format_value(value: Any) -> str:
    """A value as the trial table prints it: whole from 100 up (ops/s, seconds), four
    significant digits below, so one column's numbers line up alike."""
    if isinstance(value, float):
        if not math.isfinite(value):
            return "-"
        return f"{value:,.0f}" if abs(value) >= 100 else f"{value:.4g}"
    return str(value)


def write_trials_csv(result: TuneResult, path: Path) -> None:
    """`trials.csv`: one row per trial (exact numbers)."""
    names = list(result.defaults)
    with open(path, "w", newline="") as handle:
        writer = csv.writer(handle)
        writer.writerow(["trial", *names, result.metric, "error"])
        for t in result.trials:
            writer.writerow([t.number, *(repr(t.params.get(n)) if isinstance(
                t.params.get(n), float) else t.params.get(n) for n in names),
                             repr(t.value), t.error])


def save_plot(result: TuneResult, path: Path) -> None:
    """The objective against each parameter (one panel each), the best trial and the
    defaults' objective marked."""
    import matplotlib.pyplot as plt

    from lsmsim.plot.timeline import save_figure

    names = list(result.defaults)
    figure, axes = plt.subplots(1, len(names), figsize=(3.6 * len(names), 3.2), squeeze=False)
    done = [t for t in result.trials if math.isfinite(t.value)]
    best = result.best
    for axis, name in zip(axes[0], names):
        xs = [t.params[name] for t in done]
        if xs and isinstance(xs[0], (bool, str)):
            xs = [str(x) for x in xs]
        axis.scatter(xs, [t.value for t in done], s=14, alpha=0.7, label="trials")
        if best is not None:
            best_x = best.params[name]
            axis.scatter([str(best_x) if isinstance(best_x, (bool, str)) else best_x],
                         [best.value], s=60, marker="*", color="tab:red", label="best")
        if math.isfinite(result.default_value):
            axis.axhline(result.default_value, color="grey", linestyle="--", linewidth=1,
                         label="defaults")
        axis.set_xlabel(name)
        axis.set_ylabel(result.metric, fontsize=8)
    axes[0][0].legend(fontsize=7)
    figure.suptitle(f"{result.policy}: {result.metric} "
                    f"({'lower' if result.minimize else 'higher'} is better) per trial",
                    fontsize=9)
    figure.tight_layout()
    save_figure(figure, path)


