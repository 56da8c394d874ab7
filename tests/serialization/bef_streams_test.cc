// Streams and events in .bef files: a two-stream program round trips, a
// file without them (written before 3.3) loads with every thunk on stream
// 0, and files whose stream or event fields were edited to break a rule
// (stream out of range, a wait with no earlier record, a wait on its own
// record, an event recorded twice, counts out of range) are rejected with
// one line naming the thunk.
#include <gtest/gtest.h>

#include "serialization/artifact.h"
#include "serialization/bef_checksum.h"
#include "serialization/bef_generated.h"
#include "tests/support/sample_artifact.h"
#include "thunks/program_text.h"

namespace kiln::bef {
namespace {

using ::kiln::testing::LoadError;
using ::kiln::testing::MakeThunk;
using ::kiln::testing::S;
using ::kiln::testing::Serialize;
using ::kiln::testing::SmallArtifact;
namespace th = ::kiln::thunks;

th::Thunk Kernel(std::string name, th::BufferSlice in, th::BufferSlice out) {
  return MakeThunk(std::move(name), th::KernelThunk{"k0", {{in, false}, {out, true}}, {{1, 1, 1}, {4, 1, 1}, 0}});
}

// left (stream 0, records e1) and right (stream 1, waits e1, records e0)
// write halves of a2; join (stream 0) waits e0 and reads both halves.
Artifact TwoStreamArtifact() {
  th::ThunkProgram p;
  p.allocations = {{16, 64, th::ParameterRef{0, {}}, std::nullopt, std::nullopt},
                   {16, 64, std::nullopt, ShapeIndex{}, std::nullopt},
                   {32, 64, std::nullopt, std::nullopt, std::nullopt}};
  p.signature.parameters = {Shape(ElementType::kF32, {4})};
  p.signature.result = Shape(ElementType::kF32, {4});
  p.signature.parameter_leaves = {{0, {}, S(0, 0, 16)}};
  p.signature.result_leaves = {{{}, S(1, 0, 16)}};
  th::Thunk left = Kernel("left", S(0, 0, 16), S(2, 0, 16));
  left.record_event = 1;
  th::Thunk right = Kernel("right", S(0, 0, 16), S(2, 16, 16));
  right.stream = 1;
  right.wait_events = {1};
  right.record_event = 0;
  th::Thunk join = Kernel("join", S(2, 0, 32), S(1, 0, 16));
  join.wait_events = {0};
  p.root.thunks = {left, right, join};
  p.num_streams = 2;
  p.num_events = 2;
  return ::kiln::testing::HostArtifact(std::move(p), {"k0"}, {0x7f, 'E', 'L', 'F'});
}

fb::Thunk* RootThunk(std::vector<uint8_t>& bytes, flatbuffers::uoffset_t i) {
  return fb::GetMutableBefFile(bytes.data())->mutable_program()->mutable_thunks()->GetMutableObject(i);
}

// The loader's error after `edit` changed the two-stream file's bytes.
template <typename Edit>
std::string ErrorAfter(Edit edit) {
  std::vector<uint8_t> bytes = Serialize(TwoStreamArtifact());
  edit(bytes);
  EXPECT_TRUE(ResealChecksums(bytes).ok());
  return LoadError(bytes);
}

TEST(BefStreams, TwoStreamProgramRoundTrips) {
  const Artifact original = TwoStreamArtifact();
  StatusOr<Artifact> loaded = LoadArtifact(Serialize(original));
  ASSERT_TRUE(loaded.ok()) << loaded.status().message();
  EXPECT_TRUE(*loaded == original);
  EXPECT_EQ(loaded->program.num_streams, 2);
  EXPECT_EQ(loaded->program.num_events, 2);
  const std::string text = th::ProgramToText(loaded->program);
  EXPECT_NE(text.find("program: streams 2, events 2\n"), std::string::npos) << text;
  EXPECT_NE(text.find("kernel right fn=k0"), std::string::npos) << text;
  EXPECT_NE(text.find(" stream 1 wait e1 record e0"), std::string::npos) << text;
  EXPECT_NE(text.find(" stream 0 wait e0"), std::string::npos) << text;
}

TEST(BefStreams, FileWithoutStreamsRunsOnStreamZero) {
  // A one-stream program writes no stream field (all defaults), which is
  // what a 3.2 writer produced; mark the file 3.2 as well.
  std::vector<uint8_t> bytes = Serialize(SmallArtifact());
  fb::GetMutableBefFile(bytes.data())->mutate_schema_version((kBefVersionMajor << 16) | 2);
  ASSERT_TRUE(ResealChecksums(bytes).ok());
  StatusOr<Artifact> loaded = LoadArtifact(bytes);
  ASSERT_TRUE(loaded.ok()) << loaded.status().message();
  EXPECT_EQ(loaded->program.num_streams, 1);
  EXPECT_EQ(loaded->program.num_events, 0);
  for (const th::Thunk& t : loaded->program.root.thunks) {
    EXPECT_EQ(t.stream, 0);
    EXPECT_TRUE(t.wait_events.empty());
    EXPECT_EQ(t.record_event, -1);
  }
}

TEST(BefStreams, CorruptStreamAndEventFieldsAreRejected) {
  EXPECT_EQ(ErrorAfter([](std::vector<uint8_t>& b) { RootThunk(b, 1)->mutate_stream(5); }),
            "invalid .bef file: root thunk 1 'right': stream 5 is outside [0, 2)");
  EXPECT_EQ(ErrorAfter([](std::vector<uint8_t>& b) { RootThunk(b, 1)->mutate_stream(-1); }),
            "invalid .bef file: root thunk 1 'right': stream -1 is outside [0, 2)");
  // right waiting for the event it records itself: a cycle.
  EXPECT_EQ(ErrorAfter([](std::vector<uint8_t>& b) { RootThunk(b, 1)->mutable_wait_events()->Mutate(0, 0); }),
            "invalid .bef file: root thunk 1 'right': waits for event 0, which no earlier root thunk records");
  EXPECT_EQ(ErrorAfter([](std::vector<uint8_t>& b) { RootThunk(b, 2)->mutable_wait_events()->Mutate(0, 9); }),
            "invalid .bef file: root thunk 2 'join': waits for event 9, which no earlier root thunk records");
  EXPECT_EQ(ErrorAfter([](std::vector<uint8_t>& b) { RootThunk(b, 1)->mutate_record_event(1); }),
            "invalid .bef file: root thunk 1 'right': records event 1 a second time");
  EXPECT_EQ(ErrorAfter([](std::vector<uint8_t>& b) { RootThunk(b, 1)->mutate_record_event(7); }),
            "invalid .bef file: root thunk 1 'right': records event 7, outside [0, 2)");
  EXPECT_EQ(ErrorAfter([](std::vector<uint8_t>& b) { fb::GetMutableBefFile(b.data())->mutate_num_streams(100); }),
            "invalid .bef file: num_streams 100 is outside [1, 16]");
  EXPECT_EQ(ErrorAfter([](std::vector<uint8_t>& b) { fb::GetMutableBefFile(b.data())->mutate_num_events(-3); }),
            "invalid .bef file: num_events -3 is outside [0, 3] (one per root thunk at most)");
}

}  // namespace
}  // namespace kiln::bef
