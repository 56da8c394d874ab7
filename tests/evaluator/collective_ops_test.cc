// Tests of the evaluator's collectives over simulated devices. Every device
// gets distinct inputs through EvaluateOnDevices; the expected results are
// worked out by hand in the comments (device = replica * num_partitions +
// partition).
#include <gtest/gtest.h>

#include <functional>
#include <string>
#include <vector>

#include "compiler/evaluator/evaluator.h"
#include "compiler/hlo/parser.h"
#include "tests/support/evaluator_test_util.h"

namespace kiln::hlo {
namespace {

using test_support::Array;
using test_support::Values;

// Runs `text` with args_for(device) on every device.
StatusOr<std::vector<Literal>> RunOnDevices(const std::string& text, int64_t devices,
                                            const std::function<std::vector<Literal>(int64_t)>& args_for) {
  KILN_ASSIGN_OR_RETURN(std::unique_ptr<HloModule> module, ParseHloModule(text));
  std::vector<std::vector<Literal>> args;
  for (int64_t d = 0; d < devices; ++d) args.push_back(args_for(d));
  EvaluatorOptions options;
  options.collective_timeout_seconds = 10;  // a wrong participant set fails, not hangs
  return Evaluator(options).EvaluateOnDevices(*module, args);
}

const char* kAddF32 = R"(
add {
  x = f32[] parameter(0)
  y = f32[] parameter(1)
  ROOT s = f32[] add(x, y)
}
)";

TEST(CollectiveTest, AllReduceSumInGroups) {
  // Device d holds [d+1, 10(d+1)]. Group {0,1}: [1+2, 10+20] = [3,30];
  // group {2,3}: [3+4, 30+40] = [7,70].
  std::string text = std::string("HloModule m, replica_count=4\n") + kAddF32 + R"(
ENTRY e {
  p = f32[2] parameter(0)
  ROOT ar = f32[2] all-reduce(p), replica_groups={{0,1},{2,3}}, to_apply=add
})";
  auto r = RunOnDevices(text, 4, [](int64_t d) {
    return std::vector<Literal>{Array(ElementType::kF32, {2}, {double(d + 1), 10.0 * (d + 1)})};
  });
  ASSERT_TRUE(r.ok()) << r.status().message();
  EXPECT_EQ(Values((*r)[0]), (std::vector<double>{3, 30}));
  EXPECT_EQ(Values((*r)[1]), (std::vector<double>{3, 30}));
  EXPECT_EQ(Values((*r)[2]), (std::vector<double>{7, 70}));
  EXPECT_EQ(Values((*r)[3]), (std::vector<double>{7, 70}));
}

TEST(CollectiveTest, AllReduceWithGeneralReducerAndTupleOperands) {
  // A variadic all-reduce applies the reducer (max, not the add fast path)
  // to each operand over all replicas: max of [d, -d] is [3, 0] and max of
  // [10 - d] is [10].
  std::string text = R"(HloModule m, replica_count=4
mx {
  x = s32[] parameter(0)
  y = s32[] parameter(1)
  ROOT m = s32[] maximum(x, y)
}
ENTRY e {
  p = s32[2] parameter(0)
  q = s32[1] parameter(1)
  ROOT ar = (s32[2], s32[1]) all-reduce(p, q), replica_groups={}, to_apply=mx
})";
  auto r = RunOnDevices(text, 4, [](int64_t d) {
    return std::vector<Literal>{Array(ElementType::kS32, {2}, {double(d), -double(d)}),
                                Array(ElementType::kS32, {1}, {double(10 - d)})};
  });
  ASSERT_TRUE(r.ok()) << r.status().message();
  for (int d = 0; d < 4; ++d) {
    EXPECT_EQ(Values((*r)[d].element(0)), (std::vector<double>{3, 0})) << "device " << d;
    EXPECT_EQ(Values((*r)[d].element(1)), (std::vector<double>{10})) << "device " << d;
  }
}

