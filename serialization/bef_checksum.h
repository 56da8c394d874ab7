// Checksums of a .bef file (format 3): what protects the bytes the
// FlatBuffers verifier cannot judge.
//
// A .bef carries native code (a host ELF shared object, cubins, PTX) and
// constant data; a flipped byte there passes every structural check and
// then crashes or silently miscomputes at run time. So the file records
// XXH3-64 (xxHash) of:
//   - the whole file, with the 8 bytes of this checksum field read as
//     zeros (BefFile.checksum): every byte of the file is covered;
//   - each such section on its own (KernelImage.shared_object_checksum and
//     ptx_checksum, Cubin.image_checksum, Constant.data_checksum), which is
//     how a mismatch is traced to the section that holds it.
// LoadArtifact checks the file checksum right after the version and size,
// before the FlatBuffers verifier and long before anything is mapped or
// executed. Only on a mismatch does it compare the section checksums, to
// name the damaged section in its one-line error. A checksum detects
// accidental damage (bit rot, truncation, bad copies); it is no signature:
// anyone who edits a file can recompute it (docs/bef_format.md).
#pragma once

#include <cstdint>
#include <span>
#include <string>
#include <vector>

#include "common/status.h"

namespace kiln::bef {

inline constexpr char kChecksumAlgorithm[] = "xxh3-64";

// XXH3-64 with seed 0.
uint64_t Xxh3(std::span<const uint8_t> bytes);

// A section of the file and the checksum the file records for it.
struct SectionChecksum {
  // "host kernel image 'host-x86_64'", "cubin sm_90 of kernel image 'cuda'",
  // "PTX of kernel image 'cuda'", "constant 0 ('c')".
  std::string section;
  uint64_t offset = 0;  // of its first byte in the file
  uint64_t size = 0;
  uint64_t stored = 0;
};

struct FileChecksums {
  uint64_t file = 0;  // the recorded whole-file checksum
  std::vector<SectionChecksum> sections;  // non-empty sections, in file order of the tables
};

// The checksums `bytes` records, after verifying its structure (not its
// checksums: bef-dump shows what a file claims). `bytes` must be 8-byte
// aligned, as LoadArtifact's are.
StatusOr<FileChecksums> ReadChecksums(std::span<const uint8_t> bytes);

// The checksum of a whole file whose checksum field is the 8 bytes at
// `field_offset` (read as zeros).
uint64_t FileChecksum(std::span<const uint8_t> bytes, size_t field_offset);

// OK if the whole-file checksum matches; otherwise the one-line error
// "checksum mismatch in <section>", naming the first section whose own
// checksum no longer matches its bytes, or the tables when none does.
// `field_offset` and `stored` come from the root table (bef_reader.cc).
Status VerifyChecksums(std::span<const uint8_t> bytes, size_t field_offset, uint64_t stored);

// Recomputes every checksum of a structurally valid file in place: the
// sections that record one, then the file. For tests that edit a file on
// purpose and for the writer's last step. Fails if the file does not
// verify or has no checksum field.
Status ResealChecksums(std::span<uint8_t> bytes);

}  // namespace kiln::bef
