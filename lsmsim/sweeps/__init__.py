"""Many runs: grids, sweeps, comparisons, claim reproduction, tuning, and the process pool and cache they share."""
