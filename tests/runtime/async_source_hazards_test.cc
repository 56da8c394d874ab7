// AsyncStartsNeedingSnapshots on hand-built programs: an async all-reduce
// of allocation 0's bytes [0, 64) into allocation 1, with thunks between
// its start and its done that touch those bytes or not. The oracle is the
// hand-drawn overlap of each program's slices.
#include "runtime/async_source_hazards.h"

#include <gtest/gtest.h>

namespace kiln::runtime {
namespace {

namespace th = ::kiln::thunks;

th::BufferSlice Slice(int32_t allocation, int64_t offset, int64_t size) { return {allocation, offset, size}; }

th::Thunk Start(int64_t id, th::BufferSlice source, th::BufferSlice destination) {
  th::AllReduceThunk ar;
  ar.config.async_id = id;
  ar.buffers.push_back({source, destination, ElementType::kF32, source.size / 4, {source.size / 4}});
  return th::Thunk{{}, std::move(ar)};
}
th::Thunk Done(int64_t id) { return th::Thunk{{}, th::CollectiveDoneThunk{id}}; }
th::Thunk Memset(th::BufferSlice to) { return th::Thunk{{}, th::MemsetThunk{to, 0}}; }

th::ThunkProgram Program(std::vector<th::Thunk> thunks) {
  th::ThunkProgram p;
  p.root.thunks = std::move(thunks);
  return p;
}

TEST(AsyncSourceHazards, ComputeAwayFromTheSourceNeedsNoSnapshot) {
  EXPECT_TRUE(AsyncStartsNeedingSnapshots(Program({Start(7, Slice(0, 0, 64), Slice(1, 0, 64)),
                                                   Memset(Slice(0, 64, 64)), Memset(Slice(2, 0, 64)), Done(7)}))
                  .empty());
}

TEST(AsyncSourceHazards, ComputeOverlappingTheSourceNeedsOne) {
  EXPECT_EQ(AsyncStartsNeedingSnapshots(
                Program({Start(7, Slice(0, 0, 64), Slice(1, 0, 64)), Memset(Slice(0, 60, 8)), Done(7)})),
            std::set<int64_t>{7});
}

TEST(AsyncSourceHazards, WritesAfterTheDoneDoNotCount) {
  EXPECT_TRUE(AsyncStartsNeedingSnapshots(
                  Program({Start(7, Slice(0, 0, 64), Slice(1, 0, 64)), Done(7), Memset(Slice(0, 0, 64))}))
                  .empty());
}

TEST(AsyncSourceHazards, AnInPlaceStartNeedsNone) {
  EXPECT_TRUE(AsyncStartsNeedingSnapshots(
                  Program({Start(7, Slice(0, 0, 64), Slice(0, 0, 64)), Memset(Slice(2, 0, 8)), Done(7)}))
                  .empty());
}

TEST(AsyncSourceHazards, ATouchInsideALoopBetweenCounts) {
  th::WhileThunk loop;
  loop.trip_count = 2;
  loop.body.thunks.push_back(Memset(Slice(0, 0, 4)));
  EXPECT_EQ(AsyncStartsNeedingSnapshots(
                Program({Start(3, Slice(0, 0, 64), Slice(1, 0, 64)), th::Thunk{{}, std::move(loop)}, Done(3)})),
            std::set<int64_t>{3});
}

TEST(AsyncSourceHazards, AMissingDoneOrSeveralStreamsNeedOne) {
  EXPECT_EQ(AsyncStartsNeedingSnapshots(Program({Start(1, Slice(0, 0, 64), Slice(1, 0, 64))})),
            std::set<int64_t>{1});
  th::ThunkProgram streams = Program({Start(1, Slice(0, 0, 64), Slice(1, 0, 64)), Done(1)});
  streams.num_streams = 2;
  EXPECT_EQ(AsyncStartsNeedingSnapshots(streams), std::set<int64_t>{1});
}

}  // namespace
}  // namespace kiln::runtime