TEST(CollectiveTest, AllReduceRoundsEachStepLikeTheReducer) {
  // bf16 add folded in participant order: 1 + 2^-8 = 1 (tie to even), four
  // times -> 1. A single final rounding would give 1 + 3*2^-8 -> 1.0117 (bf16
  // 1.015625). The reducer is a bf16 computation, so every step rounds.
  std::string text = R"(HloModule m, replica_count=4
add {
  x = bf16[] parameter(0)
  y = bf16[] parameter(1)
  ROOT s = bf16[] add(x, y)
}
ENTRY e {
  p = bf16[1] parameter(0)
  ROOT ar = bf16[1] all-reduce(p), replica_groups={}, to_apply=add
})";
  auto r = RunOnDevices(text, 4, [](int64_t d) {
    return std::vector<Literal>{Array(ElementType::kBF16, {1}, {d == 0 ? 1.0 : 1.0 / 256})};
  });
  ASSERT_TRUE(r.ok()) << r.status().message();
  EXPECT_EQ((*r)[2].GetF64(0), 1.0);
}

TEST(CollectiveTest, AllGatherInGroups) {
  // Device d holds [[d, 10d]]; gathering along dimension 0 in groups {0,1}
  // and {2,3} stacks the two rows in group order.
  std::string text = R"(HloModule m, replica_count=4
ENTRY e {
  p = s32[1,2] parameter(0)
  ROOT ag = s32[2,2] all-gather(p), replica_groups={{0,1},{2,3}}, dimensions={0}
})";
  auto r = RunOnDevices(text, 4, [](int64_t d) {
    return std::vector<Literal>{Array(ElementType::kS32, {1, 2}, {double(d), 10.0 * d})};
  });
  ASSERT_TRUE(r.ok()) << r.status().message();
  EXPECT_EQ(Values((*r)[0]), (std::vector<double>{0, 0, 1, 10}));
  EXPECT_EQ(Values((*r)[1]), (std::vector<double>{0, 0, 1, 10}));
  EXPECT_EQ(Values((*r)[3]), (std::vector<double>{2, 20, 3, 30}));
}

TEST(CollectiveTest, AllGatherInnerDimensionAllReplicas) {
  // [[d],[100+d]] gathered along dimension 1 over all 4 replicas:
  // [[0,1,2,3],[100,101,102,103]]
  std::string text = R"(HloModule m, replica_count=4
ENTRY e {
  p = s32[2,1] parameter(0)
  ROOT ag = s32[2,4] all-gather(p), dimensions={1}
})";
  auto r = RunOnDevices(text, 4, [](int64_t d) {
    return std::vector<Literal>{Array(ElementType::kS32, {2, 1}, {double(d), 100.0 + d})};
  });
  ASSERT_TRUE(r.ok()) << r.status().message();
  EXPECT_EQ(Values((*r)[1]), (std::vector<double>{0, 1, 2, 3, 100, 101, 102, 103}));
}

TEST(CollectiveTest, ReduceScatterAllReplicas) {
  // Device d holds (d+1)*[1,2,3,4]; the sum is 10*[1,2,3,4] = [10,20,30,40]
  // and device d keeps element d.
  std::string text = R"(HloModule m, replica_count=4
add {
  x = u32[] parameter(0)
  y = u32[] parameter(1)
  ROOT s = u32[] add(x, y)
}
ENTRY e {
  p = u32[4] parameter(0)
  ROOT rs = u32[1] reduce-scatter(p), replica_groups={}, dimensions={0}, to_apply=add
})";
  auto r = RunOnDevices(text, 4, [](int64_t d) {
    double m = d + 1;
    return std::vector<Literal>{Array(ElementType::kU32, {4}, {m, 2 * m, 3 * m, 4 * m})};
  });
  ASSERT_TRUE(r.ok()) << r.status().message();
  for (int d = 0; d < 4; ++d) EXPECT_EQ((*r)[d].GetU64(0), 10u * (d + 1)) << "device " << d;
}

