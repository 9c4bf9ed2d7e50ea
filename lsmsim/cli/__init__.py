"""The `lsmsim` command line: argument parsing and one-line errors at the edge."""
