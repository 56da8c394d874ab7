// bef-dump: prints what a compiled .bef artifact contains.
//
//   bef-dump [--json] [--hlo] MODULE.bef
//
// The file is loaded exactly as the runtime loads it (checksums,
// FlatBuffers verifier plus semantic checks), so bef-dump doubles as a
// validity check, and it prints the checksums the file records: a bad file
// gives one line "bef-dump: error: ..." and exit code 1. Like
// iree-dump-module, it is how people look inside an artifact without the
// compiler: which kernels each target has, what every thunk reads and
// writes, and how the entry signature maps onto allocations.
#include "tools/bef-dump/bef_dump.h"

#include <algorithm>
#include <cerrno>
#include <cstring>
#include <exception>
#include <filesystem>
#include <fstream>
#include <iostream>

#include "common/x86_cpu.h"
#include "serialization/host_image.h"
#include "thunks/program_text.h"
#include "thunks/streams.h"
#include "tools/common/flags.h"

namespace kiln::tools {
namespace {

constexpr char kProgram[] = "bef-dump";

std::string Bytes(uint64_t n) {
  if (n < 10 * 1024) return std::to_string(n) + " bytes";
  char buf[48];
  std::snprintf(buf, sizeof buf, "%llu bytes (%.1f KiB)", static_cast<unsigned long long>(n),
                n / 1024.0);
  return buf;
}

std::string Dims(const thunks::Dim3& d) {
  return "(" + std::to_string(d.x) + "," + std::to_string(d.y) + "," + std::to_string(d.z) + ")";
}

// " x86-64-v3, runs here" for a host image of a level, and for a native
// one the highest level its features include and the features beyond it
// (" native: x86-64-v4 +gfni +avx512vnni"); "runs here" marks the image
// this machine's runtime picks (serialization/host_image.h). Nothing for
// images of files before 3.2, which name no level.
std::string HostLevelText(const bef::KernelImage& image, const bef::KernelImage* selected) {
  if (image.cpu_level.empty()) return "";
  std::string out = " " + image.cpu_level;
  if (!X86LevelFeatures(image.cpu_level)) {
    std::vector<std::string> base;
    std::string base_level = "x86-64";
    for (const std::string& level : DefaultX86Levels()) {
      std::vector<std::string> f = *X86LevelFeatures(level);
      bool included = std::all_of(f.begin(), f.end(), [&](const std::string& x) {
        return std::find(image.cpu_features.begin(), image.cpu_features.end(), x) != image.cpu_features.end();
      });
      if (!included) break;
      base = std::move(f);
      base_level = level;
    }
    out += ": " + base_level;
    for (const std::string& f : image.cpu_features)
      if (std::find(base.begin(), base.end(), f) == base.end()) out += " +" + f;
  }
  if (&image == selected) out += ", runs here";
  return out;
}

std::string KernelsText(const bef::Artifact& a) {
  const std::map<std::string, int64_t> users = KernelUsers(a);
  StatusOr<const bef::KernelImage*> selected = bef::SelectHostImage(a);
  const bef::KernelImage* runs_here = selected.ok() ? *selected : nullptr;
  std::string out;
  const bef::KernelImage* previous_host = nullptr;
  for (const bef::KernelImage& image : a.kernel_images) {
    out += "  " + image.target + " (" + std::string(bef::TargetKindName(image.kind));
    if (image.kind == bef::TargetKind::kHost)
      out += HostLevelText(image, runs_here);
    out += "): " + std::to_string(image.kernels.size()) + " kernels";
    for (const bef::CubinImage& c : image.cubins) {
      out += ", cubin sm_" + std::to_string(c.sm_arch) + " " + Bytes(c.data.size());
    }
    if (!image.ptx.empty()) out += ", ptx " + Bytes(image.ptx.size());
    if (!image.shared_object.empty()) out += ", shared object " + Bytes(image.shared_object.size());
    out += "\n";
    // Host images of further levels hold the same kernels.
    bool same_kernels = image.kind == bef::TargetKind::kHost && previous_host &&
                        previous_host->kernels == image.kernels;
    if (image.kind == bef::TargetKind::kHost) previous_host = &image;
    if (same_kernels) continue;
    for (const bef::KernelEntry& k : image.kernels) {
      out += "    " + k.name;
      if (image.kind == bef::TargetKind::kCuda) {
        out += " grid=" + Dims(k.launch.grid) + " block=" + Dims(k.launch.block);
        if (k.launch.shared_memory_bytes) {
          out += " smem=" + std::to_string(k.launch.shared_memory_bytes);
        }
      } else {
        // Host work units ([begin, end) of the kernel's entry) and the
        // iterations of each.
        out += " units=" + std::to_string(k.launch.grid.x) + "x" + std::to_string(k.launch.block.x);
      }
      auto u = users.find(k.name);
      out += " users=" + std::to_string(u == users.end() ? 0 : u->second) + "\n";
    }
  }
  return out;
}

// "checksums: xxh3-64, file 0x...", then one line per section.
std::string ChecksumsText(const bef::FileChecksums& checksums) {
  std::string out = std::string("checksums: ") + bef::kChecksumAlgorithm + ", file " +
                    ChecksumHex(checksums.file) + "\n";
  for (const bef::SectionChecksum& s : checksums.sections) {
    out += "  " + s.section + ": " + ChecksumHex(s.stored) + " (" + Bytes(s.size) + " at offset " +
           std::to_string(s.offset) + ")\n";
  }
  return out;
}

// The file's bytes, for the checksums (LoadArtifactFile has read and
// checked them already).
StatusOr<std::vector<uint8_t>> ReadBytes(const std::string& path) {
  std::ifstream in(path, std::ios::binary);
  if (!in) return Error("cannot open " + path + ": " + std::strerror(errno));
  std::vector<uint8_t> bytes((std::istreambuf_iterator<char>(in)), std::istreambuf_iterator<char>());
  if (in.bad()) return Error("cannot read " + path);
  return bytes;
}

int CountThunks(const thunks::SequenceThunk& root) {
  int n = 0;
  thunks::ForEachThunk(root, [&](const thunks::Thunk&, int) { ++n; });
  return n;
}

}  // namespace

std::map<std::string, int64_t> KernelUsers(const bef::Artifact& artifact) {
  std::map<std::string, int64_t> users;
  thunks::ForEachThunk(artifact.program.root, [&](const thunks::Thunk& t, int) {
    if (const auto* k = t.As<thunks::KernelThunk>()) ++users[k->kernel_name];
  });
  return users;
}

std::string ChecksumHex(uint64_t checksum) {
  char hex[24];
  std::snprintf(hex, sizeof hex, "0x%016llx", static_cast<unsigned long long>(checksum));
  return hex;
}

std::string ArtifactToText(const bef::Artifact& a, const std::string& path, uint64_t file_size,
                           const bef::FileChecksums& checksums, const DumpOptions& options) {
  const thunks::ThunkProgram& p = a.program;
  std::string out = "file: " + path + " (" + Bytes(file_size) + ", .bef " +
                    std::to_string(bef::kBefVersionMajor) + ".x)\n";
  out += ChecksumsText(checksums);
  out += "producer: " + a.producer + "\n";
  out += "targets:";
  for (const std::string& t : a.targets) out += " " + t;
  out += "\n";
  out += "devices: " + std::to_string(p.device_count()) + " (" + std::to_string(p.replica_count) + " replicas x " +
         std::to_string(p.num_partitions) + " partitions)\n";
  out += "signature:\n" + thunks::SignatureToText(p);
  int64_t total = 0;
  for (const thunks::Allocation& alloc : p.allocations) total += alloc.size;
  out += "allocations: " + std::to_string(p.allocations.size()) + ", " + Bytes(total) + "\n";
  out += thunks::AllocationsToText(p);
  int64_t constant_bytes = 0;
  for (const thunks::Constant& c : p.constants) constant_bytes += c.bytes.size();
  out += "constants: " + std::to_string(p.constants.size()) + ", " + Bytes(constant_bytes) + "\n";
  out += thunks::ConstantsToText(p);
  out += "kernels:\n" + KernelsText(a);
  out += "program: " + std::to_string(CountThunks(p.root)) + " thunks";
  if (p.num_streams > 1) out += ", " + thunks::StreamSummary(p);
  out += "\n";
  out += thunks::ThunkTreeToText(p.root);
  if (options.hlo) {
    out += "hlo:\n" + a.hlo_text;
    if (!a.hlo_text.empty() && a.hlo_text.back() != '\n') out += "\n";
  }
  return out;
}

namespace {

int Main(int argc, char** argv) {
  bool json = false;
  DumpOptions options;
  FlagParser flags(kProgram, "bef-dump [--json] [--hlo] MODULE.bef");
  flags.AddBool("json", &json, "print JSON instead of text");
  flags.AddBool("hlo", &options.hlo, "include the optimized HLO text");
  std::vector<std::string> files;
  Status parsed = flags.Parse(argc, argv, &files);
  if (!parsed.ok()) return ReportError(kProgram, parsed);
  if (flags.help_requested()) {
    std::cout << flags.Usage();
    return 0;
  }
  if (files.size() != 1) {
    return ReportError(kProgram, Error("expected exactly one MODULE.bef, got " +
                                       std::to_string(files.size()) + " (see --help)"));
  }
  const std::string& path = files[0];
  StatusOr<bef::Artifact> artifact = bef::LoadArtifactFile(path);
  if (!artifact.ok()) return ReportError(kProgram, artifact.status());
  StatusOr<std::vector<uint8_t>> bytes = ReadBytes(path);
  if (!bytes.ok()) return ReportError(kProgram, bytes.status());
  StatusOr<bef::FileChecksums> checksums = bef::ReadChecksums(*bytes);
  if (!checksums.ok()) return ReportError(kProgram, checksums.status().WithContext(path));
  const uint64_t size = bytes->size();
  std::cout << (json ? ArtifactToJson(*artifact, path, size, *checksums, options)
                     : ArtifactToText(*artifact, path, size, *checksums, options));
  std::cout.flush();
  if (!std::cout) return ReportError(kProgram, Error("cannot write the output"));
  return 0;
}

}  // namespace
}  // namespace kiln::tools

int main(int argc, char** argv) {
  try {
    return kiln::tools::Main(argc, argv);
  } catch (const std::exception& e) {  // e.g. std::bad_alloc
    return kiln::tools::ReportError("bef-dump", kiln::Error(e.what()));
  }
}
