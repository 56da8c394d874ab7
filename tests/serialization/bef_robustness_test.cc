// The loader against bad input: every truncation, seeded random byte flips
// (caught by the checksum, and again with the checksum recomputed so they
// reach the verifier and the semantic checks), wrong identifier and
// version, and files that verify as FlatBuffers but break a semantic rule
// (slice out of bounds, kernel missing from an image, misaligned constant,
// unknown thunk kind, too-deep tree, shared-data bombs). Each must be
// rejected with a one-line message, never crash. Edited and hand-made files
// are resealed (ResealChecksums) so the loader sees bytes the kiln writer
// would refuse to produce, not just a checksum mismatch.
#include <gtest/gtest.h>

#include <random>

#include "serialization/artifact.h"
#include "serialization/bef_checksum.h"
#include "serialization/bef_generated.h"
#include "tests/support/sample_artifact.h"
#include "thunks/program_text.h"
#include "thunks/validate.h"

namespace kiln::bef {
namespace {

using ::kiln::testing::SampleArtifact;
using ::kiln::testing::Serialize;
using ::kiln::testing::LoadError;
using ::kiln::testing::SmallArtifact;
namespace th = ::kiln::thunks;

bool Contains(const std::string& s, const std::string& part) {
  return s.find(part) != std::string::npos;
}

// Recomputes the checksums of a file edited on purpose.
void Reseal(std::vector<uint8_t>& bytes) {
  const Status status = ResealChecksums(bytes);
  ASSERT_TRUE(status.ok()) << status.message();
}

TEST(BefRobustness, EveryTruncationIsRejected) {
  const std::vector<uint8_t> bytes = Serialize(SmallArtifact());
  ASSERT_EQ(LoadError(bytes), "OK");
  int too_short = 0, truncated = 0, corrupt = 0;
  for (size_t len = 0; len < bytes.size(); ++len) {
    const std::string error = LoadError(std::vector<uint8_t>(bytes.begin(), bytes.begin() + len));
    ASSERT_NE(error, "OK") << "truncated to " << len << " of " << bytes.size() << " bytes";
    EXPECT_EQ(error.find('\n'), std::string::npos) << error;
    if (Contains(error, "is too short")) ++too_short;
    else if (Contains(error, "truncated .bef file (")) ++truncated;
    else if (Contains(error, "corrupt .bef file")) ++corrupt;
    else ADD_FAILURE() << "unexpected message: " << error;
  }
  // Below 8 bytes there is no identifier; once the root table's preamble
  // fields are readable the recorded size gives "truncated"; in between,
  // the root table itself is cut ("corrupt").
  EXPECT_EQ(too_short, 8);
  EXPECT_GT(truncated, 0);
  EXPECT_GT(corrupt, 0);
  EXPECT_EQ(LoadError(std::vector<uint8_t>(bytes.begin(), bytes.end() - 1)),
            "truncated .bef file (" + std::to_string(bytes.size() - 1) +
                " bytes, the file records " + std::to_string(bytes.size()) + ")");
}

TEST(BefRobustness, TrailingBytesAreRejected) {
  std::vector<uint8_t> bytes = Serialize(SmallArtifact());
  const size_t size = bytes.size();
  bytes.resize(size + 64, 0);
  EXPECT_EQ(LoadError(bytes), "oversized .bef file (" + std::to_string(size + 64) +
                                  " bytes, the file records " + std::to_string(size) + ")");
}

TEST(BefRobustness, RandomByteFlipsAreCaughtByTheChecksum) {
  const std::vector<uint8_t> bytes = Serialize(SampleArtifact());
  std::mt19937 rng(20240612);
  std::uniform_int_distribution<size_t> position(0, bytes.size() - 1);
  std::uniform_int_distribution<int> flips(1, 3), mask(1, 255);
  int checksum = 0, preamble = 0;
  for (int trial = 0; trial < 3000; ++trial) {
    std::vector<uint8_t> damaged = bytes;
    for (int f = flips(rng); f > 0; --f) damaged[position(rng)] ^= static_cast<uint8_t>(mask(rng));
    if (damaged == bytes) continue;
    const std::string error = LoadError(damaged);
    ASSERT_NE(error, "OK") << "trial " << trial;
    EXPECT_EQ(error.find('\n'), std::string::npos) << error;
    // Flips in the root offset, identifier or the root table's first
    // fields fail before the checksum is read; every other one fails it.
    if (Contains(error, "corrupt .bef file: checksum mismatch in ")) {
      ++checksum;
    } else {
      ++preamble;
      EXPECT_TRUE(Contains(error, "not a .bef file") || Contains(error, "unsupported .bef version") ||
                  Contains(error, " .bef file (") || Contains(error, "bad root") ||
                  Contains(error, "no checksum"))
          << "trial " << trial << ": " << error;
    }
  }
  EXPECT_GT(checksum, 2500);
  std::printf("byte flips: %d checksum mismatches, %d rejected before the checksum\n", checksum, preamble);
}

TEST(BefRobustness, RandomByteFlipsWithRecomputedChecksumsNeverCrash) {
  const std::vector<uint8_t> bytes = Serialize(SampleArtifact());
  std::mt19937 rng(20240611);
  std::uniform_int_distribution<size_t> position(0, bytes.size() - 1);
  std::uniform_int_distribution<int> flips(1, 3), mask(1, 255);
  int rejected = 0, loaded = 0;
  for (int trial = 0; trial < 3000; ++trial) {
    std::vector<uint8_t> damaged = bytes;
    for (int f = flips(rng); f > 0; --f) damaged[position(rng)] ^= static_cast<uint8_t>(mask(rng));
    // A file that no longer verifies cannot be resealed: the checksum
    // stays wrong and the load must fail all the same.
    (void)ResealChecksums(damaged);
    StatusOr<Artifact> a = LoadArtifact(damaged);
    if (!a.ok()) {
      ++rejected;
      EXPECT_EQ(a.status().message().find('\n'), std::string::npos) << a.status().message();
      continue;
    }
    // A flip the format cannot see (HLO text, cubin bytes, a slice moved
    // within bounds) must still give a program that passes every check and
    // can be printed and written again.
    ++loaded;
    EXPECT_TRUE(ValidateArtifact(*a).ok()) << "trial " << trial;
    EXPECT_FALSE(th::ProgramToText(a->program).empty());
    EXPECT_TRUE(SerializeArtifact(*a).ok()) << "trial " << trial;
  }
  EXPECT_GT(rejected, 0);
  EXPECT_GT(loaded, 0);
  std::printf("byte flips: %d rejected, %d loaded and passed validation\n", rejected, loaded);
}

TEST(BefRobustness, WrongFileIdentifier) {
  std::vector<uint8_t> bytes = Serialize(SmallArtifact());
  bytes[4] = 'X';
  EXPECT_EQ(LoadError(bytes), "not a .bef file (file identifier 'XBEF', expected 'KBEF')");
  const std::string text = "HloModule m\nENTRY e { ROOT c = f32[] constant(1) }\n";
  EXPECT_EQ(LoadError(std::vector<uint8_t>(text.begin(), text.end())),
            "not a .bef file (file identifier 'odul', expected 'KBEF')");
  bytes[4] = 0x01;
  EXPECT_EQ(LoadError(bytes), "not a .bef file (file identifier '\\x01BEF', expected 'KBEF')");
}

TEST(BefRobustness, VersionCheck) {
  std::vector<uint8_t> bytes = Serialize(SmallArtifact());
  EXPECT_EQ(fb::GetBefFile(bytes.data())->schema_version(), (3u << 16) | 3u);
  // The version is checked before the checksum, so an old or new file is
  // reported as such.
  ASSERT_TRUE(fb::GetMutableBefFile(bytes.data())->mutate_schema_version((4u << 16) | 3u));
  EXPECT_EQ(LoadError(bytes), "unsupported .bef version 4.3 (this runtime reads 3.x)");
  // Version 2 files carry no checksums; version 1 host kernels took no
  // (begin, end) range: both rejected.
  ASSERT_TRUE(fb::GetMutableBefFile(bytes.data())->mutate_schema_version((2u << 16) | 2u));
  EXPECT_EQ(LoadError(bytes), "unsupported .bef version 2.2 (this runtime reads 3.x)");
  ASSERT_TRUE(fb::GetMutableBefFile(bytes.data())->mutate_schema_version((1u << 16) | 0u));
  EXPECT_EQ(LoadError(bytes), "unsupported .bef version 1.0 (this runtime reads 3.x)");
  // A newer minor version of the same major version only adds fields.
  ASSERT_TRUE(fb::GetMutableBefFile(bytes.data())->mutate_schema_version((3u << 16) | 7u));
  EXPECT_EQ(LoadError(bytes), "corrupt .bef file: checksum mismatch in the tables (structure, names or HLO text)");
  Reseal(bytes);
  EXPECT_EQ(LoadError(bytes), "OK");
}

TEST(BefRobustness, SliceOutOfBoundsInFile) {
  std::vector<uint8_t> bytes = Serialize(SmallArtifact());
  auto* thunk = fb::GetMutableBefFile(bytes.data())->mutable_program()->mutable_thunks()->GetMutableObject(0);
  auto* kernel = static_cast<fb::KernelThunk*>(thunk->mutable_body());
  // Argument 2 is a1[0:16]; allocation 1 has 16 bytes, so [8, 24) overruns.
  kernel->mutable_args()->GetMutableObject(2)->mutable_slice().mutate_offset(8);
  Reseal(bytes);
  EXPECT_EQ(LoadError(bytes),
            "invalid .bef file: kernel thunk 'add': argument 2 slice a1 offset 8 size 16 is out "
            "of bounds of allocation 1 (size 16)");
}

TEST(BefRobustness, KernelMissingFromImage) {
  std::vector<uint8_t> bytes = Serialize(SmallArtifact());
  auto* image = fb::GetMutableBefFile(bytes.data())->mutable_kernel_images()->GetMutableObject(0);
  image->mutable_kernels()->GetMutableObject(0)->mutable_name()->Mutate(1, '9');  // k0 -> k9
  Reseal(bytes);
  EXPECT_EQ(LoadError(bytes),
            "invalid .bef file: kernel 'k0' of kernel thunk 'add' is missing from the kernel "
            "image for 'host'");
}

TEST(BefRobustness, UnknownEnumValue) {
  std::vector<uint8_t> bytes = Serialize(SampleArtifact());
  auto* thunk = fb::GetMutableBefFile(bytes.data())->mutable_program()->mutable_thunks()->GetMutableObject(9);
  auto* all_reduce = static_cast<fb::AllReduceThunk*>(thunk->mutable_body());
  ASSERT_TRUE(all_reduce->mutate_reduction(static_cast<fb::ReductionKind>(9)));  // kMax is stored
  Reseal(bytes);
  EXPECT_EQ(LoadError(bytes), "corrupt .bef file: unknown reduction kind 9");
}

// Builds a minimal file by hand: empty-tuple result, the given allocations,
// constants and program, with a whole-file checksum (sections have none).
class HandMade {
 public:
  flatbuffers::FlatBufferBuilder fbb;

