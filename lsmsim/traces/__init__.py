"""Real RocksDB runs as lsmsim reads them: LOG parsing, db_bench command lines, trace import and capture."""
