"""Run policies on every device preset for an hour of simulated fillrandom and print one
summary line each (throughput, tail throughput, stall time and count, write amplification,
CPU seconds), so a policy that fails on some device shows up here.

    python validation/policy_runs_check.py --policies rocksdb,cruisedb,dopadb --duration 3600
"""

from __future__ import annotations

import argparse
import time

import lsmsim

DEVICES = ("pm", "nvme", "sata-ssd", "hdd")


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--policies", default="rocksdb,cruisedb,dopadb")
    parser.add_argument("--devices", default=",".join(DEVICES))
    parser.add_argument("--duration", type=float, default=3600.0)
    args = parser.parse_args()
    print(f"{'policy':10} {'device':9} {'kops/s':>8} {'p99 tail':>9} {'stall s':>8} "
          f"{'stalls':>6} {'WA':>6} {'cpu s':>6}  lsm")
    for policy in args.policies.split(","):
        for device in args.devices.split(","):
            started = time.process_time()
            s = lsmsim.simulate("fillrandom", device=device, duration_s=args.duration,
                                policy=policy).summary
            print(f"{policy:10} {device:9} {s['throughput_ops_per_s'] / 1e3:8.1f} "
                  f"{s['tail_throughput_p99_ops_per_s'] / 1e3:9.1f} {s['stall_time_s']:8.0f} "
                  f"{s['stall_episodes']:6d} {s['write_amplification']:6.2f} "
                  f"{time.process_time() - started:6.1f}  {s['final_lsm_state']}", flush=True)


if __name__ == "__main__":
    main()