  std::vector<uint8_t> Finish(flatbuffers::Offset<fb::SequenceThunk> program,
                              std::vector<flatbuffers::Offset<fb::Allocation>> allocations = {},
                              std::vector<flatbuffers::Offset<fb::Constant>> constants = {}) {
    auto tuple = fbb.CreateString("tuple");
    auto result = fb::CreateShape(fbb, tuple);
    auto signature = fb::CreateSignature(fbb, 0, result);
    auto allocations_vec = fbb.CreateVector(allocations);
    auto constants_vec = fbb.CreateVector(constants);
    fb::BefFileBuilder file(fbb);
    file.add_schema_version(kBefVersionMajor << 16);
    file.add_file_size(1);
    file.add_allocations(allocations_vec);
    file.add_constants(constants_vec);
    file.add_signature(signature);
    file.add_program(program);
    file.add_checksum(1);
    fb::FinishBefFileBuffer(fbb, file.Finish());
    fb::GetMutableBefFile(fbb.GetBufferPointer())->mutate_file_size(fbb.GetSize());
    std::vector<uint8_t> bytes(fbb.GetBufferPointer(), fbb.GetBufferPointer() + fbb.GetSize());
    // The file checksum computed here (ResealChecksums would refuse a file
    // the verifier rejects, and some of these must reach the verifier).
    auto* root = fb::GetMutableBefFile(bytes.data());
    const auto* table = reinterpret_cast<const flatbuffers::Table*>(root);
    const size_t field = static_cast<size_t>(reinterpret_cast<const uint8_t*>(table) - bytes.data()) +
                         table->GetOptionalFieldOffset(fb::BefFile::VT_CHECKSUM);
    root->mutate_checksum(FileChecksum(bytes, field));
    return bytes;
  }
};

TEST(BefRobustness, HandMadeMinimalFileLoads) {
  HandMade h;
  std::vector<uint8_t> bytes = h.Finish(fb::CreateSequenceThunk(h.fbb));
  EXPECT_EQ(LoadError(bytes), "OK");
}

// Constant data `skew` bytes past a 64-byte boundary (0: aligned).
std::vector<uint8_t> FileWithConstantSkewedBy(size_t skew, size_t* data_offset) {
  HandMade h;
  const std::vector<uint8_t> data(16, 0xab);
  // The builder writes back to front: aligning (data + skew) bytes to 64
  // and then writing the data leaves the data `skew` bytes past a boundary
  // (the finished file's size is a multiple of the 64-byte alignment).
  h.fbb.ForceVectorAlignment(data.size() + skew, 1, 64);
  auto data_vec = h.fbb.CreateVector(data);
  auto name = h.fbb.CreateString("c");
  auto constant = fb::CreateConstant(h.fbb, name, data_vec);
  auto allocation = fb::CreateAllocation(h.fbb, 16, 64, 0, 0, int64_t{0});
  std::vector<uint8_t> bytes = h.Finish(fb::CreateSequenceThunk(h.fbb), {allocation}, {constant});
  const auto* c = fb::GetBefFile(bytes.data())->constants()->Get(0);
  *data_offset = static_cast<size_t>(c->data()->data() - bytes.data());
  return bytes;
}

TEST(BefRobustness, ConstantsMustBe64ByteAligned) {
  size_t offset = 0;
  std::vector<uint8_t> aligned = FileWithConstantSkewedBy(0, &offset);
  ASSERT_EQ(offset % 64, 0u);
  EXPECT_EQ(LoadError(aligned), "OK");  // the control: same file, aligned

  std::vector<uint8_t> skewed = FileWithConstantSkewedBy(8, &offset);
  ASSERT_EQ(offset % 64, 8u);
  EXPECT_EQ(LoadError(skewed), "corrupt .bef file: data of constant 0 ('c') is at file offset " +
                                   std::to_string(offset) + ", not 64-byte aligned");
}

TEST(BefRobustness, UnknownThunkKindAndMissingBody) {
  {
    HandMade h;
    auto body = fb::CreateCopyThunk(h.fbb);
    auto thunk = fb::CreateThunk(h.fbb, 0, static_cast<fb::ThunkBody>(99), body.Union());
    auto program = fb::CreateSequenceThunk(h.fbb, h.fbb.CreateVector(std::vector{thunk}));
    EXPECT_EQ(LoadError(h.Finish(program)),
              "corrupt .bef file: unknown thunk kind 99 (written by a newer kiln?)");
  }
  {
    HandMade h;
    auto thunk = fb::CreateThunk(h.fbb);
    auto program = fb::CreateSequenceThunk(h.fbb, h.fbb.CreateVector(std::vector{thunk}));
    EXPECT_EQ(LoadError(h.Finish(program)), "corrupt .bef file: thunk '' has no body");
  }
  {
    HandMade h;  // a copy without its slices
    auto thunk = fb::CreateThunk(h.fbb, 0, fb::ThunkBody::CopyThunk, fb::CreateCopyThunk(h.fbb).Union());
    auto program = fb::CreateSequenceThunk(h.fbb, h.fbb.CreateVector(std::vector{thunk}));
    EXPECT_EQ(LoadError(h.Finish(program)), "corrupt .bef file: missing source slice");
  }
}

// `levels` sequence thunks nested inside each other under the root.
std::vector<uint8_t> NestedSequences(int levels) {
  HandMade h;
  auto inner = fb::CreateSequenceThunk(h.fbb);
  for (int i = 0; i < levels; ++i) {
    auto thunk = fb::CreateThunk(h.fbb, 0, fb::ThunkBody::SequenceThunk, inner.Union());
    inner = fb::CreateSequenceThunk(h.fbb, h.fbb.CreateVector(std::vector{thunk}));
  }
  return h.Finish(inner);
}

TEST(BefRobustness, DeepTreesAreRejectedWithoutRecursingForever) {
  EXPECT_EQ(LoadError(NestedSequences(th::kMaxThunkDepth - 1)), "OK");
  // Deeper than the program limit but within the verifier's: semantic check.
  EXPECT_EQ(LoadError(NestedSequences(100)),
            "invalid .bef file: the thunk tree is deeper than 64 levels");
  // Far deeper: the verifier's depth limit stops it before any recursion
  // in the loader.
  EXPECT_EQ(LoadError(NestedSequences(100000)),
            "corrupt .bef file: FlatBuffers verification failed (damaged file)");
}

TEST(BefRobustness, SharedDataCannotMultiplyMemory) {
  // 10000 constant tables all pointing at one 4 KiB vector: a 40 MB copy
  // from a ~200 KB file unless the loader charges copies to the file size.
  HandMade h;
  h.fbb.ForceVectorAlignment(4096, 1, 64);
  auto data = h.fbb.CreateVector(std::vector<uint8_t>(4096, 1));
  std::vector<flatbuffers::Offset<fb::Constant>> constants;
  for (int i = 0; i < 10000; ++i) constants.push_back(fb::CreateConstant(h.fbb, 0, data));
  const std::vector<uint8_t> bytes = h.Finish(fb::CreateSequenceThunk(h.fbb), {}, constants);
  EXPECT_LT(bytes.size(), 400000u);
  EXPECT_TRUE(Contains(LoadError(bytes), "tables share more data than the file holds"))
      << LoadError(bytes);
}

}  // namespace
}  // namespace kiln::bef