TEST(CollectiveTest, ReduceScatterBlockFollowsGroupPosition) {
  // Groups {1,0} and {3,2}: device d holds [d, 100d].
  //   group {1,0}: sum [1, 100]; device 1 (position 0) gets 1, device 0 gets 100
  //   group {3,2}: sum [5, 500]; device 3 (position 0) gets 5, device 2 gets 500
  std::string text = std::string("HloModule m, replica_count=4\n") + kAddF32 + R"(
ENTRY e {
  p = f32[2] parameter(0)
  ROOT rs = f32[1] reduce-scatter(p), replica_groups={{1,0},{3,2}}, dimensions={0}, to_apply=add
})";
  auto r = RunOnDevices(text, 4, [](int64_t d) {
    return std::vector<Literal>{Array(ElementType::kF32, {2}, {double(d), 100.0 * d})};
  });
  ASSERT_TRUE(r.ok()) << r.status().message();
  EXPECT_EQ((*r)[0].GetF64(0), 100);
  EXPECT_EQ((*r)[1].GetF64(0), 1);
  EXPECT_EQ((*r)[2].GetF64(0), 500);
  EXPECT_EQ((*r)[3].GetF64(0), 5);
}

TEST(CollectiveTest, AllToAllSplitDimension) {
  // Device d holds [10d, 10d+1, 10d+2, 10d+3]; block i goes to device i, so
  // device d receives element d of every device: [d, 10+d, 20+d, 30+d].
  std::string text = R"(HloModule m, replica_count=4
ENTRY e {
  p = s32[4] parameter(0)
  ROOT a = s32[4] all-to-all(p), replica_groups={{0,1,2,3}}, dimensions={0}
})";
  auto r = RunOnDevices(text, 4, [](int64_t d) {
    double b = 10.0 * d;
    return std::vector<Literal>{Array(ElementType::kS32, {4}, {b, b + 1, b + 2, b + 3})};
  });
  ASSERT_TRUE(r.ok()) << r.status().message();
  for (int d = 0; d < 4; ++d)
    EXPECT_EQ(Values((*r)[d]), (std::vector<double>{double(d), 10.0 + d, 20.0 + d, 30.0 + d}))
        << "device " << d;
}

TEST(CollectiveTest, AllToAllTupleForm) {
  // Groups {0,1},{2,3}; device d sends a=[10d] to group position 0 and
  // b=[10d+1] to position 1. Result element j = what participant j sent me:
  //   device 0: ([0], [10]); device 1: ([1], [11]); device 2: ([20], [30]);
  //   device 3: ([21], [31])
  std::string text = R"(HloModule m, replica_count=4
ENTRY e {
  a = s32[1] parameter(0)
  b = s32[1] parameter(1)
  ROOT t = (s32[1], s32[1]) all-to-all(a, b), replica_groups={{0,1},{2,3}}
})";
  auto r = RunOnDevices(text, 4, [](int64_t d) {
    return std::vector<Literal>{Array(ElementType::kS32, {1}, {10.0 * d}),
                                Array(ElementType::kS32, {1}, {10.0 * d + 1})};
  });
  ASSERT_TRUE(r.ok()) << r.status().message();
  const double expected[4][2] = {{0, 10}, {1, 11}, {20, 30}, {21, 31}};
  for (int d = 0; d < 4; ++d) {
    EXPECT_EQ((*r)[d].element(0).GetF64(0), expected[d][0]) << "device " << d;
    EXPECT_EQ((*r)[d].element(1).GetF64(0), expected[d][1]) << "device " << d;
  }
}

TEST(CollectiveTest, CollectivePermuteRing) {
  // Ring 0->1->2->3->0: device d receives device (d+3)%4's value [d'+1].
  std::string text = R"(HloModule m, replica_count=4
ENTRY e {
  p = f32[1] parameter(0)
  ROOT cp = f32[1] collective-permute(p), source_target_pairs={{0,1},{1,2},{2,3},{3,0}}
})";
  auto r = RunOnDevices(text, 4, [](int64_t d) {
    return std::vector<Literal>{Array(ElementType::kF32, {1}, {double(d + 1)})};
  });
  ASSERT_TRUE(r.ok()) << r.status().message();
  EXPECT_EQ((*r)[0].GetF64(0), 4);
  EXPECT_EQ((*r)[1].GetF64(0), 1);
  EXPECT_EQ((*r)[2].GetF64(0), 2);
  EXPECT_EQ((*r)[3].GetF64(0), 3);
}

