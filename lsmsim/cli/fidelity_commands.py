"""The fidelity subcommands, registered by lsmsim/cli/main.py: `lsmsim validate DIR... --machine M`
(re-simulate real runs and print the model's error beside the noise floor) and
`lsmsim calibrate DIR... --out machine.toml` (fit a machine profile to real runs)."""

from __future__ import annotations

import argparse
import json
import sys
from pathlib import Path
from typing import TYPE_CHECKING, Any

from lsmsim.cli.arguments import (add_without_flag, non_negative_int, path_argument, positive_int,
                                  positive_number, seed_count)
from lsmsim.machine import COST_FIELDS, FITTED_BY_DEFAULT, load_machine, machine_toml
from lsmsim.output_path import file_stem, output_file, output_folder
from lsmsim.sweeps.progress import Progress, add_progress_flags, progress_wanted

if TYPE_CHECKING:
    from lsmsim.fidelity.calibration import Calibration
    from lsmsim.fidelity.device_calibration import DeviceFit
    from lsmsim.fidelity.trace_validation import ValidationReport


def user_errors() -> tuple[type[Exception], ...]:
    """Errors these subcommands report as one line (imported here, on an error only: the
    calibration code is not loaded for `lsmsim run`)."""
    from lsmsim.fidelity.calibration import CalibrationError
    from lsmsim.fidelity.device_calibration import DeviceCalibrationError
    return (CalibrationError, DeviceCalibrationError)


def register(commands: Any) -> None:
    """Add `validate` and `calibrate` to the CLI's subcommands."""
    validate = commands.add_parser(
        "validate", help="re-simulate real runs' own command lines and print the model's error")
    _common(validate)
    validate.add_argument("--machine", required=True, help="machine profile name or .toml file")
    validate.add_argument("--device-dir", type=path_argument, metavar="DIR",
                          help="fitted device files (calibrate --device-out): a run on preset "
                               "NAME uses DIR/NAME.toml where it exists")
    add_without_flag(validate, "simulate with a resource-model mechanism switched off, to see "
                               "what it does to the errors")
    validate.add_argument("--seeds", type=seed_count, default=1, metavar="N",
                          help="simulate each run with N seeds (counted up from its --seed) and "
                               "print the seeds' spread beside the real repeats' (default 1)")
    validate.add_argument("--json", action="store_true", help="print the report as JSON")
    validate.add_argument("--out", type=path_argument,
                          help="folder for validation.json and one overlay plot per run")
    validate.set_defaults(handler=_validate)
    calibrate = commands.add_parser("calibrate", help="fit a machine profile to real runs")
    _common(calibrate)
    calibrate.add_argument("--out", type=path_argument, required=True,
                           help="machine profile to write")
    calibrate.add_argument("--machine", default="server",
                           help="base profile: cores and the costs not fitted (default: server)")
    calibrate.add_argument("--fit", default=",".join(FITTED_BY_DEFAULT),
                           help=f"costs to fit, comma-separated, of: {', '.join(COST_FIELDS)} "
                                f"(default: {','.join(FITTED_BY_DEFAULT)})")
    calibrate.add_argument("--no-measure", action="store_true",
                           help="keep the base profile's flush and compaction CPU instead of "
                                "measuring them from the LOGs")
    calibrate.add_argument("--device-out", type=path_argument, metavar="DIR",
                           help="also fit each run device's write bandwidth and two-stream "
                                "scaling to the runs' flush and compaction jobs, write "
                                "DIR/<preset>.toml where identified, and simulate on it")
    calibrate.add_argument("--holdout", type=path_argument, nargs="+", default=[], metavar="DIR",
                           help="runs to validate the fitted profile on (not fitted)")
    calibrate.add_argument("--max-evaluations", type=positive_int, default=40,
                           help="bound on the optimizer's loss evaluations (default 40); the "
                                "coarse scan of each fitted cost before it and the "
                                "sensitivities after it take more")
    calibrate.set_defaults(handler=_calibrate)


