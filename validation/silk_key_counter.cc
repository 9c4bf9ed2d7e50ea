// The per-put cost of the key counter in SILK's MemTable::Add (theoanab/SILK-USENIXATC2019,
// db/memtable.cc): `std::string str_key(key.data(), key.size()); KeyFrequencies[str_key]++;`
// with KeyFrequencies a std::map<std::string, uint32_t> member of the memtable. Written for
// validation/memtable_update_cost.py, which compiles and runs it.
//
// usage: silk_key_counter PUTS KEY_SPACE SEED
// prints: PUTS DISTINCT_KEYS NS_PER_PUT (mean over a fill from an empty map to PUTS puts of
// 16-byte keys drawn uniformly from KEY_SPACE, as db_bench fillrandom draws them)
#include <chrono>
#include <cstdint>
#include <cstdio>
#include <cstdlib>
#include <map>
#include <random>
#include <string>
#include <vector>

int main(int argc, char** argv) {
  if (argc != 4) {
    std::fprintf(stderr, "usage: %s PUTS KEY_SPACE SEED\n", argv[0]);
    return 2;
  }
  const long puts = std::atol(argv[1]);
  const unsigned long long key_space = std::strtoull(argv[2], nullptr, 10);
  std::mt19937_64 rng(std::strtoul(argv[3], nullptr, 10));
  std::vector<std::string> keys;  // drawn first, so the timed loop is the counter alone
  keys.reserve(puts);
  char buffer[17];
  for (long i = 0; i < puts; i++) {
    std::snprintf(buffer, sizeof buffer, "%016llu", rng() % key_space);
    keys.emplace_back(buffer, 16);
  }
  std::map<std::string, uint32_t> key_frequencies;
  const auto start = std::chrono::steady_clock::now();
  for (const std::string& key : keys) {
    std::string str_key(key.data(), key.size());
    key_frequencies[str_key]++;
  }
  const auto end = std::chrono::steady_clock::now();
  const double ns = std::chrono::duration<double, std::nano>(end - start).count() / puts;
  std::printf("%ld %zu %.1f\n", puts, key_frequencies.size(), ns);
  return 0;
}