TEST(CollectivePermuteTest, DevicesThatReceiveNothingGetZeros) {
  // Only 2 -> 0: device 0 gets 3 (device 2's d+1), everyone else zeros.
  std::string text = R"(HloModule m, replica_count=4
ENTRY e {
  p = f32[1] parameter(0)
  ROOT cp = f32[1] collective-permute(p), source_target_pairs={{2,0}}
})";
  auto r = RunOnDevices(text, 4, [](int64_t d) {
    return std::vector<Literal>{Array(ElementType::kF32, {1}, {double(d + 1)})};
  });
  ASSERT_TRUE(r.ok()) << r.status().message();
  EXPECT_EQ((*r)[0].GetF64(0), 3);
  EXPECT_EQ((*r)[1].GetF64(0), 0);
  EXPECT_EQ((*r)[2].GetF64(0), 0);
  EXPECT_EQ((*r)[3].GetF64(0), 0);
}

TEST(CollectiveTest, ReplicaIdAndPartitionId) {
  // 2 replicas x 2 partitions: device d = 2r + p.
  std::string text = R"(HloModule m, replica_count=2, num_partitions=2
ENTRY e {
  r = u32[] replica-id()
  p = u32[] partition-id()
  ROOT t = (u32[], u32[]) tuple(r, p)
})";
  auto r = RunOnDevices(text, 4, [](int64_t) { return std::vector<Literal>{}; });
  ASSERT_TRUE(r.ok()) << r.status().message();
  for (int d = 0; d < 4; ++d) {
    EXPECT_EQ((*r)[d].element(0).GetU64(0), uint64_t(d / 2)) << "device " << d;
    EXPECT_EQ((*r)[d].element(1).GetU64(0), uint64_t(d % 2)) << "device " << d;
  }
}

TEST(CollectiveTest, CollectiveBroadcastFromFirstOfGroup) {
  // Group {1,0,2,3}: everyone gets device 1's value [11].
  std::string text = R"(HloModule m, replica_count=4
ENTRY e {
  p = u32[1] parameter(0)
  ROOT b = u32[1] collective-broadcast(p), replica_groups={{1,0,2,3}}
})";
  auto r = RunOnDevices(text, 4, [](int64_t d) {
    return std::vector<Literal>{Array(ElementType::kU32, {1}, {10.0 + d})};
  });
  ASSERT_TRUE(r.ok()) << r.status().message();
  for (int d = 0; d < 4; ++d) EXPECT_EQ((*r)[d].GetU64(0), 11u) << "device " << d;
}

TEST(CollectiveTest, AsyncStartDonePairs) {
  // all-reduce-start/done: sum of d over 4 replicas = 6.
  // all-gather-start/done: [d] gathered = [0,1,2,3].
  // collective-permute-start/done with {0,1},{1,0}: devices 0 and 1 swap;
  // devices 2 and 3 receive nothing (zeros).
  std::string text = R"(HloModule m, replica_count=4
add {
  x = u32[] parameter(0)
  y = u32[] parameter(1)
  ROOT s = u32[] add(x, y)
}
ENTRY e {
  p = u32[1] parameter(0)
  ars = u32[1] all-reduce-start(p), to_apply=add
  ard = u32[1] all-reduce-done(ars)
  ags = (u32[1], u32[4]) all-gather-start(p), dimensions={0}
  agd = u32[4] all-gather-done(ags)
  cps = (u32[1], u32[1]) collective-permute-start(p), source_target_pairs={{0,1},{1,0}}
  cpd = u32[1] collective-permute-done(cps)
  ROOT t = (u32[1], u32[4], u32[1]) tuple(ard, agd, cpd)
})";
  auto r = RunOnDevices(text, 4, [](int64_t d) {
    return std::vector<Literal>{Array(ElementType::kU32, {1}, {double(d)})};
  });
  ASSERT_TRUE(r.ok()) << r.status().message();
  const double permuted[4] = {1, 0, 0, 0};
  for (int d = 0; d < 4; ++d) {
    EXPECT_EQ(Values((*r)[d].element(0)), (std::vector<double>{6})) << "device " << d;
    EXPECT_EQ(Values((*r)[d].element(1)), (std::vector<double>{0, 1, 2, 3})) << "device " << d;
    EXPECT_EQ((*r)[d].element(2).GetF64(0), permuted[d]) << "device " << d;
  }
}

