// AllocationsReadBeforeWritten on hand-built programs whose answer is read
// off the thunks: which allocation some thunk (or the caller) may read
// before anything wrote it, through straight-line code, partial writers,
// loops and conditionals; and the validator refusing a program that claims
// otherwise.
#include <gtest/gtest.h>

#include "tests/support/sample_artifact.h"
#include "thunks/initialization_analysis.h"
#include "thunks/validate.h"

namespace kiln::thunks {
namespace {

using ::kiln::testing::MakeThunk;
using ::kiln::testing::S;

ThunkProgram Program(std::vector<Thunk> thunks) {
  return ::kiln::testing::ParameterTempOutputProgram(std::move(thunks));
}

Thunk Copy(BufferSlice from, BufferSlice to) { return MakeThunk("copy", CopyThunk{from, to}); }
Thunk Memset(BufferSlice to) { return MakeThunk("memset", MemsetThunk{to, 0}); }
Thunk Kernel(std::vector<KernelArgument> args) {
  return MakeThunk("fusion", KernelThunk{"k", std::move(args), {}});
}

std::vector<bool> Needs(std::vector<Thunk> thunks) { return AllocationsReadBeforeWritten(Program(std::move(thunks))); }

TEST(InitializationAnalysis, WrittenBeforeReadNeedsNoZeroing) {
  // a1[0:64] = f(a0); a2 = g(a1[0:64]).
  EXPECT_EQ(Needs({Kernel({{S(0, 0, 64), false}, {S(1, 0, 64), true}}),
                   Kernel({{S(1, 0, 64), false}, {S(2, 0, 64), true}})}),
            (std::vector<bool>{false, false, false}));
}

TEST(InitializationAnalysis, ReadOfUnwrittenBytesNeedsZeroing) {
  // a1[0:64] written, a1[32:96] read: bytes 64..96 were never written.
  EXPECT_EQ(Needs({Memset(S(1, 0, 64)), Copy(S(1, 32, 64), S(2, 0, 64))}),
            (std::vector<bool>{false, true, false}));
  // Two writes that together cover the read.
  EXPECT_EQ(Needs({Memset(S(1, 0, 64)), Memset(S(1, 64, 32)), Copy(S(1, 32, 64), S(2, 0, 64))}),
            (std::vector<bool>{false, false, false}));
}

TEST(InitializationAnalysis, InPlaceKernelReadsTheOutputItUpdates) {
  // A dynamic-update-slice in place: operand and output are a2 itself, and
  // nothing wrote a2 first.
  EXPECT_EQ(Needs({Kernel({{S(2, 0, 64), false}, {S(0, 0, 4), false}, {S(2, 0, 64), true}})}),
            (std::vector<bool>{false, false, true}));
  // After a copy of the operand into it, the update in place is covered.
  EXPECT_EQ(Needs({Copy(S(0, 0, 64), S(2, 0, 64)),
                   Kernel({{S(2, 0, 64), false}, {S(0, 0, 4), false}, {S(2, 0, 64), true}})}),
            (std::vector<bool>{false, false, false}));
}

TEST(InitializationAnalysis, GemmWithBetaReadsItsOutput) {
  GemmThunk g;
  g.lhs = S(0, 0, 64);
  g.rhs = S(0, 0, 64);
  g.out = S(2, 0, 64);
  g.beta = 0;
  EXPECT_EQ(Needs({MakeThunk("dot", g)}), (std::vector<bool>{false, false, false}));
  g.beta = 1;
  EXPECT_EQ(Needs({MakeThunk("dot", g)}), (std::vector<bool>{false, false, true}));
}

TEST(InitializationAnalysis, ResultNeverWrittenNeedsZeroing) {
  EXPECT_EQ(Needs({Memset(S(2, 0, 32))}), (std::vector<bool>{false, false, true}));
}

TEST(InitializationAnalysis, LoopBodyWritesCountOnlyWhenTheBodySurelyRuns) {
  auto loop = [](std::optional<int64_t> trip_count) {
    WhileThunk w;
    w.condition.thunks.push_back(Memset(S(1, 64, 1)));  // the predicate
    w.predicate = S(1, 64, 1);
    w.body.thunks.push_back(Copy(S(0, 0, 64), S(2, 0, 64)));
    w.trip_count = trip_count;
    return MakeThunk("while", w);
  };
  // Unknown trip count: the body may never run, so a2 may be unwritten.
  EXPECT_EQ(Needs({loop(std::nullopt)}), (std::vector<bool>{false, false, true}));
  EXPECT_EQ(Needs({loop(2)}), (std::vector<bool>{false, false, false}));
  EXPECT_EQ(Needs({loop(0)}), (std::vector<bool>{false, false, true}));
}

TEST(InitializationAnalysis, LoopCarriedReadBeforeTheFirstWrite) {
  // The body reads a1[0:64] and writes it after: the first iteration reads
  // what no one wrote.
  WhileThunk w;
  w.body.thunks.push_back(Copy(S(1, 0, 64), S(2, 0, 64)));
  w.body.thunks.push_back(Copy(S(0, 0, 64), S(1, 0, 64)));
  w.trip_count = 3;
  EXPECT_EQ(Needs({MakeThunk("while", w)}), (std::vector<bool>{false, true, false}));
}

TEST(InitializationAnalysis, ConditionalKeepsWhatEveryBranchWrites) {
  auto conditional = [](bool both) {
    ConditionalThunk c;
    c.branch_index = S(0, 0, 4);
    c.is_pred = true;
    c.branches.resize(2);
    c.branches[0].thunks.push_back(Copy(S(0, 0, 64), S(2, 0, 64)));
    if (both) c.branches[1].thunks.push_back(Memset(S(2, 0, 64)));
    return MakeThunk("conditional", c);
  };
  EXPECT_EQ(Needs({conditional(true)}), (std::vector<bool>{false, false, false}));
  EXPECT_EQ(Needs({conditional(false)}), (std::vector<bool>{false, false, true}));
}

TEST(InitializationAnalysis, ValidatorRefusesAnUnzeroedAllocationReadFirst) {
  ThunkProgram p = Program({Copy(S(1, 0, 64), S(2, 0, 64))});
  MarkZeroInitializedAllocations(p);
  EXPECT_TRUE(p.allocations[1].zero_initialize);
  EXPECT_FALSE(p.allocations[2].zero_initialize);
  EXPECT_TRUE(ValidateProgram(p).ok()) << ValidateProgram(p).message();
  p.allocations[1].zero_initialize = false;
  Status s = ValidateProgram(p);
  ASSERT_FALSE(s.ok());
  EXPECT_EQ(s.message(), "allocation 1 may be read before it is written but is not zero-initialized");
}

}  // namespace
}  // namespace kiln::thunks
