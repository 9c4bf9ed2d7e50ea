"""`rocksdb`: RocksDB 7.x as shipped, with no tuning beyond its own write controller."""

from __future__ import annotations

from lsmsim.policy import Policy


class RocksDbDefault(Policy):
    """The engine's built-in behaviour: every hook keeps RocksDB's default."""

    name = "rocksdb"
