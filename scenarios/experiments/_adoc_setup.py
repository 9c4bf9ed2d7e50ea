"""How the ADOC authors ran db_bench, for every experiment that reproduces their figures.

From their harness and results (supermt/ADOC-Rocks-tracker; the LOG headers and stdout.txt
of the runs in validation/traces/adoc-server-600s): db_bench's own option defaults where
they differ from the library's (`DB_BENCH_DEFAULTS`: delayed_write_rate 8 MiB/s, hard
pending-compaction limit 128 GiB), 16 B keys and 1000 B values, and a key space of 45 GiB of
values, `--num` 48,318,382 ("Entries: 48318382" in the stdout of every 1000 B run they left):
an hour of fillrandom overwrites a ~49 GB key space, which bounds the tree and the pending
compaction bytes (`validation/baseline_stalls.py` shows what lsmsim's default 100 M keys do
to their default RocksDB's stalls). The machine is theirs, `server`, and so are the
devices: where `device_models/fitted/adoc-server/` holds a device fitted to their own runs
on it (`lsmsim calibrate --device-out`; the NVMe SSD, the SATA SSD and the HDD), that file
is simulated, with the preset's rated bandwidth for what a policy is told (SILK's TOTAL,
RocksDB-AT's maximum) and for ADOC Fig. 5's limit; PM runs on its preset. The presets are
data sheets, and the authors' drives wrote less than theirs say: on the `nvme` preset
default-scale ADOC wrote 209 kops/s where their §6 runs got 130.5 (128 on the fitted
device; `validation/baseline_stalls.py --section6` measures the same on the fitted ones).

`SCALES` is the fillrandom experiments' scale: the paper runs one hour (§3.1, §6.2) on its
128 GB server (`server`'s 96 GiB page cache); the default runs are 900 s.
"""

from typing import Any, Mapping

from lsmsim.device_models import FITTED_DIR
from lsmsim.options import DB_BENCH_DEFAULTS
from lsmsim.sweeps.paper_scale import PaperScale, Scale
from lsmsim.sweeps.reproduce import Run

KEY_SIZE = 16
VALUE_SIZE = 1000
NUM_KEYS = 45 * 2**30 // VALUE_SIZE
WORKLOAD = {"key_size": KEY_SIZE, "value_size": VALUE_SIZE, "num_keys": NUM_KEYS}
SCALES = PaperScale(
    source="ADOC §3.1: \"We run the fillrandom workload in db_bench ... for one hour\" on a "
           "server \"equipped with 128GB DDR4 DRAM\" (the `server` profile); §6.2: \"the first "
           "3600 seconds of execution\"; key space: the authors' --num (45 GiB of values)",
    default=Scale(900.0),
    paper=Scale(3600.0, paper=True))


SECTION3_RELEASE, SECTION6_RELEASE, SILK_RELEASE = "6.11.0", "7.5.3", "5.7.1"
FITTED_DEVICES = FITTED_DIR / "adoc-server"


def authors_device_file(device: str) -> str | None:
    """The device file fitted to the authors' runs on `device` (a preset's name), if any."""
    path = FITTED_DEVICES / f"{device}.toml"
    return str(path) if path.is_file() else None


def batch_options(memtable_bytes: int) -> dict[str, int]:
    """A batch size as the authors' harness set it for default RocksDB too: the memtable,
    SST files of that size and an L1 four times it (`target_file_size_base`,
    `max_bytes_for_level_base`), the sizing FEAT's SetOptions gives each batch
    (policies/adoc.py; at 64 MB both are db_bench's defaults). Their reruns' statistics show
    it (validation/data/adoc_batch_sweep.csv, supermt/FEAT_data_visual
    Eurosys/pm_server_increasing_batch): PM, 4 jobs, 256 MB memtables: L3 57.68 GB at score
    0.6 and L2 13.99 GB at 1.3 (targets ~96 and ~10.8 GB, so L1's ~1.07 GB), in 300 and 64
    files of 192-219 MB; with 64 MB memtables L3's 57.64 GB scored 2.3, in 1,088 files."""
    return {"write_buffer_size": memtable_bytes, "target_file_size_base": memtable_bytes,
            "max_bytes_for_level_base": 4 * memtable_bytes}


def release_run_on(policy: str, section: int) -> str:
    """The RocksDB release the authors ran `policy` on in §`section` (§3.1: "RocksDB 6.11";
    §6.1: "All schemes, including ADOC but excluding SILK, are based on RocksDB v7.5.3 ...
    SILK is built based on RocksDB 5.7.1"), whose missing mechanisms the run leaves out
    (`lsmsim.mechanisms.absent_in_version`)."""
    if section == 3:
        return SECTION3_RELEASE
    return SILK_RELEASE if policy.startswith("silk") else SECTION6_RELEASE


def adoc_run(label: str, device: str, policy: str = "rocksdb", duration_s: float = 900.0,
             options: Mapping[str, Any] | None = None, section: int = 6) -> Run:
    """A fillrandom run of the paper's §`section` (3 or 6) on the authors' server as their
    harness ran it, with `options` on top of db_bench's defaults."""
    return Run(label, "fillrandom", device=device, device_file=authors_device_file(device),
               policy=policy, duration_s=duration_s,
               options={**DB_BENCH_DEFAULTS, **(options or {})}, workload_fields=WORKLOAD,
               rocksdb_version=release_run_on(policy, section))
