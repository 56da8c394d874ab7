// .bef checksums: see bef_checksum.h.
#include "serialization/bef_checksum.h"

#include <flatbuffers/flatbuffers.h>
// For XXH3_state_t's definition: the streaming state lives on the stack.
#define XXH_STATIC_LINKING_ONLY
#include <xxhash.h>

#include "serialization/bef_generated.h"
#include "serialization/bef_verifier.h"
#include "thunks/program_text.h"

namespace kiln::bef {
namespace {

using thunks::QuoteForMessage;

// A section of a verified buffer.
struct Section {
  std::string name;
  const uint8_t* data = nullptr;
  size_t size = 0;
  uint64_t stored = 0;
};

std::string ImageName(const fb::KernelImage& image) {
  std::string name = "kernel image " + QuoteForMessage(image.target() ? image.target()->string_view() : "");
  if (image.cpu_level()) name += " for " + QuoteForMessage(image.cpu_level()->string_view());
  return name;
}

// The non-empty checksummed sections of a verified file, in table order:
// per kernel image its shared object, cubins and PTX, then the constants.
std::vector<Section> Sections(const fb::BefFile& file) {
  std::vector<Section> sections;
  if (file.kernel_images()) {
    for (const fb::KernelImage* image : *file.kernel_images()) {
      if (const auto* so = image->shared_object(); so && so->size() > 0) {
        sections.push_back({"host " + ImageName(*image), so->data(), so->size(),
                            image->shared_object_checksum()});
      }
      if (image->cubins()) {
        for (const fb::Cubin* cubin : *image->cubins()) {
          if (const auto* data = cubin->image(); data && data->size() > 0) {
            sections.push_back({"cubin sm_" + std::to_string(cubin->sm_arch()) + " of " + ImageName(*image),
                                data->data(), data->size(), cubin->image_checksum()});
          }
        }
      }
      if (const auto* ptx = image->ptx(); ptx && ptx->size() > 0) {
        sections.push_back({"PTX of " + ImageName(*image), reinterpret_cast<const uint8_t*>(ptx->data()),
                            ptx->size(), image->ptx_checksum()});
      }
    }
  }
  if (file.constants()) {
    for (flatbuffers::uoffset_t i = 0; i < file.constants()->size(); ++i) {
      const fb::Constant* c = file.constants()->Get(i);
      if (const auto* data = c->data(); data && data->size() > 0) {
        sections.push_back({"constant " + std::to_string(i) + " (" +
                                QuoteForMessage(c->name() ? c->name()->string_view() : "") + ")",
                            data->data(), data->size(), c->data_checksum()});
      }
    }
  }
  return sections;
}

// Where the root table's checksum field sits in a verified buffer; 0 if
// the field is absent.
size_t ChecksumFieldOffset(const uint8_t* buf) {
  const auto root = flatbuffers::ReadScalar<flatbuffers::uoffset_t>(buf);
  const auto* table = reinterpret_cast<const flatbuffers::Table*>(buf + root);
  const flatbuffers::voffset_t field = table->GetOptionalFieldOffset(fb::BefFile::VT_CHECKSUM);
  return field == 0 ? 0 : root + field;
}

// Which part of a file whose whole-file checksum does not match is damaged.
std::string DamagedPart(std::span<const uint8_t> bytes) {
  constexpr char kTables[] = "the tables (structure, names or HLO text)";
  if (!VerifyBefStructure(bytes.data(), bytes.size())) return kTables;
  for (const Section& s : Sections(*fb::GetBefFile(bytes.data()))) {
    if (Xxh3({s.data, s.size}) != s.stored) return s.name;
  }
  return kTables;
}

}  // namespace

uint64_t Xxh3(std::span<const uint8_t> bytes) { return XXH3_64bits(bytes.data(), bytes.size()); }

uint64_t FileChecksum(std::span<const uint8_t> bytes, size_t field_offset) {
  constexpr size_t kField = sizeof(uint64_t);
  if (field_offset > bytes.size() || bytes.size() - field_offset < kField) return Xxh3(bytes);
  XXH3_state_t state;
  XXH3_INITSTATE(&state);
  const uint8_t zeros[kField] = {};
  XXH3_64bits_reset(&state);
  XXH3_64bits_update(&state, bytes.data(), field_offset);
  XXH3_64bits_update(&state, zeros, kField);
  XXH3_64bits_update(&state, bytes.data() + field_offset + kField, bytes.size() - field_offset - kField);
  return XXH3_64bits_digest(&state);
}

Status VerifyChecksums(std::span<const uint8_t> bytes, size_t field_offset, uint64_t stored) {
  if (FileChecksum(bytes, field_offset) == stored) return Status::Ok();
  return Error("checksum mismatch in " + DamagedPart(bytes));
}

StatusOr<FileChecksums> ReadChecksums(std::span<const uint8_t> bytes) {
  if (!VerifyBefStructure(bytes.data(), bytes.size())) {
    return Error("corrupt .bef file: FlatBuffers verification failed (damaged file)");
  }
  FileChecksums checksums;
  const fb::BefFile& file = *fb::GetBefFile(bytes.data());
  checksums.file = file.checksum();
  for (Section& s : Sections(file)) {
    checksums.sections.push_back({std::move(s.name), static_cast<uint64_t>(s.data - bytes.data()),
                                  s.size, s.stored});
  }
  return checksums;
}

Status ResealChecksums(std::span<uint8_t> bytes) {
  if (!VerifyBefStructure(bytes.data(), bytes.size())) {
    return Error("cannot reseal: FlatBuffers verification failed (damaged file)");
  }
  fb::BefFile& file = *fb::GetMutableBefFile(bytes.data());
  // A section without a checksum field keeps none (mutate_ leaves it).
  if (auto* images = file.mutable_kernel_images()) {
    for (flatbuffers::uoffset_t i = 0; i < images->size(); ++i) {
      fb::KernelImage* image = images->GetMutableObject(i);
      if (const auto* so = image->shared_object()) {
        image->mutate_shared_object_checksum(Xxh3({so->data(), so->size()}));
      }
      if (const auto* ptx = image->ptx()) {
        image->mutate_ptx_checksum(Xxh3({reinterpret_cast<const uint8_t*>(ptx->data()), ptx->size()}));
      }
      if (auto* cubins = image->mutable_cubins()) {
        for (flatbuffers::uoffset_t j = 0; j < cubins->size(); ++j) {
          fb::Cubin* cubin = cubins->GetMutableObject(j);
          if (const auto* data = cubin->image()) cubin->mutate_image_checksum(Xxh3({data->data(), data->size()}));
        }
      }
    }
  }
  if (auto* constants = file.mutable_constants()) {
    for (flatbuffers::uoffset_t i = 0; i < constants->size(); ++i) {
      fb::Constant* c = constants->GetMutableObject(i);
      if (const auto* data = c->data()) c->mutate_data_checksum(Xxh3({data->data(), data->size()}));
    }
  }
  const size_t field = ChecksumFieldOffset(bytes.data());
  if (field == 0) return Error("cannot reseal: the file has no checksum field");
  file.mutate_checksum(FileChecksum(bytes, field));
  return Status::Ok();
}

}  // namespace kiln::bef