TEST(CollectiveTest, RepeatedExecutionInALoopMeetsEachTime) {
  // A while loop runs an all-reduce 3 times; each iteration sums the running
  // value over 2 replicas: v = [1] on both -> 2 -> 4 -> 8.
  std::string text = std::string("HloModule m, replica_count=2\n") + kAddF32 + R"(
cond {
  s = (s32[], f32[]) parameter(0)
  i = s32[] get-tuple-element(s), index=0
  n = s32[] constant(3)
  ROOT lt = pred[] compare(i, n), direction=LT
}
body {
  s = (s32[], f32[]) parameter(0)
  i = s32[] get-tuple-element(s), index=0
  v = f32[] get-tuple-element(s), index=1
  one = s32[] constant(1)
  j = s32[] add(i, one)
  w = f32[] all-reduce(v), to_apply=add
  ROOT t = (s32[], f32[]) tuple(j, w)
}
ENTRY e {
  z = s32[] constant(0)
  v = f32[] parameter(0)
  init = (s32[], f32[]) tuple(z, v)
  loop = (s32[], f32[]) while(init), condition=cond, body=body
  ROOT out = f32[] get-tuple-element(loop), index=1
})";
  auto r = RunOnDevices(text, 2, [](int64_t) {
    return std::vector<Literal>{Literal::Scalar(ElementType::kF32, 1.0)};
  });
  ASSERT_TRUE(r.ok()) << r.status().message();
  EXPECT_EQ((*r)[0].GetF64(0), 8);
  EXPECT_EQ((*r)[1].GetF64(0), 8);
}

// ------------------------------------------------- partitioned modules ----
// 2 replicas x 2 partitions; device d = 2r + p holds [d + 1].

std::vector<Literal> DevicePlusOne(int64_t d) {
  return {Array(ElementType::kF32, {1}, {double(d + 1)})};
}

TEST(CollectivePartitionTest, NoChannelIdIsCrossReplica) {
  // Groups of replicas with the caller's partition: partition 0 = devices
  // {0,2} -> 1+3 = 4; partition 1 = devices {1,3} -> 2+4 = 6.
  std::string text = std::string("HloModule m, replica_count=2, num_partitions=2\n") + kAddF32 + R"(
ENTRY e {
  p = f32[1] parameter(0)
  ROOT ar = f32[1] all-reduce(p), replica_groups={{0,1}}, to_apply=add
})";
  auto r = RunOnDevices(text, 4, DevicePlusOne);
  ASSERT_TRUE(r.ok()) << r.status().message();
  const double expected[4] = {4, 6, 4, 6};
  for (int d = 0; d < 4; ++d) EXPECT_EQ((*r)[d].GetF64(0), expected[d]) << "device " << d;
}

TEST(CollectivePartitionTest, ChannelIdWithoutGlobalIdsIsCrossReplicaAndPartition) {
  // all-reduce with channel_id and use_global_device_ids absent: groups list
  // replica ids and include every partition of them. Group {0} = devices
  // {0,1} -> 1+2 = 3; group {1} = devices {2,3} -> 3+4 = 7.
  std::string text = std::string("HloModule m, replica_count=2, num_partitions=2\n") + kAddF32 + R"(
ENTRY e {
  p = f32[1] parameter(0)
  ROOT ar = f32[1] all-reduce(p), channel_id=1, replica_groups={{0},{1}}, to_apply=add
})";
  auto r = RunOnDevices(text, 4, DevicePlusOne);
  ASSERT_TRUE(r.ok()) << r.status().message();
  const double expected[4] = {3, 3, 7, 7};
  for (int d = 0; d < 4; ++d) EXPECT_EQ((*r)[d].GetF64(0), expected[d]) << "device " << d;
}

