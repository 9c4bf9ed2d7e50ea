"""One module per seed-paper experiment, each defining `EXPERIMENT` (see `lsmsim.sweeps.reproduce`);
they are loaded by file name, not imported as a package."""
