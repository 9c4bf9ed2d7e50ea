"""Scenario files (`lsmsim run scenarios/ycsb_b.toml`) and, in `scenarios.experiments`, the
seed papers' experiments that `lsmsim reproduce` runs; installed with the package so that
both work from any folder."""
