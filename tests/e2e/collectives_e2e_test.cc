// Collectives end to end: hand-written SPMD modules compiled once and run on
// N host devices of one process (Gloo over the loopback), every device's
// result compared with the reference evaluator's simulated devices on the
// same per-device random inputs. Each collective, each replica-group form
// (explicit, iota, empty; cross-replica, cross-partition,
// cross-replica-and-partition, flattened ids), the reductions per element
// type, the async start/done pairs and replica-id / partition-id; a device
// that never runs makes its peers fail with the timeout error, in bounded
// time.
#include <gtest/gtest.h>

#include <chrono>
#include <string>
#include <vector>

#include "tests/e2e/spmd_test_util.h"

namespace kiln::testing {
namespace {

// Whether the devices under test reduce `type` with `op`: NCCL (CUDA) has
// no 16-bit or sub-byte integers, no f8 or f4 types and no bitwise and/or
// (pred's are its min/max); those are a load error there (ReductionNcclLacksIsAOneLineLoadError).
bool DevicesReduce(const std::string& type, const std::string& op) {
  if (E2EDeviceKind() != runtime::DeviceKind::kCuda) return true;
  for (const char* lacking : {"u16", "s16", "f8", "f4", "s4", "u4", "s2", "u2"})
    if (type.rfind(lacking, 0) == 0) return false;
  return type == "pred" || (op != "and" && op != "or");
}

TEST(CollectivesE2E, AllReduceSumOverEveryReplica) {
  ExpectSpmdMatchesEvaluator("HloModule m, replica_count=4\n" + Reducer("add", "f32", "add") + R"(
ENTRY e {
  p = f32[3,5] parameter(0)
  ROOT ar = f32[3,5] all-reduce(p), replica_groups={}, to_apply=add
})", 1, {1e-5, 1e-5});
}

TEST(CollectivesE2E, AllReduceInExplicitGroupsPerType) {
  for (const std::string& type : {"s8", "s32", "u16", "s64", "u64", "f64", "bf16", "f16"}) {
    for (const std::string& op : {"add", "multiply", "maximum", "minimum"}) {
      if (!DevicesReduce(type, op)) continue;
      SCOPED_TRACE(type + " " + op);
      ExpectSpmdMatchesEvaluator("HloModule m, replica_count=4\n" + Reducer("red", type, op) + "ENTRY e {\n  p = " +
                                     type + "[7] parameter(0)\n  ROOT ar = " + type +
                                     "[7] all-reduce(p), replica_groups={{0,2},{1,3}}, to_apply=red\n}",
                                 2, {1e-2, 1e-2});
    }
  }
}

// An all-reduce of T[elements] over `replicas` devices for every type and
// reducer the devices reduce, exactly against the evaluator.
void ExpectExactAllReduces(const std::vector<std::string>& types, const std::vector<std::string>& ops,
                           int replicas, int elements, uint64_t seed) {
  const std::string shape = "[" + std::to_string(elements) + "]";
  for (const std::string& type : types) {
    for (const std::string& op : ops) {
      if (!DevicesReduce(type, op)) continue;
      SCOPED_TRACE(type + " " + op);
      ExpectSpmdMatchesEvaluator("HloModule m, replica_count=" + std::to_string(replicas) + "\n" +
                                     Reducer("red", type, op) + "ENTRY e {\n  p = " + type + shape +
                                     " parameter(0)\n  ROOT ar = " + type + shape +
                                     " all-reduce(p), replica_groups={}, to_apply=red\n}",
                                 seed, {0, 0});
    }
  }
}

// Every f8 type and f4e2m1fn (a byte each), the step rounded back to the
// type as the evaluator's fold rounds it: on 2 devices the one step is the
// same whatever order the ring combines in (with more, a sum of three f8
// values may round differently in another order).
TEST(CollectivesE2E, AllReduceOfF8AndF4Types) {
  ExpectExactAllReduces({"f8e5m2", "f8e4m3", "f8e4m3fn", "f8e4m3b11fnuz", "f8e5m2fnuz", "f8e4m3fnuz", "f8e3m4",
                         "f8e8m0fnu", "f4e2m1fn"},
                        {"add", "multiply", "maximum", "minimum"}, 2, 16, 3);
}

// The sub-byte integers (one per byte, wrapping at their width) with every
// reduction on 4 devices: wrapping arithmetic is exact in any order.
TEST(CollectivesE2E, AllReduceOfSubByteIntegers) {
  ExpectExactAllReduces({"s2", "s4", "u2", "u4"}, {"add", "multiply", "maximum", "minimum", "and", "or"}, 4, 33, 4);
}

TEST(CollectivesE2E, AllReduceBitwiseAndLogical) {
  for (const std::string& type : {"pred", "u32", "s16"}) {
    for (const std::string& op : {"and", "or"}) {
      if (!DevicesReduce(type, op)) continue;
      SCOPED_TRACE(type + " " + op);
      ExpectSpmdMatchesEvaluator("HloModule m, replica_count=3\n" + Reducer("red", type, op) + "ENTRY e {\n  p = " +
                                 type + "[9] parameter(0)\n  ROOT ar = " + type +
                                 "[9] all-reduce(p), replica_groups={}, to_apply=red\n}");
    }
  }
}

// 2000003 s32 on 3 devices: uneven chunks of about 2.7 MB, each sent in
// several segments (the host's ring all-reduce moves at most 1 MiB at a
// time), and fewer elements than devices (every chunk but one empty).
TEST(CollectivesE2E, AllReduceOfLargeAndTinyMessages) {
  for (const char* n : {"2000003", "2"}) {
    SCOPED_TRACE(n);
    ExpectSpmdMatchesEvaluator("HloModule m, replica_count=3\n" + Reducer("add", "s32", "add") +
                               "ENTRY e {\n  p = s32[" + n + "] parameter(0)\n  ROOT ar = s32[" + n +
                               "] all-reduce(p), replica_groups={}, to_apply=add\n}");
  }
}

// A reduce-scatter of 12 MB along the minor dimension on 3 devices: each
// device's 4 MB result gathered from both rows, moved in several segments.
TEST(CollectivesE2E, ReduceScatterOfALargeMessage) {
  ExpectSpmdMatchesEvaluator("HloModule m, replica_count=3\n" + Reducer("add", "s32", "add") + R"(
ENTRY e {
  p = s32[2,1500000] parameter(0)
  ROOT rs = s32[2,500000] reduce-scatter(p), dimensions={1}, replica_groups={}, to_apply=add
})");
}

TEST(CollectivesE2E, AllReduceComplexAndTupleOperands) {
  ExpectSpmdMatchesEvaluator("HloModule m, replica_count=2\n" + Reducer("add", "c64", "add") + R"(
ENTRY e {
  p = c64[4] parameter(0)
  q = c64[2,2] parameter(1)
  ROOT ar = (c64[4], c64[2,2]) all-reduce(p, q), replica_groups={{0,1}}, to_apply=add
})", 3, {1e-5, 1e-5});
}

TEST(CollectivesE2E, AllGatherAlongMinorDimensionWithIotaGroups) {
  ExpectSpmdMatchesEvaluator(R"(HloModule m, replica_count=4
ENTRY e {
  p = f32[2,3] parameter(0)
  ROOT ag = f32[2,6] all-gather(p), replica_groups=[2,2]<=[4], dimensions={1}
})");
}

TEST(CollectivesE2E, AllGatherTransposedIotaGroups) {
  ExpectSpmdMatchesEvaluator(R"(HloModule m, replica_count=4
ENTRY e {
  p = s32[2,3] parameter(0)
  ROOT ag = s32[4,3] all-gather(p), replica_groups=[2,2]<=[2,2]T(1,0), dimensions={0}
})");
}

TEST(CollectivesE2E, ReduceScatterAlongEachDimension) {
  for (int dim : {0, 1}) {
    SCOPED_TRACE(dim);
    const std::string result = dim == 0 ? "f32[2,6]" : "f32[4,3]";
    ExpectSpmdMatchesEvaluator("HloModule m, replica_count=2\n" + Reducer("add", "f32", "add") +
                                   "ENTRY e {\n  p = f32[4,6] parameter(0)\n  ROOT rs = " + result +
                                   " reduce-scatter(p), replica_groups={{0,1}}, dimensions={" + std::to_string(dim) +
                                   "}, to_apply=add\n}",
                               4, {1e-5, 1e-5});
  }
}

TEST(CollectivesE2E, AllToAllSplitAndTupleForms) {
  ExpectSpmdMatchesEvaluator(R"(HloModule m, replica_count=4
ENTRY e {
  p = f32[3,8] parameter(0)
  ROOT a2a = f32[3,8] all-to-all(p), replica_groups={{0,1,2,3}}, dimensions={1}
})");
  ExpectSpmdMatchesEvaluator(R"(HloModule m, replica_count=2
ENTRY e {
  p = u8[5] parameter(0)
  q = u8[5] parameter(1)
  ROOT a2a = (u8[5], u8[5]) all-to-all(p, q), replica_groups={{1,0}}
})");
}

TEST(CollectivesE2E, CollectivePermuteWithADeviceReceivingNothing) {
  ExpectSpmdMatchesEvaluator(R"(HloModule m, replica_count=4
ENTRY e {
  p = f64[2,2] parameter(0)
  ROOT cp = f64[2,2] collective-permute(p), source_target_pairs={{0,1},{1,2},{2,3}}
})");
  // A swap, a device sending to itself and one left out.
  ExpectSpmdMatchesEvaluator(R"(HloModule m, replica_count=4
ENTRY e {
  p = s32[3] parameter(0)
  ROOT cp = s32[3] collective-permute(p), source_target_pairs={{1,0},{0,1},{2,2}}
})");
}

TEST(CollectivesE2E, CollectiveBroadcast) {
  ExpectSpmdMatchesEvaluator(R"(HloModule m, replica_count=4
ENTRY e {
  p = s64[3] parameter(0)
  ROOT b = s64[3] collective-broadcast(p), replica_groups={{1,0},{3,2}}
})");
}

TEST(CollectivesE2E, ReplicaAndPartitionIds) {
  ExpectSpmdMatchesEvaluator(R"(HloModule m, replica_count=2, num_partitions=3
ENTRY e {
  r = u32[] replica-id()
  p = u32[] partition-id()
  ten = u32[] constant(10)
  rt = u32[] multiply(r, ten)
  ROOT id = u32[] add(rt, p)
})");
}

TEST(CollectivesE2E, CrossPartitionAndFlattenedIdGroups) {
  const std::string add = Reducer("add", "f32", "add");
  // Cross-partition permute: pairs are partition ids within each replica.
  ExpectSpmdMatchesEvaluator(R"(HloModule m, replica_count=2, num_partitions=2
ENTRY e {
  p = f32[4] parameter(0)
  ROOT cp = f32[4] collective-permute(p), channel_id=1, source_target_pairs={{0,1},{1,0}}
})");
  // Cross-replica-and-partition: groups of replicas, every partition of each.
  ExpectSpmdMatchesEvaluator("HloModule m, replica_count=2, num_partitions=2\n" + add + R"(
ENTRY e {
  p = f32[4] parameter(0)
  ROOT ar = f32[4] all-reduce(p), channel_id=1, replica_groups={{0},{1}}, to_apply=add
})", 5, {1e-5, 1e-5});
  // Flattened ids: groups of global device ids.
  ExpectSpmdMatchesEvaluator("HloModule m, replica_count=2, num_partitions=2\n" + add + R"(
ENTRY e {
  p = f32[4] parameter(0)
  ROOT ar = f32[4] all-reduce(p), channel_id=1, replica_groups={{0,3},{1,2}}, use_global_device_ids=true, to_apply=add
})", 6, {1e-5, 1e-5});
  // Cross-partition all-to-all.
  ExpectSpmdMatchesEvaluator(R"(HloModule m, replica_count=1, num_partitions=4
ENTRY e {
  p = s32[8] parameter(0)
  ROOT a2a = s32[8] all-to-all(p), channel_id=2, replica_groups={{0,1},{2,3}}, dimensions={0}
})");
}

// Copies the program makes of a -done's result (EmitCollectiveDone names
// them "<done>.result"): none, since buffer assignment gives a done its
// start's result buffer, which the exchange fills in place.
int DoneResultCopies(const thunks::ThunkProgram& program) {
  int copies = 0;
  thunks::ForEachThunk(program.root, [&](const thunks::Thunk& t, int) {
    const std::string& name = t.info.profile_name;
    if (t.As<thunks::CopyThunk>() && name.size() > 7 && name.compare(name.size() - 7, 7, ".result") == 0) ++copies;
  });
  return copies;
}

TEST(CollectivesE2E, AsyncPairsWithComputeBetween) {
  auto module = hlo::ParseHloModule("HloModule m, replica_count=4\n" + Reducer("add", "f32", "add") + R"(
ENTRY e {
  p = f32[16] parameter(0)
  q = f32[16] parameter(1)
  ars = f32[16] all-reduce-start(p), replica_groups={}, to_apply=add
  ags = (f32[16], f32[64]) all-gather-start(q), replica_groups={}, dimensions={0}
  cps = (f32[16], f32[16], u32[], u32[]) collective-permute-start(q), source_target_pairs={{0,3},{3,0},{1,2},{2,1}}
  e = f32[16] exponential(q)
  m = f32[16] multiply(e, p)
  ard = f32[16] all-reduce-done(ars)
  agd = f32[64] all-gather-done(ags)
  cpd = f32[16] collective-permute-done(cps)
  s = f32[16] add(ard, m)
  ROOT t = (f32[16], f32[64], f32[16]) tuple(s, agd, cpd)
})");
  ASSERT_TRUE(module.ok()) << module.status().message();
  StatusOr<bef::Artifact> artifact = compiler::CompileModule(**module, SpmdCompileOptions());
  ASSERT_TRUE(artifact.ok()) << artifact.status().message();
  EXPECT_EQ(DoneResultCopies(artifact->program), 0);
  EXPECT_EQ(CompareSpmdWithEvaluator(**module, 7, {1e-4, 1e-4}), "");
}

// The done right after its start in the text; the schedule puts the dot
// chain, which does not need the all-reduce, between them (latency hiding,
// compiler/pipeline/latency_hiding.h), and the results stay the
// evaluator's.
std::string OverlapModule() {
  return "HloModule m, replica_count=2\n" + Reducer("add", "f32", "add") + R"(
ENTRY e {
  p = f32[256] parameter(0)
  a = f32[32,32] parameter(1)
  b = f32[32,32] parameter(2)
  ars = f32[256] all-reduce-start(p), replica_groups={}, to_apply=add
  ard = f32[256] all-reduce-done(ars)
  x = f32[256] negate(ard)
  d = f32[32,32] dot(a, b), lhs_contracting_dims={1}, rhs_contracting_dims={0}
  t = f32[32,32] tanh(d)
  ROOT r = (f32[256], f32[32,32]) tuple(x, t)
})";
}

TEST(CollectivesE2E, ComputeRunsBetweenAnAsyncStartAndItsDone) {
  auto module = hlo::ParseHloModule(OverlapModule());
  ASSERT_TRUE(module.ok()) << module.status().message();
  StatusOr<bef::Artifact> artifact = compiler::CompileModule(**module, SpmdCompileOptions());
  ASSERT_TRUE(artifact.ok()) << artifact.status().message();
  // The top-level thunks, in order, as the HLO instructions they run.
  std::vector<std::string> order;
  int64_t start = -1, done = -1;
  for (const thunks::Thunk& t : artifact->program.root.thunks) {
    const thunks::CollectiveConfig* config = thunks::CollectiveConfigOf(t);
    if (config && config->async_id) start = static_cast<int64_t>(order.size());
    if (t.As<thunks::CollectiveDoneThunk>()) done = static_cast<int64_t>(order.size());
    std::string names;
    for (const thunks::HloInstructionRef& h : t.info.hlo) names += h.name + " ";
    order.push_back(names);
  }
  ASSERT_GE(start, 0);
  ASSERT_GT(done, start);
  // The dot and tanh (fused or not, maybe renamed with a suffix) run there.
  std::string between;
  for (int64_t i = start + 1; i < done; ++i) between += " " + order[i];
  EXPECT_TRUE(between.find(" t ") != std::string::npos || between.find(" t.") != std::string::npos ||
              between.find(" d ") != std::string::npos || between.find(" d.") != std::string::npos)
      << "between the start and the done:" << between;
  EXPECT_EQ(CompareSpmdWithEvaluator(**module, 3, {1e-4, 1e-4}), "");
}

// XLA's async form of a reduce-scatter (no -start op of its own): a real
// async pair, the reduce-scatter thunk started at the async-start and
// awaited at the async-done, not a synchronous call.
TEST(CollectivesE2E, WrappedAsyncCollectiveIsAnAsyncPair) {
  auto module = hlo::ParseHloModule("HloModule m, replica_count=4\n" + Reducer("add", "f32", "add") + R"(
rs {
  x = f32[8,2] parameter(0)
  ROOT r = f32[2,2] reduce-scatter(x), replica_groups={}, dimensions={0}, to_apply=add
}
ENTRY e {
  p = f32[8,2] parameter(0)
  q = f32[16] parameter(1)
  s = ((f32[8,2]), f32[2,2]) async-start(p), calls=rs
  d = f32[2,2] async-done(s)
  e = f32[16] exponential(q)
  ROOT t = (f32[2,2], f32[16]) tuple(d, e)
})");
  ASSERT_TRUE(module.ok()) << module.status().message();
  StatusOr<bef::Artifact> artifact = compiler::CompileModule(**module, SpmdCompileOptions());
  ASSERT_TRUE(artifact.ok()) << artifact.status().message();
  int started = 0, done = 0;
  thunks::ForEachThunk(artifact->program.root, [&](const thunks::Thunk& t, int) {
    if (const auto* rs = t.As<thunks::ReduceScatterThunk>(); rs && rs->config.async_id) ++started;
    if (t.As<thunks::CollectiveDoneThunk>()) ++done;
  });
  EXPECT_EQ(started, 1);
  EXPECT_EQ(done, 1);
  EXPECT_EQ(DoneResultCopies(artifact->program), 0);
  EXPECT_EQ(CompareSpmdWithEvaluator(**module, 5, {1e-4, 1e-4}), "");
}

// send/recv pairs (XLA's lowered collective-permute) on 4 replicas: 0 -> 1
// -> 2 -> 3, replica 0 receiving nothing; compute between them.
TEST(CollectivesE2E, SendRecvPairs) {
  ExpectSpmdMatchesEvaluator(R"(HloModule m, replica_count=4
ENTRY e {
  p = f32[8] parameter(0)
  q = f32[8] parameter(1)
  t0 = token[] after-all()
  recv = (f32[8], u32[], token[]) recv(t0), channel_id=0, frontend_attributes={_xla_send_recv_source_target_pairs="{{0,1},{1,2},{2,3}}"}
  send = (f32[8], u32[], token[]) send(p, t0), channel_id=0, control-predecessors={recv}, frontend_attributes={_xla_send_recv_source_target_pairs="{{0,1},{1,2},{2,3}}"}
  recv-done = (f32[8], token[]) recv-done(recv), channel_id=0
  data = f32[8] get-tuple-element(recv-done), index=0
  send-done = token[] send-done(send), channel_id=0
  e = f32[8] exponential(q)
  ROOT s = f32[8] add(data, e)
})", 11, {1e-5, 1e-5});
}

TEST(CollectivesE2E, SendRecvValidationThatSkipsIsAOneLineCompileError) {
  auto module = hlo::ParseHloModule(R"(HloModule m, replica_count=2
ENTRY e {
  p = f32[8] parameter(0)
  t0 = token[] after-all()
  recv = (f32[8], u32[], token[]) recv(t0), channel_id=0, frontend_attributes={_xla_send_recv_source_target_pairs="{{0,1}}", _xla_send_recv_validation="{{1,1}}"}
  send = (f32[8], u32[], token[]) send(p, t0), channel_id=0, frontend_attributes={_xla_send_recv_source_target_pairs="{{0,1}}", _xla_send_recv_validation="{{1,1}}"}
  recv-done = (f32[8], token[]) recv-done(recv), channel_id=0
  send-done = token[] send-done(send), channel_id=0
  ROOT data = f32[8] get-tuple-element(recv-done), index=0
})");
  ASSERT_TRUE(module.ok()) << module.status().message();
  StatusOr<bef::Artifact> artifact = compiler::CompileModule(**module, SpmdCompileOptions());
  ASSERT_FALSE(artifact.ok());
  EXPECT_NE(artifact.status().message().find("_xla_send_recv_validation"), std::string::npos)
      << artifact.status().message();
  EXPECT_EQ(artifact.status().message().find('\n'), std::string::npos);
}

// ragged-all-to-all of rows of 3 on 4 replicas with an uneven routing
// (SetRaggedRouting), decomposed into dense all-to-alls and a scatter; the
// rows nobody writes keep the output operand's values.
TEST(CollectivesE2E, RaggedAllToAll) {
  auto module = hlo::ParseHloModule(R"(HloModule m, replica_count=4
ENTRY e {
  input = f32[12,3] parameter(0)
  output = f32[12,3] parameter(1)
  input_offsets = s32[4] parameter(2)
  send_sizes = s32[4] parameter(3)
  output_offsets = s32[4] parameter(4)
  recv_sizes = s32[4] parameter(5)
  ROOT r = f32[12,3] ragged-all-to-all(input, output, input_offsets, send_sizes, output_offsets, recv_sizes), replica_groups={{0,1,2,3}}
})");
  ASSERT_TRUE(module.ok()) << module.status().message();
  StatusOr<bef::Artifact> artifact = compiler::CompileModule(**module, SpmdCompileOptions());
  ASSERT_TRUE(artifact.ok()) << artifact.status().message();
  std::vector<std::vector<Literal>> args = DeviceArgs(**module, 4, 13);
  ASSERT_TRUE(SetRaggedRouting(**module, args));
  StatusOr<std::vector<Literal>> expected = EvaluateOnGrid(**module, *artifact, args);
  ASSERT_TRUE(expected.ok()) << expected.status().message();
  std::vector<StatusOr<Literal>> actual = RunOnHostDevices(*artifact, (*module)->entry()->root()->shape(), args);
  for (int64_t d = 0; d < 4; ++d) {
    ASSERT_TRUE(actual[d].ok()) << actual[d].status().message();
    Status s = CompareValues(*actual[d], (*expected)[d], "device " + std::to_string(d), {0, 0});
    EXPECT_TRUE(s.ok()) << s.message();
  }
}

TEST(CollectivesE2E, CollectiveInsideAWhileLoop) {
  ExpectSpmdMatchesEvaluator(AllReduceLoopModule(2, "s32", 4, 3));
}

// The module `text` and its artifact (the test fails if either is missing).
struct Compiled {
  std::unique_ptr<hlo::HloModule> module;
  StatusOr<bef::Artifact> artifact = Status::Error("not compiled");
};
Compiled Compile(const std::string& text) {
  Compiled c;
  auto module = hlo::ParseHloModule(text);
  EXPECT_TRUE(module.ok()) << module.status().message();
  if (!module.ok()) return c;
  c.module = std::move(*module);
  c.artifact = compiler::CompileModule(*c.module, SpmdCompileOptions());
  return c;
}

TEST(CollectivesE2E, UnsupportedReducerIsAOneLineCompileError) {
  Compiled c = Compile("HloModule m, replica_count=2\n" + Reducer("sub", "f32", "subtract") + R"(
ENTRY e {
  p = f32[4] parameter(0)
  ROOT ar = f32[4] all-reduce(p), replica_groups={}, to_apply=sub
})");
  const StatusOr<bef::Artifact>& artifact = c.artifact;
  ASSERT_FALSE(artifact.ok());
  EXPECT_NE(artifact.status().message().find("plain sum, product, min, max, and or or"), std::string::npos)
      << artifact.status().message();
  EXPECT_EQ(artifact.status().message().find('\n'), std::string::npos);
}

TEST(CollectivesE2E, APeerThatNeverRunsIsATimeoutNamingIt) {
  Compiled c = Compile(AllReduceModule(3));
  ASSERT_TRUE(c.artifact.ok()) << c.artifact.status().message();
  SpmdRunOptions options;
  options.timeout_seconds = 2;
  options.absent_device = 2;
  const auto start = std::chrono::steady_clock::now();
  std::vector<StatusOr<Literal>> results =
      RunOnHostDevices(*c.artifact, c.module->entry()->root()->shape(), DeviceArgs(*c.module, 3, 1), options);
  const double seconds = std::chrono::duration<double>(std::chrono::steady_clock::now() - start).count();
  EXPECT_LT(seconds, 20) << "the timeout must bound the wait";
  for (int d : {0, 1}) {
    ASSERT_FALSE(results[d].ok()) << "device " << d;
    const std::string message = results[d].status().message();
    EXPECT_NE(message.find("all-reduce"), std::string::npos) << message;
    EXPECT_NE(message.find("devices 2 did not arrive within 2 s"), std::string::npos) << message;
    EXPECT_EQ(message.find('\n'), std::string::npos) << message;
  }
}

TEST(CollectivesE2E, ProgramNeedingPeersFailsToLoadAlone) {
  Compiled c = Compile(AllReduceModule(2));
  ASSERT_TRUE(c.artifact.ok()) << c.artifact.status().message();
  auto device = runtime::Device::Create(E2EDeviceKind());
  ASSERT_TRUE(device.ok());
  auto exe = runtime::LoadedExecutable::Load(**device, *c.artifact);
  ASSERT_FALSE(exe.ok());
  EXPECT_NE(exe.status().message().find("--num_devices=2"), std::string::npos) << exe.status().message();
}

TEST(CollectivesE2E, ReductionNcclLacksIsAOneLineLoadError) {
  if (E2EDeviceKind() != runtime::DeviceKind::kCuda) GTEST_SKIP() << "NCCL's reductions: CUDA devices only";
  for (const std::string& type : {"u16", "s32", "f8e4m3fn"}) {
    const std::string op = type == "s32" ? "and" : "add";
    Compiled c = Compile("HloModule m, replica_count=2\n" + Reducer("red", type, op) + "ENTRY e {\n  p = " + type +
                         "[4] parameter(0)\n  ROOT ar = " + type + "[4] all-reduce(p), replica_groups={}, to_apply=red\n}");
    ASSERT_TRUE(c.artifact.ok()) << c.artifact.status().message();
    auto device = runtime::Device::CreateCuda(0);
    ASSERT_TRUE(device.ok()) << device.status().message();
    auto rendezvous = runtime::CollectiveRendezvous::InProcess(2, std::chrono::seconds(5));
    auto exe = runtime::LoadedExecutable::Load(**device, *c.artifact, {0, rendezvous});
    ASSERT_FALSE(exe.ok()) << type;
    const std::string message = exe.status().message();
    const std::string kind = type == "s32" ? "and" : "sum";
    EXPECT_NE(message.find("NCCL has no " + kind + " reduction of " + type), std::string::npos) << message;
    EXPECT_EQ(message.find('\n'), std::string::npos) << message;
  }
}

}  // namespace
}  // namespace kiln::testing
