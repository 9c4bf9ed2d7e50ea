"""First check against the real RocksDB 7.8.3 runs in ../shared/traces/local-2core/: mean
throughput, stalls, write amplification and job counts of the simulated command beside the
real runs (both repeats). Calibration proper (fitting, held-out traces, the noise floor) is
the calibration issue's `lsmsim validate`.

    python validation/local_2core_check.py [machine-profile]
"""

from pathlib import Path

import sys

import numpy as np

import lsmsim

TRACES = Path(__file__).resolve().parents[2] / "shared" / "traces" / "local-2core"
runs = {
 "j2_wb16": {"max_background_jobs": 2, "write_buffer_size": 16<<20},
 "j2_wb16_rl40": {"max_background_jobs": 2, "write_buffer_size": 16<<20, "rate_limiter_bytes_per_sec": 41943040},
 "j2_wb64": {"max_background_jobs": 2, "write_buffer_size": 64<<20},
 "j4_wb16_pend1g": {"max_background_jobs": 4, "write_buffer_size": 16<<20, "soft_pending_compaction_bytes_limit": 1<<30, "hard_pending_compaction_bytes_limit": 2<<30},
 "j4_wb16": {"max_background_jobs": 4, "write_buffer_size": 16<<20},
}
machine = sys.argv[1] if len(sys.argv) > 1 else "local-2core"
for name, opts in runs.items():
    real = []
    for r in ("r1", "r2"):
        q = np.loadtxt(TRACES / f"{name}_{r}" / "report.csv", delimiter=",", skiprows=1)[:, 1]
        real.append(q.mean())
    res = lsmsim.simulate("fillrandom", device="nvme", machine=machine, duration_s=89,
                          options={"delayed_write_rate": 8<<20, "hard_pending_compaction_bytes_limit": 128<<30, **opts})
    s = res.summary
    print(f"{name:16} real {np.mean(real):8.0f}  sim {s['throughput_ops_per_s']:8.0f}  ratio {s['throughput_ops_per_s']/np.mean(real):.2f}  stall {s['stall_fraction']:.2f} {dict((k,round(v,1)) for k,v in s['stall_duration_s_by_cause'].items() if v)} WA {s['write_amplification']:.2f} flushes {s['flush_count']} comps {s['compaction_count']} maxL0 {s['max_l0_files']}")
