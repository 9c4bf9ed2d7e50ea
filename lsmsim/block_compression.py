"""Block compression of SST files: how much of an entry a compressed data block keeps, and
the CPU of compressing and decompressing it.

RocksDB compresses each data block as BlockBasedTableBuilder writes it
(`CompressAndVerifyBlock`, table/block_based/block_based_table_builder.cc) with the column
family's `compression`, and whoever reads a block from a file (a compaction's input
iterator, a Get missing the block cache) decompresses it; memtables and the WAL are never
compressed. A block that does not shrink by an eighth (`GoodCompressionRatio`) is stored
raw, though compressing it was paid for.

What shrinks in db_bench's data is the values: `RandomGenerator` builds them from
`--compression_ratio` x their length of random bytes, repeated (`CompressibleString`), so
an LZ-family codec keeps about that fraction of a value and barely shrinks the rest of an
entry (its key, sequence number and block framing). Per codec, the fraction of a value
kept per unit of `compression_ratio` is measured from the table properties of real runs
(`STORED_VALUE_PER_RATIO`); the CPU per uncompressed byte is a machine profile cost
(`<codec>_compress_ns_per_byte`, `<codec>_decompress_ns_per_byte`), measured by
`validation/compression_costs.py`. Codecs without measurements (zlib, bzip2, lz4hc) are
refused by name rather than guessed. Levels may use different codecs
(`compression_per_level`, `bottommost_compression`; `LsmOptions.compression_for_output`):
each file keeps the codec it was written with. A Get that misses the block cache (which
holds uncompressed blocks) reads a compressed block and decompresses it
(`lsmsim.read_path`).
"""

from __future__ import annotations

from lsmsim.value_range import Range

NONE = "none"
# The codecs lsmsim models, by db_bench's --compression_type names, and the names RocksDB's
# LOG prints for them (CompressionTypeToString).
CODECS = (NONE, "snappy", "lz4", "zstd")
# The LOG header's names (CompressionTypeToString) and the OPTIONS file's (the enum's).
LOG_NAMES = {"NoCompression": NONE, "Snappy": "snappy", "LZ4": "lz4", "ZSTD": "zstd",
             "kNoCompression": NONE, "kSnappyCompression": "snappy", "kLZ4Compression": "lz4",
             "kZSTD": "zstd"}
# bottommost_compression's default, kDisableCompressionOption: no codec of its own. The
# names a LOG header ("Disabled"), an OPTIONS file and a user may give it.
DISABLE_COMPRESSION = "disable"
DISABLE_NAMES = (DISABLE_COMPRESSION, "disabled", "Disabled", "kDisableCompressionOption")
# What the EVENT_LOG_v1 flush_finished and compaction_finished lines say of each codec
# (their "output_compression" field): the LOG header's name, CompressionTypeToString.
EVENT_NAMES = {codec: name for name, codec in LOG_NAMES.items() if not name.startswith("k")}
# Real codecs RocksDB has that lsmsim has no measurement of, by every name above.
UNMODELLED = ("zlib", "bzip2", "lz4hc", "xpress", "Zlib", "BZip2", "LZ4HC", "Xpress",
              "ZSTDNotFinal", "kZlibCompression", "kBZip2Compression", "kLZ4HCCompression",
              "kXpressCompression", "kZSTDNotFinalCompression")
# db_bench's --compression_ratio default: values compress to half their size.
DEFAULT_COMPRESSION_RATIO = 0.5
COMPRESSION_RATIO_RANGE = Range(0.0, 1.0, low_open=True)
# GoodCompressionRatio: a block is stored compressed only if it shrank by at least 1/8.
MAX_STORED_FRACTION = 7.0 / 8.0
# Fraction of a value's bytes a compressed block keeps, per unit of --compression_ratio,
# measured on db_bench 7.8.3 values of 1000 B at --compression_ratio 0.5
# (validation/traces/local-2core-compression, table_file_creation data_size; see
# validation/compression_costs.py): Snappy and LZ4 keep a little more than the random part
# (their framing of each repeat), ZSTD's entropy coding less.
STORED_VALUE_PER_RATIO = {"snappy": 1.070, "lz4": 1.070, "zstd": 0.878}
# A machine profile's default CPU per uncompressed byte, (compress, decompress) ns, per
# codec: measured on the local-2core machine kind by validation/compression_costs.py on
# 2026-11-28 02:12 UTC on a quiet machine (db_bench 7.8.3's compress/uncompress benchmarks,
# 4 KiB blocks at --compression_ratio 0.5, median of 3; this host x1.71 the local-2core
# profile's CPU time, taken out). A take an hour earlier beside other work gave 25-40% less
# (0.583/0.093, 0.752/0.103, 2.331/0.626): this host's speed drifts, so read them as +-30%.
CODEC_NS_PER_BYTE = {"snappy": (0.779, 0.185), "lz4": (1.122, 0.120), "zstd": (3.714, 0.817)}


class CompressionError(ValueError):
    """A codec lsmsim does not model."""


def codec_name(name: str) -> str:
    """The lsmsim codec for a db_bench or LOG name ("Snappy", "snappy" -> "snappy"); a
    CompressionError naming the modelled ones for anything else."""
    text = str(name).strip()
    if text in LOG_NAMES:
        return LOG_NAMES[text]
    if text.lower() in CODECS:
        return text.lower()
    known = "a RocksDB codec lsmsim has no measured cost of" if text in UNMODELLED or \
        text.lower() in UNMODELLED else "not a RocksDB compression type"
    raise CompressionError(f"compression {text!r} is {known}; modelled: {', '.join(CODECS)}")


def codec_list(value: object) -> tuple[str, ...]:
    """`compression_per_level` as codecs: a list, or text separated by ':' (RocksDB's
    OPTIONS file form, "kNoCompression:kLZ4Compression") or ','; empty for none."""
    items = value if isinstance(value, (list, tuple)) else str(value).replace(",", ":").split(":")
    names = [str(item).strip() for item in items]
    if names == [""]:
        return ()
    return tuple(codec_name(name) for name in names)


def bottommost_codec(value: object) -> str:
    """`bottommost_compression` as a codec, or DISABLE_COMPRESSION (RocksDB's
    kDisableCompressionOption, its default: the level's own codec)."""
    return DISABLE_COMPRESSION if str(value).strip() in DISABLE_NAMES else codec_name(value)


def stored_value_fraction(codec: str, compression_ratio: float) -> float:
    """Fraction of each value's bytes its data block keeps: 1 uncompressed, else the codec's
    measured fraction of `compression_ratio`, and 1 again where that does not shrink a block
    by an eighth (stored raw)."""
    if codec == NONE:
        return 1.0
    kept = STORED_VALUE_PER_RATIO[codec] * compression_ratio
    return kept if kept <= MAX_STORED_FRACTION else 1.0