TEST(CollectivePartitionTest, GlobalDeviceIdsAreFlattened) {
  // Flattened groups {0,3} and {1,2}: 1+4 = 5 and 2+3 = 5; all-gather in the
  // same groups lists the members in group order.
  std::string text = std::string("HloModule m, replica_count=2, num_partitions=2\n") + kAddF32 + R"(
ENTRY e {
  p = f32[1] parameter(0)
  ar = f32[1] all-reduce(p), channel_id=1, replica_groups={{0,3},{2,1}}, use_global_device_ids=true, to_apply=add
  ag = f32[2] all-gather(p), channel_id=2, replica_groups={{0,3},{2,1}}, use_global_device_ids=true, dimensions={0}
  ROOT t = (f32[1], f32[2]) tuple(ar, ag)
})";
  auto r = RunOnDevices(text, 4, DevicePlusOne);
  ASSERT_TRUE(r.ok()) << r.status().message();
  for (int d = 0; d < 4; ++d) EXPECT_EQ((*r)[d].element(0).GetF64(0), 5) << "device " << d;
  EXPECT_EQ(Values((*r)[0].element(1)), (std::vector<double>{1, 4}));
  EXPECT_EQ(Values((*r)[1].element(1)), (std::vector<double>{3, 2}));
}

TEST(CollectivePartitionTest, ChannelIdPermuteAndAllToAllAreCrossPartition) {
  // collective-permute with channel_id: pairs are partition ids within the
  // caller's replica, so {0,1},{1,0} swaps partitions: device 0 <- 1,
  // 1 <- 0, 2 <- 3, 3 <- 2.
  // all-to-all with channel_id: groups are partitions of the caller's replica;
  // device d holds [10d, 10d+1] and receives element (its partition) of each
  // partition of its replica.
  std::string text = R"(HloModule m, replica_count=2, num_partitions=2
ENTRY e {
  p = f32[1] parameter(0)
  q = f32[2] parameter(1)
  cp = f32[1] collective-permute(p), channel_id=1, source_target_pairs={{0,1},{1,0}}
  a2a = f32[2] all-to-all(q), channel_id=2, replica_groups={{0,1}}, dimensions={0}
  ROOT t = (f32[1], f32[2]) tuple(cp, a2a)
})";
  auto r = RunOnDevices(text, 4, [](int64_t d) {
    return std::vector<Literal>{Array(ElementType::kF32, {1}, {double(d + 1)}),
                                Array(ElementType::kF32, {2}, {10.0 * d, 10.0 * d + 1})};
  });
  ASSERT_TRUE(r.ok()) << r.status().message();
  const double permuted[4] = {2, 1, 4, 3};
  // device 0 (r0,p0): [elem 0 of dev0, elem 0 of dev1] = [0, 10]
  // device 1 (r0,p1): [1, 11]; device 2 (r1,p0): [20, 30]; device 3: [21, 31]
  const std::vector<double> a2a[4] = {{0, 10}, {1, 11}, {20, 30}, {21, 31}};
  for (int d = 0; d < 4; ++d) {
    EXPECT_EQ((*r)[d].element(0).GetF64(0), permuted[d]) << "device " << d;
    EXPECT_EQ(Values((*r)[d].element(1)), a2a[d]) << "device " << d;
  }
}

TEST(CollectiveErrorTest, DeviceMissingFromGroupsIsAnError) {
  std::string text = std::string("HloModule m, replica_count=4\n") + kAddF32 + R"(
ENTRY e {
  p = f32[1] parameter(0)
  ROOT ar = f32[1] all-reduce(p), replica_groups={{0,1},{2}}, to_apply=add
})";
  auto r = RunOnDevices(text, 4, DevicePlusOne);
  EXPECT_FALSE(r.ok());
}

