// CollectiveTrafficOf against hand-computed nccl-tests sizes and bus
// factors, on thunks built here (the end-to-end figures are in
// tests/e2e/collective_profile_e2e_test.cc).
#include "thunks/collective_traffic.h"

#include <gtest/gtest.h>

namespace kiln::thunks {
namespace {

CollectiveBuffer BufferOf(int64_t bytes) {
  CollectiveBuffer b;
  b.source.size = bytes;
  b.destination.size = bytes;
  return b;
}

CollectiveConfig GroupsOf(std::vector<std::vector<int64_t>> groups) {
  CollectiveConfig c;
  c.device_groups = std::move(groups);
  return c;
}

TEST(CollectiveTraffic, TupleAllReduceSumsItsBuffersOverGroupsOfThree) {
  Thunk t{{}, AllReduceThunk{GroupsOf({{0, 1, 2}, {3, 4, 5}}), ReductionKind::kSum, {BufferOf(96), BufferOf(32)}}};
  auto traffic = CollectiveTrafficOf(t);
  ASSERT_TRUE(traffic.has_value());
  EXPECT_EQ(traffic->bytes, 128);
  EXPECT_EQ(traffic->devices, 3);
  EXPECT_DOUBLE_EQ(traffic->bus_factor, 4.0 / 3.0);  // 2 * 2 / 3
  // 128 bytes in 2 µs: 0.064 GB/s, on the bus 0.064 * 4 / 3.
  EXPECT_DOUBLE_EQ(traffic->AlgorithmGBps(2e-6), 0.064);
  EXPECT_DOUBLE_EQ(traffic->BusGBps(2e-6), 0.064 * 4.0 / 3.0);
  EXPECT_EQ(traffic->AlgorithmGBps(0), 0);
}

TEST(CollectiveTraffic, AllGatherCountsTheGatheredResult) {
  AllGatherThunk ag{GroupsOf({{0, 1, 2, 3, 4, 5, 6, 7}}), 0, {BufferOf(40)}};
  auto traffic = CollectiveTrafficOf(Thunk{{}, ag});
  ASSERT_TRUE(traffic.has_value());
  EXPECT_EQ(traffic->bytes, 320);
  EXPECT_DOUBLE_EQ(traffic->bus_factor, 0.875);
}

TEST(CollectiveTraffic, PermuteAndBroadcastMoveTheBufferOnce) {
  CollectivePermuteThunk cp;
  cp.buffer = BufferOf(64);
  cp.device_pairs = {{0, 1}, {1, 2}, {2, 0}};
  auto permute = CollectiveTrafficOf(Thunk{{}, cp});
  ASSERT_TRUE(permute.has_value());
  EXPECT_EQ(permute->bytes, 64);
  EXPECT_EQ(permute->devices, 3);
  EXPECT_DOUBLE_EQ(permute->bus_factor, 1);
  auto broadcast = CollectiveTrafficOf(Thunk{{}, CollectiveBroadcastThunk{GroupsOf({{0, 1}}), {BufferOf(8)}}});
  ASSERT_TRUE(broadcast.has_value());
  EXPECT_EQ(broadcast->bytes, 8);
  EXPECT_DOUBLE_EQ(broadcast->bus_factor, 1);
}

TEST(CollectiveTraffic, AsyncStartsAndOtherThunksHaveNone) {
  AllReduceThunk start{GroupsOf({{0, 1}}), ReductionKind::kSum, {BufferOf(16)}};
  start.config.async_id = 7;
  EXPECT_FALSE(CollectiveTrafficOf(Thunk{{}, start}).has_value());
  EXPECT_FALSE(CollectiveTrafficOf(Thunk{{}, CollectiveDoneThunk{7}}).has_value());
}

}  // namespace
}  // namespace kiln::thunks
