"""A user audit of input checks: scenario errors blamed on the wrong line and field, Python's
own wording for a non-number option, inapplicable values accepted silently, "wrong type"
without the type, and misspelt flag prefixes taken for whole flags. Each is now refused
with one line naming the file, line, field (or flag) and value."""

from __future__ import annotations

import argparse
import re
from pathlib import Path

import pytest

from conftest import cli_error_line

from lsmsim.cli.main import _parser, main
from lsmsim.scenario import ScenarioError, load_scenario
from lsmsim.sweeps.spec import SweepSpecError, load_sweep_spec

ROOT = Path(__file__).parent.parent
PHASES = """\
duration_s = 10
[workload]
name = "ycsb_a"
num_keys = 1000

[[workload.phases]]
name = "a"
write = 1.0
{a}
[[workload.phases]]
name = "b"
read = 1.0
{b}"""


def _scenario_error(tmp_path: Path, text: str) -> str:
    """The error of loading `text` as a scenario file, which must be refused."""
    path = tmp_path / "s.toml"
    path.write_text(text)
    with pytest.raises(ScenarioError) as error:
        load_scenario(path)
    assert str(error.value).startswith(f"{path}: ")
    return str(error.value)


# -- 1. the line and field a workload error is blamed on ---------------------------------------
@pytest.mark.parametrize("text, expected", [
    ('duration_s = 10\n[workload]\nname = "fillrandom"\nkey_distribution = "zipf"\n',
     "line 4: [workload] key_distribution = 'zipf': workload fillrandom: unknown key "
     "distribution 'zipf'; valid: uniform, zipfian"),
    (PHASES.format(a="ops = 0\n", b=""),
     "line 9: [workload.phases] ops = 0: must be an integer in [1, "),
    (PHASES.format(a="duration_s = 0.0\n", b=""),
     "line 9: [workload.phases] duration_s = 0.0: must be positive and finite"),
    (PHASES.format(a="", b=""),
     "line 6: [workload.phases] workload ycsb_a: phase 'a' needs duration_s or ops"),
    (PHASES.format(a="ops = 10\n", b="scan_length = 0\n"),
     "line 14: [workload.phases] scan_length = 0: phase 'b': scan_length must be"),
    (PHASES.format(a="ops = 10\n", b="key_distribution = \"zipf\"\n"),
     "line 14: [workload.phases] key_distribution = 'zipf': phase 'b': unknown key "
     "distribution"),
])
def test_a_workload_error_names_the_line_and_field_at_fault(tmp_path, text, expected):
    message = _scenario_error(tmp_path, text)
    assert expected in message, message


# -- 2. an option that is no number ---------------------------------------------------------------
def test_an_option_that_is_no_number_says_what_it_must_be(tmp_path, capsys):
    expected = "option max_background_jobs: expected an integer, got 'many'"
    line = cli_error_line(["run", "fillrandom", "--set", "max_background_jobs=many"], capsys)
    assert line == f"lsmsim: error: --set: {expected}"
    line = cli_error_line(["run", "fillrandom", "--set", "bloom_bits_per_key=lots"], capsys)
    assert line.endswith("option bloom_bits_per_key: expected a number, got 'lots'")
    message = _scenario_error(tmp_path, 'duration_s = 10\n[workload]\nname = "fillrandom"\n'
                                        '[options]\nmax_background_jobs = "many"\n')
    assert f"line 5: [options] max_background_jobs = 'many': {expected}" in message
    sweep = tmp_path / "sweep.toml"
    sweep.write_text('duration_s = 10\n[workload]\nname = "fillrandom"\n[sweep]\n'
                     '"options.max_background_jobs" = [2, "many"]\n')
    with pytest.raises(SweepSpecError) as error:
        load_sweep_spec(sweep)
    assert (f"{sweep}: line 5: [sweep] options.max_background_jobs = 'many': {expected}"
            == str(error.value))


# -- 3. values that cannot apply -------------------------------------------------------------------
def test_readwritepercent_of_a_workload_without_that_mix_is_refused(tmp_path, capsys):
    line = cli_error_line(["run", "fillrandom", "--readwritepercent", "50"], capsys)
    assert line == ("lsmsim: error: workload fillrandom: readwritepercent applies to "
                    "readrandomwriterandom only (its share of gets); leave it out")
    message = _scenario_error(tmp_path, 'duration_s = 10\n[workload]\nname = "ycsb_a"\n'
                                        'readwritepercent = 50\n')
    assert "line 4: [workload] readwritepercent = 50: workload ycsb_a:" in message


def test_repeat_from_phase_must_name_a_phase(tmp_path):
    message = _scenario_error(tmp_path, 'duration_s = 10\n[workload]\nname = "fillrandom"\n'
                                        'repeat_from_phase = 5\n')
    assert ("line 4: [workload] repeat_from_phase = 5: workload fillrandom: repeat_from_phase "
            "applies to a workload with phases; fillrandom has none") in message
    text = PHASES.format(a="ops = 20000\n", b="ops = 20000\n") + "\n"
    text = text.replace("num_keys = 1000\n", "num_keys = 1000\nrepeat_from_phase = 2\n")
    message = _scenario_error(tmp_path, text)
    assert ("line 5: [workload] repeat_from_phase = 2: workload ycsb_a: repeat_from_phase "
            "must name one of 2 phases (0 to 1) or be -1, got 2") in message