// send/recv pairs as XLA's collective tests write them (the corpus'
// SendRecv_Simple): replica 1 sends its [11, 11] to replica 0; replica 1
// receives nothing (zeros).
TEST(CollectiveTest, SendRecvPair) {
  std::string text = R"(HloModule m, replica_count=2
ENTRY e {
  replica = u32[] replica-id()
  ten = u32[] constant(10)
  sum = u32[] add(replica, ten)
  p = u32[2] broadcast(sum), dimensions={}
  after-all = token[] after-all()
  recv = (u32[2], u32[], token[]) recv(after-all), channel_id=0, frontend_attributes={_xla_send_recv_source_target_pairs="{{1,0}}"}
  send = (u32[2], u32[], token[]) send(p, after-all), channel_id=0, control-predecessors={recv}, frontend_attributes={_xla_send_recv_source_target_pairs="{{1,0}}"}
  recv-done = (u32[2], token[]) recv-done(recv), channel_id=0
  recv-data = u32[2] get-tuple-element(recv-done), index=0
  send-done = token[] send-done(send), channel_id=0, control-predecessors={recv}
  ROOT copy = u32[2] copy(recv-data)
})";
  auto r = RunOnDevices(text, 2, [](int64_t) { return std::vector<Literal>{}; });
  ASSERT_TRUE(r.ok()) << r.status().message();
  EXPECT_EQ(Values((*r)[0]), (std::vector<double>{11, 11}));
  EXPECT_EQ(Values((*r)[1]), (std::vector<double>{0, 0}));
}

// Two pairs in a loop of two iterations, each send matched with the recv
// of its order; the validation bounds {0,1} cover both iterations. State
// starts at [r, r] on replica r. Iteration 0: replica 0 receives replica
// 1's [1,1] (pair {1,0}), replica 1 receives replica 0's [0,0] (pair
// {0,1}); each adds 1: [2,2] and [1,1]. Iteration 1: replica 0 receives
// [1,1], replica 1 receives [2,2]: [2,2] and [3,3]. A bound that excludes
// iteration 1 ({0,0}) leaves replica 0 with zeros then: [1,1].
TEST(CollectiveTest, SendRecvInALoopWithValidation) {
  auto module_text = [](const std::string& bounds) {
    return std::string(R"(HloModule m, replica_count=2
cond {
  param = (u32[], u32[2]) parameter(0)
  count = u32[] get-tuple-element(param), index=0
  ub = u32[] constant(2)
  ROOT result = pred[] compare(count, ub), direction=LT
}
body {
  param = (u32[], u32[2]) parameter(0)
  count = u32[] get-tuple-element(param), index=0
  send-data = u32[2] get-tuple-element(param), index=1
  a0 = token[] after-all()
  recv.0 = (u32[2], u32[], token[]) recv(a0), channel_id=0, frontend_attributes={_xla_send_recv_source_target_pairs="{{1,0}}", _xla_send_recv_validation=")") + bounds + R"("}
  send.0 = (u32[2], u32[], token[]) send(send-data, a0), channel_id=0, frontend_attributes={_xla_send_recv_source_target_pairs="{{1,0}}", _xla_send_recv_validation=")" + bounds + R"("}
  recv-done.0 = (u32[2], token[]) recv-done(recv.0), channel_id=0
  data.0 = u32[2] get-tuple-element(recv-done.0), index=0
  send-done.0 = token[] send-done(send.0), channel_id=0
  a1 = token[] after-all()
  recv.1 = (u32[2], u32[], token[]) recv(a1), channel_id=0, frontend_attributes={_xla_send_recv_source_target_pairs="{{0,1}}"}
  send.1 = (u32[2], u32[], token[]) send(send-data, a1), channel_id=0, frontend_attributes={_xla_send_recv_source_target_pairs="{{0,1}}"}
  recv-done.1 = (u32[2], token[]) recv-done(recv.1), channel_id=0
  data.1 = u32[2] get-tuple-element(recv-done.1), index=0
  send-done.1 = token[] send-done(send.1), channel_id=0
  replica = u32[] replica-id()
  zero = u32[] constant(0)
  first = pred[] compare(replica, zero), direction=EQ
  firsts = pred[2] broadcast(first), dimensions={}
  data = u32[2] select(firsts, data.0, data.1)
  one = u32[] constant(1)
  next = u32[] add(count, one)
  ones = u32[2] broadcast(one), dimensions={}
  s = u32[2] add(ones, data)
  ROOT result = (u32[], u32[2]) tuple(next, s)
}
ENTRY e {
  c0 = u32[] constant(0)
  r = u32[] replica-id()
  init = u32[2] broadcast(r), dimensions={}
  start = (u32[], u32[2]) tuple(c0, init)
  loop = (u32[], u32[2]) while(start), body=body, condition=cond
  ROOT result = u32[2] get-tuple-element(loop), index=1
})";
  };
  auto r = RunOnDevices(module_text("{{0,1}}"), 2, [](int64_t) { return std::vector<Literal>{}; });
  ASSERT_TRUE(r.ok()) << r.status().message();
  EXPECT_EQ(Values((*r)[0]), (std::vector<double>{2, 2}));
  EXPECT_EQ(Values((*r)[1]), (std::vector<double>{3, 3}));
  auto first_only = RunOnDevices(module_text("{{0,0}}"), 2, [](int64_t) { return std::vector<Literal>{}; });
  ASSERT_TRUE(first_only.ok()) << first_only.status().message();
  EXPECT_EQ(Values((*first_only)[0]), (std::vector<double>{1, 1}));
  EXPECT_EQ(Values((*first_only)[1]), (std::vector<double>{3, 3}));
}