def _common(parser: argparse.ArgumentParser) -> None:
    parser.add_argument("folders", type=path_argument, nargs="+", metavar="DIR",
                        help="real run folders")
    parser.add_argument("--device", help="device preset or .toml for every run (default: from "
                                         "the folder's StorageMaterial.<name>, else nvme)")
    parser.add_argument("--max-seconds", type=positive_number,
                        help="compare only each run's first seconds (faster on long runs)")
    parser.add_argument("--workers", type=positive_int, default=2,
                        help="simulation processes (default 2)")
    parser.add_argument("--host-speed", choices=("log", "jobs", "profile"), default="log",
                        help="log (default): simulate each run with the profile's CPU costs "
                             "scaled to the CPU its own flushes and compactions took (hosts "
                             "of one kind differ by tens of percent from day to day), its "
                             "writer's to the writer thread's CPU per put where its "
                             "threads.csv has it; jobs: every cost at the jobs' scale; "
                             "profile: every run on the profile as it is, with none of the "
                             "other work a capture recorded taken from its cores")
    parser.add_argument("--seed", type=non_negative_int,
                        help="seed of the simulations (default: each run's own db_bench --seed)")
    add_progress_flags(parser)


def _validate(args: argparse.Namespace) -> int:
    """The report of the runs that worked, each failed run named on its own line; on
    Ctrl-C, the report (and validation.json) of the runs done, without overlay plots."""
    from lsmsim.fidelity.trace_validation import format_report, validate
    from lsmsim.sweeps.worker_pool import Interrupted

    out = output_folder(args.out) if args.out else None
    stopped: Interrupted | None = None
    try:
        report = validate(args.folders, load_machine(args.machine), device=args.device,
                          max_seconds=args.max_seconds, workers=args.workers,
                          device_dir=args.device_dir,
                          progress="runs" if progress_wanted(args) else "",
                          without=args.without, seed=args.seed, seeds=args.seeds,
                          host_speed=args.host_speed)
    except Interrupted as stop:
        report, stopped = stop.results, stop
    document = report.as_dict()
    print(json.dumps(document, indent=2) if args.json else format_report(report))
    _print_import_warnings(report)
    if out:
        out.mkdir(parents=True, exist_ok=True)
        (out / "validation.json").write_text(json.dumps(document, indent=2) + "\n")
        if stopped is None:
            from lsmsim.plot.validation_overlay import save_overlay
            for result in report.results:
                save_overlay(result.real, result.sim, out / f"{file_stem(result.label)}.png",
                             f"{result.label} on {report.machine} / {result.device}")
        if not args.json:
            print(f"validation.json {'' if stopped else 'and overlay plots '}written to {out}/")
    if stopped is not None:
        print(f"lsmsim: {stopped.summary()}", file=sys.stderr)
        return stopped.exit_status
    if report.failed:
        print(f"lsmsim: {len(report.failed)} of {len(args.folders)} runs failed: "
              f"{', '.join(report.failed)}", file=sys.stderr)
        return 1
    return 0


def _calibrate(args: argparse.Namespace) -> int:
    """Ctrl-C during the fit writes the best profile seen so far, marked as such in its
    [calibration] notes, and skips the reports on the runs."""
    from lsmsim.fidelity.calibration import Calibration, calibrate, expected_evaluations
    from lsmsim.fidelity.trace_validation import check_run_folders
    from lsmsim.sweeps.worker_pool import Interrupted

    output_file(args.out, suffixes=(".toml",))
    if args.device_out is not None:
        output_folder(args.device_out, "--device-out")
    check_run_folders(args.holdout)  # before the fit, not after it: a typo costs no minutes
    fit = [name.strip() for name in args.fit.split(",") if name.strip()]
    progress = Progress(expected_evaluations(args.max_evaluations, len(fit)), "loss evaluations",
                        enabled=progress_wanted(args))
    try:
        result = calibrate(args.folders, load_machine(args.machine), fit=fit,
                           device=args.device, max_seconds=args.max_seconds,
                           max_evaluations=args.max_evaluations, workers=args.workers,
                           name=args.out.stem, measure=not args.no_measure,
                           device_out=args.device_out, seed=args.seed,
                           progress=progress)
    except Interrupted as stop:
        progress.close()
        if not isinstance(stop.results, Calibration):
            print(f"lsmsim: {stop.signal_name} before the first loss evaluation finished: "
                  "no profile written", file=sys.stderr)
            return stop.exit_status
        _write_profile(args.out, stop.results)
        done = stop.results.evaluations
        print(f"lsmsim: {stop.signal_name} after {done} loss evaluation{'s' * (done != 1)}: "
              f"the best profile so far (loss {stop.results.loss:.4f}) written to {args.out}; "
              "not a finished fit", file=sys.stderr)
        return stop.exit_status
    progress.close()
    _write_profile(args.out, result)
    failed = _print_calibration(args, result)
    if failed:
        print(f"lsmsim: {len(failed)} run{'s' * (len(failed) != 1)} could not be validated on "
              f"the written profile: {', '.join(failed)}", file=sys.stderr)
        return 1
    return 0


