// bef_reseal IN.bef OUT.bef: recomputes every checksum of a .bef file that a
// test edited on purpose (serialization/bef_checksum.h ResealChecksums), so
// the edit reaches the runtime instead of stopping at the loader's checksum
// check. A test helper, not a tool: checksums guard against accidents, and
// this is the "anyone can recompute them" that docs/bef_format.md warns of.
#include <cstdio>
#include <fstream>
#include <iterator>
#include <vector>

#include "serialization/bef_checksum.h"

int main(int argc, char** argv) {
  if (argc != 3) {
    std::fprintf(stderr, "usage: bef_reseal IN.bef OUT.bef\n");
    return 2;
  }
  std::ifstream in(argv[1], std::ios::binary);
  if (!in) {
    std::fprintf(stderr, "bef_reseal: error: cannot open %s\n", argv[1]);
    return 1;
  }
  std::vector<uint8_t> bytes((std::istreambuf_iterator<char>(in)), std::istreambuf_iterator<char>());
  const kiln::Status status = kiln::bef::ResealChecksums(bytes);
  if (!status.ok()) {
    std::fprintf(stderr, "bef_reseal: error: %s: %s\n", argv[1], status.message().c_str());
    return 1;
  }
  std::ofstream out(argv[2], std::ios::binary | std::ios::trunc);
  out.write(reinterpret_cast<const char*>(bytes.data()), static_cast<std::streamsize>(bytes.size()));
  out.close();
  if (!out) {
    std::fprintf(stderr, "bef_reseal: error: cannot write %s\n", argv[2]);
    return 1;
  }
  return 0;
}
