"""`python -m lsmsim ...`: the `lsmsim` command, for an environment without its script."""

from lsmsim.cli.console import console_main

console_main()
