"""`python -m lsmsim ...`: the `lsmsim` command, for an environment without its script."""

from lsmsim.cli.main import console_main

console_main()
