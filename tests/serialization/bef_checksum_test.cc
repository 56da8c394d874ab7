// The checksums of .bef format 3: what the writer records (XXH3-64 of every
// native-code and constant section, and of the whole file with its own
// checksum field read as zeros), computed here independently with xxHash
// from the artifact's C++ data and the raw bytes; the loader's one-line
// error naming the damaged section; a file without a checksum; and
// resealing, which shows what a checksum does not protect against.
#include <gtest/gtest.h>
#include <xxhash.h>

#include <cstring>

#include "serialization/artifact.h"
#include "serialization/bef_checksum.h"
#include "serialization/bef_generated.h"
#include "tests/support/sample_artifact.h"

namespace kiln::bef {
namespace {

using ::kiln::testing::SampleArtifact;
using ::kiln::testing::Serialize;
using ::kiln::testing::LoadError;

uint64_t Xxh3Of(const void* data, size_t size) { return XXH3_64bits(data, size); }

// Where the root table's checksum field is, found with the generated API.
size_t ChecksumField(const std::vector<uint8_t>& bytes) {
  const auto* table = reinterpret_cast<const flatbuffers::Table*>(fb::GetBefFile(bytes.data()));
  const size_t field = table->GetOptionalFieldOffset(fb::BefFile::VT_CHECKSUM);
  EXPECT_NE(field, 0u);
  return static_cast<size_t>(reinterpret_cast<const uint8_t*>(table) - bytes.data()) + field;
}

// The sample artifact's sections: the "cuda" image (cubins sm_90 and
// sm_80, then PTX), the "host-x86_64" shared object, then constant 0.
TEST(BefChecksum, EverySectionRecordsXxh3OfItsBytes) {
  const Artifact artifact = SampleArtifact();
  const std::vector<uint8_t> bytes = Serialize(artifact);
  StatusOr<FileChecksums> checksums = ReadChecksums(bytes);
  ASSERT_TRUE(checksums.ok()) << checksums.status().message();
  const KernelImage& cuda = artifact.kernel_images[0];
  const KernelImage& host = artifact.kernel_images[1];
  ASSERT_EQ(cuda.target, "cuda");
  ASSERT_EQ(host.target, "host-x86_64");
  struct Expected {
    std::string name;
    const void* data;
    size_t size;
  };
  const std::vector<Expected> expected = {
      {"cubin sm_90 of kernel image 'cuda'", cuda.cubins[0].data.data(), 7},
      {"cubin sm_80 of kernel image 'cuda'", cuda.cubins[1].data.data(), 5},
      {"PTX of kernel image 'cuda'", cuda.ptx.data(), 27},
      {"host kernel image 'host-x86_64'", host.shared_object.data(), 8},
      {"constant 0 ('constant.1')", artifact.program.constants[0].bytes.data(), 16},
  };
  ASSERT_EQ(checksums->sections.size(), expected.size());
  for (size_t i = 0; i < expected.size(); ++i) {
    const SectionChecksum& s = checksums->sections[i];
    EXPECT_EQ(s.section, expected[i].name);
    ASSERT_EQ(s.size, expected[i].size) << s.section;
    EXPECT_EQ(s.stored, Xxh3Of(expected[i].data, expected[i].size)) << s.section;
    // The offset points at the section's bytes in the file.
    ASSERT_LE(s.offset + s.size, bytes.size());
    EXPECT_EQ(std::memcmp(bytes.data() + s.offset, expected[i].data, s.size), 0) << s.section;
  }
}

TEST(BefChecksum, FileChecksumCoversEveryByteButItsOwnField) {
  const std::vector<uint8_t> bytes = Serialize(SampleArtifact());
  const size_t field = ChecksumField(bytes);
  std::vector<uint8_t> zeroed = bytes;
  std::memset(zeroed.data() + field, 0, 8);
  const uint64_t expected = Xxh3Of(zeroed.data(), zeroed.size());
  EXPECT_EQ(fb::GetBefFile(bytes.data())->checksum(), expected);
  StatusOr<FileChecksums> checksums = ReadChecksums(bytes);
  ASSERT_TRUE(checksums.ok());
  EXPECT_EQ(checksums->file, expected);
  // Serialization stays deterministic with the checksum in place.
  EXPECT_EQ(Serialize(SampleArtifact()), bytes);
}

TEST(BefChecksum, MismatchNamesTheDamagedSection) {
  const std::vector<uint8_t> bytes = Serialize(SampleArtifact());
  ASSERT_EQ(LoadError(bytes), "OK");
  StatusOr<FileChecksums> checksums = ReadChecksums(bytes);
  ASSERT_TRUE(checksums.ok());
  ASSERT_EQ(checksums->sections.size(), 5u);
  for (const SectionChecksum& s : checksums->sections) {
    for (uint64_t at : {s.offset, s.offset + s.size - 1}) {
      std::vector<uint8_t> damaged = bytes;
      damaged[at] ^= 0x01;
      EXPECT_EQ(LoadError(damaged), "corrupt .bef file: checksum mismatch in " + s.section);
    }
  }
  const std::string tables = "corrupt .bef file: checksum mismatch in the tables (structure, names or HLO text)";
  // The HLO text, and the recorded checksum itself.
  const auto* hlo = fb::GetBefFile(bytes.data())->hlo_text();
  std::vector<uint8_t> damaged = bytes;
  damaged[static_cast<size_t>(reinterpret_cast<const uint8_t*>(hlo->data()) - bytes.data())] ^= 0x20;
  EXPECT_EQ(LoadError(damaged), tables);
  damaged = bytes;
  damaged[ChecksumField(bytes) + 3] ^= 0x80;
  EXPECT_EQ(LoadError(damaged), tables);
}

TEST(BefChecksum, FileWithoutChecksumIsRejected) {
  flatbuffers::FlatBufferBuilder fbb;
  auto result = fb::CreateShape(fbb, fbb.CreateString("tuple"));
  auto signature = fb::CreateSignature(fbb, 0, result);
  auto program = fb::CreateSequenceThunk(fbb);
  fb::BefFileBuilder file(fbb);
  file.add_schema_version(kBefVersionMajor << 16);
  file.add_file_size(1);
  file.add_signature(signature);
  file.add_program(program);
  fb::FinishBefFileBuffer(fbb, file.Finish());
  fb::GetMutableBefFile(fbb.GetBufferPointer())->mutate_file_size(fbb.GetSize());
  std::vector<uint8_t> bytes(fbb.GetBufferPointer(), fbb.GetBufferPointer() + fbb.GetSize());
  EXPECT_EQ(LoadError(bytes), "corrupt .bef file: no checksum");
  EXPECT_EQ(ResealChecksums(bytes).message(), "cannot reseal: the file has no checksum field");
}

// A checksum is no signature: whoever edits a file can recompute it, and
// the edited file loads. (docs/bef_format.md says so.)
TEST(BefChecksum, ResealedEditLoads) {
  std::vector<uint8_t> bytes = Serialize(SampleArtifact());
  StatusOr<FileChecksums> checksums = ReadChecksums(bytes);
  ASSERT_TRUE(checksums.ok());
  const SectionChecksum& constant = checksums->sections.back();
  ASSERT_EQ(constant.section, "constant 0 ('constant.1')");
  bytes[constant.offset + 3] ^= 0x80;  // 1.0f -> -1.0f
  EXPECT_EQ(LoadError(bytes), "corrupt .bef file: checksum mismatch in constant 0 ('constant.1')");
  ASSERT_TRUE(ResealChecksums(bytes).ok());
  StatusOr<Artifact> loaded = LoadArtifact(bytes);
  ASSERT_TRUE(loaded.ok()) << loaded.status().message();
  EXPECT_EQ(loaded->program.constants[0].bytes, testing::FloatBytes({-1, 2, 3, 4}));
}

TEST(BefChecksum, ReadChecksumsRejectsADamagedStructure) {
  std::vector<uint8_t> bytes = Serialize(SampleArtifact());
  bytes[0] ^= 0x40;  // the root offset
  EXPECT_EQ(ReadChecksums(bytes).status().message(),
            "corrupt .bef file: FlatBuffers verification failed (damaged file)");
  EXPECT_FALSE(ResealChecksums(bytes).ok());
}

}  // namespace
}  // namespace kiln::bef