// ragged-all-to-all on 2 replicas, hand-routed. Replica 0 (input
// [1,2,3,4]) sends row 0 to itself at row 0 and rows 1..3 to replica 1 at
// its row 1; replica 1 (input [5,6,7,8]) sends rows 2..3 to replica 0 at
// its row 1 and nothing to itself. Outputs start as [-1 x4] and [-2 x4]:
// replica 0 ends [1,7,8,-1], replica 1 [-2,2,3,4].
TEST(CollectiveTest, RaggedAllToAll) {
  std::string text = R"(HloModule m, replica_count=2
ENTRY e {
  input = f32[4] parameter(0)
  output = f32[4] parameter(1)
  input_offsets = s64[2] parameter(2)
  send_sizes = s64[2] parameter(3)
  output_offsets = s64[2] parameter(4)
  recv_sizes = s64[2] parameter(5)
  ROOT r = f32[4] ragged-all-to-all(input, output, input_offsets, send_sizes, output_offsets, recv_sizes), replica_groups={{0,1}}
})";
  auto r = RunOnDevices(text, 2, [](int64_t d) {
    auto s64 = [](std::vector<double> v) { return Array(ElementType::kS64, {2}, v); };
    if (d == 0)
      return std::vector<Literal>{Array(ElementType::kF32, {4}, {1, 2, 3, 4}), Array(ElementType::kF32, {4}, {-1, -1, -1, -1}),
                                  s64({0, 1}), s64({1, 3}), s64({0, 1}), s64({1, 2})};
    return std::vector<Literal>{Array(ElementType::kF32, {4}, {5, 6, 7, 8}), Array(ElementType::kF32, {4}, {-2, -2, -2, -2}),
                                s64({2, 0}), s64({2, 0}), s64({1, 0}), s64({3, 0})};
  });
  ASSERT_TRUE(r.ok()) << r.status().message();
  EXPECT_EQ(Values((*r)[0]), (std::vector<double>{1, 7, 8, -1}));
  EXPECT_EQ(Values((*r)[1]), (std::vector<double>{-2, 2, 3, 4}));
}

}  // namespace
}  // namespace kiln::hlo
