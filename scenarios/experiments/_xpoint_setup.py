"""How Jia & Chen ran db_bench for the 3D XPoint study (ISPASS 2020), for the experiments
that reproduce its figures: the scales (`SCALES`) and the throughput their claims compare
(`METRIC`)."""

from lsmsim.sweeps.paper_scale import PaperScale, Scale

SCALES = PaperScale(
    source="3D XPoint study §III: \"The data set used in our experiments is around 100 GB. We "
           "accordingly set the available physical memory space to be 8 GB\"; \"each experiment "
           "runs for 300 seconds\"; 1 KB values",
    default=Scale(600.0, load_pairs=5_000_000),
    paper=Scale(20_000.0, load_pairs=100_000_000, mix_s=300.0, page_cache_GiB=8.0,
                paper=True))
# The throughput the claims compare: at the default scale the whole run's (its short fill
# included, as before); at the paper's, where the ~100 GB fill outlasts the 300 s mix, the
# mix's alone, as db_bench reports its readrandomwriterandom.
METRIC = {False: "client_ops_per_s", True: "final_phase_ops_per_s"}
