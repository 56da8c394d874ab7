// Stream assignment on hand-built programs whose dependencies are read off
// the thunks' slices: independent thunks go to different streams, chains
// stay on one, every cross-stream dependency gets an event and no more,
// write-after-read and overlapping slices count, thunks with effects beyond
// their slices stay on stream 0, and the result is a valid program.
#include <gtest/gtest.h>

#include "compiler/emitter/stream_assignment.h"
#include "tests/support/sample_artifact.h"
#include "thunks/validate.h"

namespace kiln::emitter {
namespace {

namespace th = ::kiln::thunks;
using ::kiln::testing::MakeThunk;
using ::kiln::testing::S;
using Deps = std::vector<std::vector<int32_t>>;

// a0: a 256-byte parameter, a1: 1024 bytes of temporaries, a2: the 256-byte
// result.
th::ThunkProgram Program(std::vector<th::Thunk> thunks) {
  th::ThunkProgram p;
  p.allocations = {{256, 64, th::ParameterRef{0, {}}, std::nullopt, std::nullopt},
                   {1024, 64, std::nullopt, std::nullopt, std::nullopt},
                   {256, 64, std::nullopt, ShapeIndex{}, std::nullopt}};
  Shape f32(ElementType::kF32, {64});
  p.signature.parameters = {f32};
  p.signature.result = f32;
  p.signature.parameter_leaves = {{0, {}, S(0, 0, 256)}};
  p.signature.result_leaves = {{{}, S(2, 0, 256)}};
  p.root.thunks = std::move(thunks);
  return p;
}

// A kernel reading `in` and writing `out`, `bytes` of memory traffic.
th::Thunk Kernel(std::string name, std::vector<th::BufferSlice> in, th::BufferSlice out, int64_t bytes = 256) {
  std::vector<th::KernelArgument> args;
  for (const th::BufferSlice& s : in) args.push_back({s, false});
  args.push_back({out, true});
  th::Thunk t = MakeThunk(std::move(name), th::KernelThunk{"k", std::move(args), {}});
  t.info.cost.bytes_read = bytes;
  return t;
}

// A 4x4x4 f32 GEMM with the cost of a large one, so the schedule sees it
// keep its stream busy.
th::Thunk Gemm(std::string name, th::BufferSlice lhs, th::BufferSlice rhs, th::BufferSlice out) {
  th::GemmThunk g;
  g.lhs = lhs;
  g.rhs = rhs;
  g.out = out;
  g.m = g.n = g.k = 4;
  g.lhs_leading_dim = g.rhs_leading_dim = g.out_leading_dim = 4;
  th::Thunk t = MakeThunk(std::move(name), g);
  t.info.cost.flops = int64_t{1} << 34;
  return t;
}

std::vector<int32_t> Streams(const th::ThunkProgram& p) {
  std::vector<int32_t> s;
  for (const th::Thunk& t : p.root.thunks) s.push_back(t.stream);
  return s;
}

TEST(StreamAssignment, GemmAndIndependentKernelGetDifferentStreams) {
  // gemm: a1[0:64] = a0[0:64] x a0[64:128]; fusion: a1[64:128] = f(a0[128:192]);
  // join: a2 = g(a1[0:64], a1[64:128]) after both.
  th::ThunkProgram p = Program({Gemm("dot", S(0, 0, 64), S(0, 64, 64), S(1, 0, 64)),
                                Kernel("fusion", {S(0, 128, 64)}, S(1, 64, 64)),
                                Kernel("join", {S(1, 0, 64), S(1, 64, 64)}, S(2, 0, 256))});
  StreamAssignmentStats stats = AssignStreams(p, 4);
  EXPECT_EQ(Streams(p), (std::vector<int32_t>{0, 1, 0}));
  EXPECT_EQ(stats.streams, 2);
  EXPECT_EQ(p.num_streams, 2);
  // One event: the fusion records it, the join (on the GEMM's stream, which
  // finishes last) waits for it; the GEMM needs none for its own stream.
  EXPECT_EQ(p.num_events, 1);
  EXPECT_EQ(p.root.thunks[0].record_event, -1);
  EXPECT_EQ(p.root.thunks[1].record_event, 0);
  EXPECT_EQ(p.root.thunks[2].wait_events, (std::vector<int32_t>{0}));
  EXPECT_TRUE(th::ValidateProgram(p).ok()) << th::ValidateProgram(p).message();
}

TEST(StreamAssignment, DependentChainStaysOnOneStream) {
  th::ThunkProgram p = Program({Kernel("a", {S(0, 0, 256)}, S(1, 0, 256)),
                                Kernel("b", {S(1, 0, 256)}, S(1, 256, 256)),
                                Kernel("c", {S(1, 256, 256)}, S(2, 0, 256))});
  EXPECT_EQ(RootDependencies(p), (Deps{{}, {0}, {1}}));
  StreamAssignmentStats stats = AssignStreams(p, 4);
  EXPECT_EQ(Streams(p), (std::vector<int32_t>{0, 0, 0}));
  EXPECT_EQ(stats.streams, 1);
  EXPECT_EQ(p.num_streams, 1);
  EXPECT_EQ(p.num_events, 0);
  for (const th::Thunk& t : p.root.thunks) {
    EXPECT_TRUE(t.wait_events.empty());
    EXPECT_EQ(t.record_event, -1);
  }
}

TEST(StreamAssignment, HazardsOnSharedBytes) {
  // read after write through overlapping slices of one allocation:
  // a1[0:64] written, a1[32:96] read.
  EXPECT_EQ(RootDependencies(Program({Kernel("w", {S(0, 0, 64)}, S(1, 0, 64)),
                                      Kernel("r", {S(1, 32, 64)}, S(2, 0, 64))})),
            (Deps{{}, {0}}));
  // Adjacent slices share no byte.
  EXPECT_EQ(RootDependencies(Program({Kernel("w", {S(0, 0, 64)}, S(1, 0, 64)),
                                      Kernel("r", {S(1, 64, 64)}, S(2, 0, 64))})),
            (Deps{{}, {}}));
  // Write after read: the memset reuses bytes the kernel reads (as buffer
  // assignment reusing a temporary's bytes does).
  th::ThunkProgram war = Program({Kernel("r", {S(1, 0, 64)}, S(2, 0, 64)),
                                  MakeThunk("memset", th::MemsetThunk{S(1, 0, 128), 0})});
  EXPECT_EQ(RootDependencies(war), (Deps{{}, {0}}));
  AssignStreams(war, 4);
  EXPECT_EQ(Streams(war), (std::vector<int32_t>{0, 0}));
  // Write after write.
  EXPECT_EQ(RootDependencies(Program({MakeThunk("m1", th::MemsetThunk{S(1, 0, 64), 0}),
                                      MakeThunk("m2", th::MemsetThunk{S(1, 60, 4), 0})})),
            (Deps{{}, {0}}));
  // Two readers of one slice are independent.
  EXPECT_EQ(RootDependencies(Program({Kernel("r1", {S(0, 0, 64)}, S(1, 0, 64)),
                                      Kernel("r2", {S(0, 0, 64)}, S(1, 64, 64))})),
            (Deps{{}, {}}));
  // An in-place update (the kernel reads and writes a1[0:64]) after a reader.
  EXPECT_EQ(RootDependencies(Program({Kernel("r", {S(1, 0, 64)}, S(2, 0, 64)),
                                      Kernel("update", {S(1, 0, 64), S(0, 0, 4)}, S(1, 0, 64))})),
            (Deps{{}, {0}}));
}

TEST(StreamAssignment, ControlFlowIsOneUnitWritingAllItsSlices) {
  // The loop's body only reads a1[0:64]; as a unit, it counts as writing it,
  // so the later reader depends on it.
  th::WhileThunk loop;
  loop.trip_count = 2;
  loop.predicate = S(1, 512, 1);
  loop.body.thunks = {Kernel("body", {S(1, 0, 64)}, S(1, 128, 64))};
  th::ThunkProgram p = Program({MakeThunk("while", loop), Kernel("r", {S(1, 0, 64)}, S(2, 0, 64))});
  EXPECT_EQ(RootDependencies(p), (Deps{{}, {0}}));
}

TEST(StreamAssignment, EventsAreTransitivelyReduced) {
  // dot (s0) || b -> c (s1); d reads all three. d runs on the dot's stream
  // and waits for c alone: c comes after b on its stream.
  th::ThunkProgram p = Program({Gemm("dot", S(0, 0, 64), S(0, 64, 64), S(1, 0, 64)),
                                Kernel("b", {S(0, 128, 64)}, S(1, 64, 64)),
                                Kernel("c", {S(1, 64, 64)}, S(1, 128, 64)),
                                Kernel("d", {S(1, 0, 64), S(1, 64, 64), S(1, 128, 64)}, S(2, 0, 256))});
  StreamAssignmentStats stats = AssignStreams(p, 2);
  EXPECT_EQ(Streams(p), (std::vector<int32_t>{0, 1, 1, 0}));
  EXPECT_EQ(stats.cross_stream_dependencies, 2);  // d on b and on c
  EXPECT_EQ(p.num_events, 1);
  EXPECT_EQ(p.root.thunks[1].record_event, -1);
  EXPECT_EQ(p.root.thunks[2].record_event, 0);
  EXPECT_EQ(p.root.thunks[3].wait_events, (std::vector<int32_t>{0}));
  EXPECT_TRUE(th::ValidateProgram(p).ok()) << th::ValidateProgram(p).message();
}

TEST(StreamAssignment, DeviceEffectsStayOnStreamZero) {
  // The replica id is independent of the GEMM but stays behind it on stream 0.
  th::ThunkProgram p = Program({Gemm("dot", S(0, 0, 64), S(0, 64, 64), S(1, 0, 64)),
                                MakeThunk("replica-id", th::DeviceIdThunk{th::DeviceIdKind::kReplica, S(1, 512, 4)}),
                                Kernel("fusion", {S(0, 128, 64)}, S(1, 64, 64))});
  AssignStreams(p, 4);
  EXPECT_EQ(Streams(p), (std::vector<int32_t>{0, 0, 1}));
}

TEST(StreamAssignment, OneStreamLeavesTheProgramAsItWas) {
  th::ThunkProgram p = Program({Gemm("dot", S(0, 0, 64), S(0, 64, 64), S(1, 0, 64)),
                                Kernel("fusion", {S(0, 128, 64)}, S(1, 64, 64))});
  const th::ThunkProgram before = p;
  StreamAssignmentStats stats = AssignStreams(p, 1);
  EXPECT_EQ(stats.streams, 1);
  EXPECT_EQ(stats.events, 0);
  EXPECT_TRUE(p == before);
}

}  // namespace
}  // namespace kiln::emitter
