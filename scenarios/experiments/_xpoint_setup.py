"""How Jia & Chen ran db_bench for the 3D XPoint study (ISPASS 2020), for the experiments
that reproduce its figures: the scales (`SCALES`) and the throughput their claims compare
(`METRIC`).

The paper sizes its memory by its data: "The data set used in our experiments is around
100 GB. We accordingly set the available physical memory space to be 8 GB during the system
boot time, which is about 8% of the data set size" (§III). The default scale's 5 M keys keep
that ratio (8 GB x 5 M / 100 M = 0.4 GiB of page cache), so gets go to the device as the
paper's did, not to a page cache that holds the whole data set."""

from lsmsim.sweeps.paper_scale import PaperScale, Scale

PAPER_KEYS, PAPER_MEMORY_GiB = 100_000_000, 8.0   # ~100 GB of 1 KB values; 8 GB of memory
DEFAULT_KEYS = 5_000_000
SCALES = PaperScale(
    source="3D XPoint study §III: \"The data set used in our experiments is around 100 GB. We "
           "accordingly set the available physical memory space to be 8 GB ..., which is about "
           "8% of the data set size\" (the default scale keeps the 8%); \"each experiment runs "
           "for 300 seconds\"; 1 KB values",
    default=Scale(600.0, load_pairs=DEFAULT_KEYS,
                  page_cache_GiB=PAPER_MEMORY_GiB * DEFAULT_KEYS / PAPER_KEYS),
    paper=Scale(20_000.0, load_pairs=PAPER_KEYS, mix_s=300.0, page_cache_GiB=PAPER_MEMORY_GiB,
                paper=True))
# The study's three devices (§III: "An Intel 530 Series SATA Flash SSD, an Intel 750 PCIe Flash
# SSD, and an Intel Optane PCIe 3D XPoint SSD"; the 900P, §I), by the role the runs' labels
# name: presets from their data sheets (docs/background/devices.md 2.5-2.7).
DEVICE = {"sata": "intel-530", "pcie": "intel-750", "xpoint": "optane-900p"}
# The throughput the claims compare: the mix's alone, after its fill, as db_bench reports its
# readrandomwriterandom (the fill is a benchmark of its own).
METRIC = "final_phase_ops_per_s"
