// Artifact: a compiled module as the runtime receives it, and the .bef file
// API (serialize, load with verification).
//
// An artifact is self-contained: the thunk program, one kernel image per
// target it was compiled for, who produced it and the optimized HLO text
// (for dumps and profiles). SerializeArtifact is deterministic: the same
// Artifact always gives byte-identical bytes. LoadArtifact never trusts its
// input: it checks the file's checksum (bef_checksum.h), runs the
// FlatBuffers verifier, then ValidateArtifact, and turns a truncated,
// corrupted or wrong-version file into a one-line error. A .bef holds
// native code: load only files you would load as a shared library.
#pragma once

#include <cstdint>
#include <span>
#include <string>
#include <vector>

#include "common/status.h"
#include "thunks/program.h"

namespace kiln::bef {

// The .bef schema version this library writes and reads: files with another
// major version are rejected; a newer minor version only adds fields.
// Major 2: host kernels take (args, begin, end) and their entries' grid.x
// counts the units they split into; a version-1 runtime would call them
// with garbage bounds.
// Major 3: checksums (serialization/bef_checksum.h): the file and every
// section the FlatBuffers verifier cannot judge (host shared objects,
// cubins, PTX, constant data) carry XXH3-64 checksums, and a reader
// rejects a file without them. (2.1 added Cholesky and TriangularSolve
// thunks, 2.2 dynamic dimensions, Linalg and RadixSort thunks, 2.3
// GemmThunk.tf32.)
inline constexpr uint32_t kBefVersionMajor = 3;
// 3.1: collectives, device ids, device grid; 3.2: host images per CPU level;
// 3.3: streams and events of the root's thunks.
inline constexpr uint32_t kBefVersionMinor = 3;
inline constexpr char kBefFileIdentifier[] = "KBEF";
// Alignment of constant data within a .bef file, in bytes.
inline constexpr int64_t kConstantAlignment = 64;

enum class TargetKind : uint8_t { kHost, kCuda };
std::string_view TargetKindName(TargetKind kind);  // "host", "cuda"

struct CubinImage {
  int32_t sm_arch = 0;  // 90 for sm_90
  std::vector<uint8_t> data;
  bool operator==(const CubinImage&) const = default;
};

// A kernel the image provides, with the launch dimensions it was compiled
// for.
struct KernelEntry {
  std::string name;
  thunks::LaunchDims launch;
  bool operator==(const KernelEntry&) const = default;
};

struct KernelImage {
  std::string target;  // matches an entry of Artifact::targets ("cuda", "host-x86_64")
  TargetKind kind = TargetKind::kHost;
  std::vector<CubinImage> cubins;      // CUDA: one per SM architecture
  std::string ptx;                     // CUDA: PTX for architectures without a cubin
  std::vector<uint8_t> shared_object;  // host: ELF shared object exporting the kernels
  std::vector<KernelEntry> kernels;
  // Host: the x86-64 level the code was compiled for ("x86-64-v2",
  // "x86-64-v3", "x86-64-v4", "native"; empty in files before 3.2, whose
  // code is x86-64-v2) and the CPU features it needs (common/x86_cpu.h
  // names). A host target may have one image per level, lowest first.
  std::string cpu_level;
  std::vector<std::string> cpu_features;
  bool operator==(const KernelImage&) const = default;
};

struct Artifact {
  std::string producer;              // "kiln 0.1 (bef-compile)"; no timestamps
  std::vector<std::string> targets;  // one kernel image each
  std::vector<KernelImage> kernel_images;
  thunks::ThunkProgram program;
  std::string hlo_text;  // the optimized module
  bool operator==(const Artifact&) const = default;
};

// The .bef bytes of an artifact. Fails if the artifact does not pass
// ValidateArtifact or exceeds FlatBuffers' 2 GiB limit.
StatusOr<std::vector<uint8_t>> SerializeArtifact(const Artifact& artifact);

// Parses, verifies and validates .bef bytes; the result owns copies of all
// data, so `bytes` may be freed afterwards.
StatusOr<Artifact> LoadArtifact(std::span<const uint8_t> bytes);
StatusOr<Artifact> LoadArtifactFile(const std::string& path);
Status WriteArtifactFile(const Artifact& artifact, const std::string& path);
// Writes .bef bytes (SerializeArtifact's, or a compile cache's copy of them).
Status WriteBefFile(std::span<const uint8_t> bytes, const std::string& path);

// ValidateProgram plus the checks that involve kernel images: every target
// has exactly one image (a host target: one per distinct CPU level), and every kernel named by a Kernel thunk exists in
// every image.
Status ValidateArtifact(const Artifact& artifact);

}  // namespace kiln::bef
