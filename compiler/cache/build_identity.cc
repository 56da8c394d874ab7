// KilnBuildIdentity (build_identity.h): reads the GNU build-id note of the
// loaded object that holds this function.
#include "compiler/cache/build_identity.h"

#include <dlfcn.h>
#include <elf.h>
#include <link.h>
#include <xxhash.h>

#include <cstdio>
#include <cstring>
#include <fstream>
#include <iterator>
#include <vector>

namespace kiln::cache {
namespace {

struct BuildIdSearch {
  const void* base;  // the object's load address (dladdr's dli_fbase)
  std::string hex;   // the build-id found, if any
  bool in_main_program = false;
};

std::string Hex(const uint8_t* bytes, size_t n) {
  std::string out;
  char buf[3];
  for (size_t i = 0; i < n; ++i) {
    std::snprintf(buf, sizeof buf, "%02x", bytes[i]);
    out += buf;
  }
  return out;
}

// The NT_GNU_BUILD_ID note among the PT_NOTE segments of one object.
std::string BuildIdNote(const dl_phdr_info* info) {
  for (int i = 0; i < info->dlpi_phnum; ++i) {
    const ElfW(Phdr)& ph = info->dlpi_phdr[i];
    if (ph.p_type != PT_NOTE) continue;
    const auto* p = reinterpret_cast<const uint8_t*>(info->dlpi_addr + ph.p_vaddr);
    const uint8_t* end = p + ph.p_memsz;
    while (p + sizeof(ElfW(Nhdr)) <= end) {
      ElfW(Nhdr) note;
      std::memcpy(&note, p, sizeof note);
      const uint8_t* name = p + sizeof note;
      const uint8_t* desc = name + ((note.n_namesz + 3) & ~3u);
      if (note.n_type == NT_GNU_BUILD_ID && note.n_namesz == 4 && std::memcmp(name, "GNU", 4) == 0 &&
          desc + note.n_descsz <= end)
        return Hex(desc, note.n_descsz);
      p = desc + ((note.n_descsz + 3) & ~3u);
    }
  }
  return "";
}

int FindObject(dl_phdr_info* info, size_t, void* data) {
  auto* search = static_cast<BuildIdSearch*>(data);
  for (int i = 0; i < info->dlpi_phnum; ++i) {
    const ElfW(Phdr)& ph = info->dlpi_phdr[i];
    if (ph.p_type == PT_LOAD && ph.p_offset == 0 &&
        reinterpret_cast<const void*>(info->dlpi_addr + ph.p_vaddr) == search->base) {
      search->hex = BuildIdNote(info);
      search->in_main_program = !info->dlpi_name || !*info->dlpi_name;
      return 1;
    }
  }
  return 0;
}

std::string FileDigest(const std::string& path) {
  std::ifstream in(path, std::ios::binary);
  std::vector<char> bytes((std::istreambuf_iterator<char>(in)), std::istreambuf_iterator<char>());
  if (!in.eof() || bytes.empty()) return "";
  XXH128_hash_t h = XXH3_128bits(bytes.data(), bytes.size());
  char buf[40];
  std::snprintf(buf, sizeof buf, "xxh3-128:%016llx%016llx", static_cast<unsigned long long>(h.high64),
                static_cast<unsigned long long>(h.low64));
  return buf;
}

}  // namespace

std::string ObjectBuildIdentity(const void* address) {
  Dl_info info;
  if (dladdr(address, &info) == 0) return "";
  BuildIdSearch search{info.dli_fbase, ""};
  dl_iterate_phdr(FindObject, &search);
  if (!search.hex.empty()) return "build-id:" + search.hex;
  // dladdr names the main program as it was started; /proc names it surely.
  bool main_program = !info.dli_fname || !*info.dli_fname || search.in_main_program;
  return FileDigest(main_program ? "/proc/self/exe" : info.dli_fname);
}

std::string KilnBuildIdentity() { return ObjectBuildIdentity(reinterpret_cast<const void*>(&KilnBuildIdentity)); }

}  // namespace kiln::cache