def _print_import_warnings(report: ValidationReport) -> None:
    """What each real run's import skipped or cut, as `trace import` says it."""
    from lsmsim.cli.trace_commands import print_warnings

    for result in report.results:
        print_warnings(getattr(result.real, "warnings", []))


def _write_profile(path: Path, result: Calibration) -> None:
    path.parent.mkdir(parents=True, exist_ok=True)
    path.write_text(machine_toml(result.profile, result.record()))


def _print_calibration(args: argparse.Namespace, result: Calibration) -> list[str]:
    """What was fitted and measured, then the report of the fitted and held-out runs on
    the written profile, validated together, with each group's median error and what each
    run's import skipped; returns the runs that failed there (a held-out folder that is
    not a run)."""
    from lsmsim.fidelity.trace_comparison import median_abs
    from lsmsim.fidelity.trace_validation import format_report, validate

    print(f"fitted {', '.join(f'{k} = {v:g}' for k, v in result.fitted.items())}; measured from "
          f"the runs (LOGs, threads.csv): "
          f"{', '.join(f'{k} = {v:g}' for k, v in result.measured.items()) or 'none'}")
    print(f"loss {result.start_loss:.4f} -> {result.loss:.4f} in {result.evaluations} "
          f"evaluations ({result.cpu_s:.0f} CPU s, {result.wall_s:.0f} s wall)")
    print("relative loss change at -10% / +10% of each cost: " + ", ".join(
        f"{k} {v['minus']:+.2f}/{v['plus']:+.2f}" for k, v in result.sensitivity.items()))
    for note in result.notes:
        print(f"note: {note}")
    for fit in result.device_fits:
        print(format_device_fit(fit, result.device_files.get(fit.preset.name)))
    print(f"profile written to {args.out}")
    # Validated together, as `lsmsim validate` on the same folders would: runs of one folder
    # share one host speed whether they were fitted or held out.
    report = validate([*args.folders, *args.holdout], result.profile, device=args.device,
                      max_seconds=args.max_seconds, workers=args.workers,
                      device_dir=args.device_out, seed=args.seed, host_speed=args.host_speed)
    print("\nthe runs on the written profile:\n" + format_report(report))
    held_out = {Path(folder) for folder in args.holdout}
    for title, held in (("fitted", False), ("held-out", True)):
        errors = [r.errors["throughput"] for r in report.results
                  if (r.path in held_out) == held]
        if errors:
            print(f"{title} runs: {len(errors)}, median |throughput error| "
                  f"{100 * median_abs(errors):.1f}%")
    _print_import_warnings(report)
    return list(report.failed)


def format_device_fit(fit: DeviceFit, path: str | None) -> str:
    """One line per device: fitted figures against the preset's, or why it was kept."""
    record = fit.record()
    preset = record["preset_values"]
    head = (f"device {fit.preset.name}: {fit.jobs} jobs ({fit.overlapped_jobs} overlapped), "
            f"blocked {100 * fit.blocked_share:.0f}% of their time; ")
    if not fit.identified:
        return head + "; ".join(fit.notes)
    fitted = record["fitted"]
    figures = ", ".join(f"{k} {v:g} (preset {preset[k]:g})" for k, v in fitted.items())
    return (head + f"{figures}; replay loss {fit.preset_loss:.4f} -> {fit.loss:.4f}; "
            f"written to {path}" + "".join(f"\n  note: {n}" for n in fit.notes))