@pytest.mark.parametrize("release", ["0.0.1", "5.6.9"])
def test_a_release_older_than_any_modelled_is_refused(release, capsys):
    line = cli_error_line(["run", "fillrandom", "--rocksdb-version", release], capsys)
    assert line == (f"lsmsim run: error: argument --rocksdb-version: '{release}' is older than "
                    "the oldest RocksDB lsmsim models (5.7): what it lacked is not modelled")


def test_reproduce_refuses_names_with_all(tmp_path, monkeypatch, capsys):
    monkeypatch.chdir(tmp_path)  # where reproduce-out/ would be written, were it run
    line = cli_error_line(["reproduce", "adoc_batch", "--all"], capsys)
    assert line == ("lsmsim: error: --all runs every experiment; give it or the names "
                    "(adoc_batch), not both")
    assert main(["reproduce", "--list", "adoc_batch"]) == 0  # --list lists those named
    assert capsys.readouterr().out.splitlines()[0].startswith("adoc_batch ")


# -- 4. wrong types and misspelt top-level fields ----------------------------------------------
@pytest.mark.parametrize("text, expected", [
    ('duration_s = "ten"\n[workload]\nname = "fillrandom"\n',
     "line 1: duration_s = 'ten': wrong type: expected a number"),
    ('[workload]\nname = "fillrandom"\nthreads = 1.5\n',
     "line 3: [workload] threads = 1.5: wrong type: expected an integer"),
    ('[workload]\nname = "fillrandom"\nwrite_rate_limit = true\n',
     "line 3: [workload] write_rate_limit = True: wrong type: expected a string or a number"),
    ('db_bench_defaults = 1\n[workload]\nname = "fillrandom"\n',
     "line 1: db_bench_defaults = 1: wrong type: expected true or false"),
    ('duraton_s = 10\n[workload]\nname = "fillrandom"\n',
     "line 1: duraton_s = 10: unknown field. Did you mean duration_s? Valid fields: "),
])
def test_type_errors_name_the_type_and_misspelt_fields_the_name_meant(tmp_path, text, expected):
    message = _scenario_error(tmp_path, text)
    assert expected in message, message


# -- 5. flags by their whole names only --------------------------------------------------------
def _parsers(parser: argparse.ArgumentParser) -> list[argparse.ArgumentParser]:
    """`parser` and every subcommand's parser under it."""
    found = [parser]
    for action in parser._actions:
        if isinstance(action, argparse._SubParsersAction):
            for sub in dict.fromkeys(action.choices.values()):
                found += _parsers(sub)
    return found


def test_a_flag_prefix_is_no_flag(capsys):
    parsers = _parsers(_parser())
    assert len(parsers) > 10 and not any(p.allow_abbrev for p in parsers)
    line = cli_error_line(["run", "fillrandom", "--dur", "5", "--dev", "hdd", "--pol", "adoc"],
                       capsys)
    assert line == "lsmsim: error: unrecognized arguments: --dur 5 --dev hdd --pol adoc"


def test_no_documented_command_relies_on_a_flag_prefix():
    """A flag in README.md or docs/ that is no lsmsim flag but starts one would be an
    abbreviation (db_bench's flags have underscores; the validation scripts' are their own)."""
    flags = {option for parser in _parsers(_parser()) for action in parser._actions
             for option in action.option_strings}
    scripts = {match for path in [*ROOT.glob("validation/*.py"), *ROOT.glob("benchmarks/*.py")]
               for match in re.findall(r"\"(--[a-z][a-z0-9-]*)\"", path.read_text())}
    documents = [ROOT / "README.md", *sorted((ROOT / "docs").rglob("*.md"))]
    used = {match for path in documents
            for match in re.findall(r"(?<![\w-])--[a-z][a-z0-9-]*(?![\w])", path.read_text())}
    prefixes = sorted(flag for flag in used - flags - scripts
                      if any(full.startswith(flag) for full in flags))
    assert not prefixes


def test_more_keys_than_the_key_size_holds_are_refused(capsys):
    """`--key-size 1` over the default 1e8 keys ran as 1e8 distinct keys (write amplification
    23 on an HDD): one byte tells 256 keys apart."""
    line = cli_error_line(["run", "fillrandom", "--key-size", "1", "--duration", "5"], capsys)
    assert line.endswith("num_keys 100000000 is more keys than key_size 1 can tell apart "
                         "(256): give a larger key_size or fewer keys"), line


def test_db_bench_keys_shorter_than_num_needs_repeat():
    """db_bench writes a key's number into its first min(key_size, 8) bytes, so 1-byte keys
    repeat after 256 (GenerateKeyFromInt): the simulated key space is that."""
    from lsmsim.traces.db_bench import setup_from_flags
    setup = setup_from_flags(["--benchmarks=fillrandom", "--key_size=1", "--num=100000"])
    assert (setup.workload.num_keys, setup.workload.max_ops) == (256, 100000)
    assert setup_from_flags(["--benchmarks=fillrandom", "--num=100000"]).workload.num_keys == 100000
