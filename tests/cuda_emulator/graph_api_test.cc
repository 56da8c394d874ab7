// The emulator's stream capture and CUDA graph entry points, through
// dlopen and cuda.h's function types (the ABI names the runtime resolves:
// cuStreamBeginCapture_v2, cuGraphInstantiateWithFlags, cuGraphExecUpdate_v2,
// cuStreamGetCaptureInfo_v3): work on a capturing stream (kernel launches,
// memsets, copies, a cuBLAS call, event record nodes) is recorded, not run;
// a graph launch runs it, with memcheck; an exec takes a re-captured
// graph's parameters through cuGraphExecUpdate; calls the driver forbids
// during capture fail and invalidate it; kilnEmuApiCalls counts the calls.
// Several streams: cuStreamWaitEvent orders them in modeled time (two
// streams' kernels overlap), and a capture forks into a second stream
// through an event and must join back (CUDA_ERROR_STREAM_CAPTURE_UNJOINED
// otherwise), giving a graph with parallel branches (cuGraphGetEdges).
// Conditional nodes: a WHILE node whose body a kernel ends through
// cudaGraphSetConditional runs it as often as the device says, from its
// default value again at each launch; a body takes no event-record node;
// SWITCH needs driver 12.8 (KILN_EMU_DRIVER_VERSION plays 12.4).
// Expected values are hand-computed.
#include <cublas_api.h>
#include <cuda.h>
#include <dlfcn.h>
#include <gtest/gtest.h>

#include <algorithm>
#include <cstring>
#include <set>
#include <utility>
#include <string>
#include <thread>
#include <vector>

#include "cuda_emulator/include/kiln_cuda_emulator.h"

namespace {

// clang-format off
#define KILN_TEST_FUNCTIONS(X) \
  X(cuInit) X(cuDevicePrimaryCtxRetain) X(cuDevicePrimaryCtxRelease) X(cuCtxSetCurrent) \
  X(cuStreamCreate) X(cuStreamDestroy) X(cuStreamSynchronize) X(cuStreamQuery) X(cuEventCreate) \
  X(cuEventDestroy) X(cuEventRecord) X(cuEventRecordWithFlags) X(cuEventElapsedTime) X(cuMemAlloc) \
  X(cuMemFree) X(cuMemcpyHtoD) X(cuMemcpyDtoH) X(cuMemcpyHtoDAsync) X(cuMemsetD32Async) \
  X(cuModuleLoadData) X(cuModuleGetFunction) X(cuLaunchKernel) X(cuStreamBeginCapture) \
  X(cuStreamEndCapture) X(cuStreamIsCapturing) X(cuStreamGetCaptureInfo) X(cuGraphInstantiateWithFlags) \
  X(cuGraphLaunch) X(cuGraphExecUpdate) X(cuGraphGetNodes) X(cuGraphDestroy) X(cuGraphExecDestroy) \
  X(cuStreamWaitEvent) X(cuGraphGetEdges) X(cuGraphConditionalHandleCreate) X(cuGraphAddNode) \
  X(cuStreamUpdateCaptureDependencies) X(cuStreamBeginCaptureToGraph) \
  X(cublasCreate_v2) X(cublasDestroy_v2) X(cublasSetStream_v2) X(cublasSscal_v2) \
  X(kilnEmuLastErrorDetail) X(kilnEmuApiCalls) X(kilnEmuEventCounters) X(kilnEmuLiveObjects)
// clang-format on

#define KILN_TEST_STRINGIZE_INNER(x) #x
#define KILN_TEST_STRINGIZE(x) KILN_TEST_STRINGIZE_INNER(x)

struct Api {
  void* handle = nullptr;
  std::string missing;
#define KILN_TEST_MEMBER(fn) decltype(&::fn) fn = nullptr;
  KILN_TEST_FUNCTIONS(KILN_TEST_MEMBER)
#undef KILN_TEST_MEMBER
};

const Api& Emu() {
  static const Api api = [] {
    Api a;
    a.handle = dlopen(KILN_CUDA_EMULATOR_PATH, RTLD_NOW | RTLD_LOCAL);
    if (!a.handle) return a;
#define KILN_TEST_RESOLVE(fn)                                                            \
  a.fn = reinterpret_cast<decltype(a.fn)>(dlsym(a.handle, KILN_TEST_STRINGIZE(fn))); \
  if (!a.fn && a.missing.empty()) a.missing = KILN_TEST_STRINGIZE(fn);
    KILN_TEST_FUNCTIONS(KILN_TEST_RESOLVE)
#undef KILN_TEST_RESOLVE
    return a;
  }();
  return api;
}

std::string Detail() { return Emu().kilnEmuLastErrorDetail(); }

// out[i] = in[i] + 1 for the 256 threads of one block.
constexpr char kAddOnePtx[] = R"(.version 8.0
.target sm_90
.address_size 64
.visible .entry add_one(.param .u64 p_in, .param .u64 p_out)
{
  .reg .b32 %r<1>;
  .reg .b64 %rd<5>;
  .reg .f32 %f<2>;
  ld.param.u64 %rd0, [p_in];
  ld.param.u64 %rd1, [p_out];
  mov.u32 %r0, %tid.x;
  mul.wide.u32 %rd2, %r0, 4;
  add.s64 %rd3, %rd0, %rd2;
  add.s64 %rd4, %rd1, %rd2;
  ld.global.f32 %f0, [%rd3];
  add.f32 %f1, %f0, 0f3F800000;
  st.global.f32 [%rd4], %f1;
  ret;
}
)";

constexpr int kN = 256;

class GraphApiTest : public ::testing::Test {
 protected:
  void SetUp() override {
    const Api& e = Emu();
    ASSERT_NE(e.handle, nullptr) << dlerror();
    ASSERT_TRUE(e.missing.empty()) << "the emulator lacks " << e.missing;
    ASSERT_EQ(e.cuInit(0), CUDA_SUCCESS) << Detail();
    ASSERT_EQ(e.cuDevicePrimaryCtxRetain(&context_, 0), CUDA_SUCCESS);
    ASSERT_EQ(e.cuCtxSetCurrent(context_), CUDA_SUCCESS);
    ASSERT_EQ(e.cuStreamCreate(&stream_, CU_STREAM_NON_BLOCKING), CUDA_SUCCESS);
    CUmodule m = nullptr;
    ASSERT_EQ(e.cuModuleLoadData(&m, kAddOnePtx), CUDA_SUCCESS) << Detail();
    ASSERT_EQ(e.cuModuleGetFunction(&add_one_, m, "add_one"), CUDA_SUCCESS) << Detail();
  }
  void TearDown() override { EXPECT_EQ(Emu().cuDevicePrimaryCtxRelease(0), CUDA_SUCCESS); }

  CUdeviceptr Alloc() {
    CUdeviceptr p = 0;
    EXPECT_EQ(Emu().cuMemAlloc(&p, kN * 4), CUDA_SUCCESS) << Detail();
    return p;
  }
  CUresult AddOne(CUdeviceptr in, CUdeviceptr out) { return AddOneOn(stream_, in, out); }
  CUresult AddOneOn(CUstream stream, CUdeviceptr in, CUdeviceptr out) {
    void* params[] = {&in, &out};
    return Emu().cuLaunchKernel(add_one_, 1, 1, 1, kN, 1, 1, 0, stream, params, nullptr);
  }
  CUstreamCaptureStatus StatusOf(CUstream stream) {
    CUstreamCaptureStatus s = CU_STREAM_CAPTURE_STATUS_NONE;
    EXPECT_EQ(Emu().cuStreamIsCapturing(stream, &s), CUDA_SUCCESS);
    return s;
  }
  CUevent Event() {
    CUevent ev = nullptr;
    EXPECT_EQ(Emu().cuEventCreate(&ev, CU_EVENT_DEFAULT), CUDA_SUCCESS);
    return ev;
  }
  float Ms(CUevent from, CUevent to) {
    float ms = -1;
    EXPECT_EQ(Emu().cuEventElapsedTime(&ms, from, to), CUDA_SUCCESS) << Detail();
    return ms;
  }
  std::vector<float> Read(CUdeviceptr p) {
    std::vector<float> v(kN, -1.0f);
    EXPECT_EQ(Emu().cuMemcpyDtoH(v.data(), p, kN * 4), CUDA_SUCCESS) << Detail();
    return v;
  }
  void Fill(CUdeviceptr p, float value) {
    std::vector<float> v(kN, value);
    ASSERT_EQ(Emu().cuMemcpyHtoD(p, v.data(), kN * 4), CUDA_SUCCESS) << Detail();
  }
  CUstreamCaptureStatus Status() {
    CUstreamCaptureStatus s = CU_STREAM_CAPTURE_STATUS_NONE;
    EXPECT_EQ(Emu().cuStreamIsCapturing(stream_, &s), CUDA_SUCCESS);
    return s;
  }
  KilnEmuApiCalls Calls() {
    KilnEmuApiCalls c{};
    EXPECT_EQ(Emu().kilnEmuApiCalls(&c), CUDA_SUCCESS);
    return c;
  }

  CUcontext context_ = nullptr;
  CUstream stream_ = nullptr;
  CUfunction add_one_ = nullptr;
};

uint32_t Bits(float f) {
  uint32_t b;
  std::memcpy(&b, &f, 4);
  return b;
}

TEST_F(GraphApiTest, CapturedWorkRunsOnlyWhenTheGraphIsLaunched) {
  const Api& e = Emu();
  CUdeviceptr a = Alloc(), b = Alloc();
  Fill(a, 0.0f);
  Fill(b, 0.0f);
  cublasHandle_t blas = nullptr;
  ASSERT_EQ(e.cublasCreate_v2(&blas), CUBLAS_STATUS_SUCCESS);
  ASSERT_EQ(e.cublasSetStream_v2(blas, stream_), CUBLAS_STATUS_SUCCESS);

  KilnEmuApiCalls before = Calls();
  ASSERT_EQ(e.cuStreamBeginCapture(stream_, CU_STREAM_CAPTURE_MODE_THREAD_LOCAL), CUDA_SUCCESS) << Detail();
  EXPECT_EQ(Status(), CU_STREAM_CAPTURE_STATUS_ACTIVE);
  CUstreamCaptureStatus info = CU_STREAM_CAPTURE_STATUS_NONE;
  cuuint64_t id = 0;
  ASSERT_EQ(e.cuStreamGetCaptureInfo(stream_, &info, &id, nullptr, nullptr, nullptr, nullptr), CUDA_SUCCESS);
  EXPECT_EQ(info, CU_STREAM_CAPTURE_STATUS_ACTIVE);
  EXPECT_NE(id, 0u);
  // a = 2; b = a + 1 = 3; b *= 4 (cuBLAS) = 12; a = b + 1 = 13.
  ASSERT_EQ(e.cuMemsetD32Async(a, Bits(2.0f), kN, stream_), CUDA_SUCCESS) << Detail();
  ASSERT_EQ(AddOne(a, b), CUDA_SUCCESS) << Detail();
  const float four = 4.0f;
  ASSERT_EQ(e.cublasSscal_v2(blas, kN, &four, reinterpret_cast<float*>(b), 1), CUBLAS_STATUS_SUCCESS) << Detail();
  ASSERT_EQ(AddOne(b, a), CUDA_SUCCESS) << Detail();
  CUgraph graph = nullptr;
  ASSERT_EQ(e.cuStreamEndCapture(stream_, &graph), CUDA_SUCCESS) << Detail();
  EXPECT_EQ(Status(), CU_STREAM_CAPTURE_STATUS_NONE);
  size_t nodes = 0;
  ASSERT_EQ(e.cuGraphGetNodes(graph, nullptr, &nodes), CUDA_SUCCESS);
  EXPECT_EQ(nodes, 4u);
  // Nothing ran yet.
  EXPECT_EQ(Read(a)[0], 0.0f);
  EXPECT_EQ(Read(b)[kN - 1], 0.0f);
  KilnEmuApiCalls captured = Calls();
  EXPECT_EQ(captured.captured - before.captured, 4u);
  EXPECT_EQ(captured.kernel_launches - before.kernel_launches, 2u);
  EXPECT_EQ(captured.library_calls - before.library_calls, 1u);

  CUgraphExec exec = nullptr;
  ASSERT_EQ(e.cuGraphInstantiateWithFlags(&exec, graph, 0), CUDA_SUCCESS) << Detail();
  for (int launch = 0; launch < 2; ++launch) {
    ASSERT_EQ(e.cuGraphLaunch(exec, stream_), CUDA_SUCCESS) << Detail();
    ASSERT_EQ(e.cuStreamSynchronize(stream_), CUDA_SUCCESS);
    std::vector<float> av = Read(a), bv = Read(b);
    EXPECT_EQ(av[0], 13.0f);
    EXPECT_EQ(av[kN - 1], 13.0f);
    EXPECT_EQ(bv[7], 12.0f);
  }
  KilnEmuApiCalls after = Calls();
  EXPECT_EQ(after.graph_launches - captured.graph_launches, 2u);
  EXPECT_EQ(after.graph_nodes_run - captured.graph_nodes_run, 8u);
  EXPECT_EQ(after.graph_instantiations - captured.graph_instantiations, 1u);
  EXPECT_EQ(after.kernel_launches, captured.kernel_launches);  // replays are not API launches

  KilnEmuLiveObjects live{};
  ASSERT_EQ(e.kilnEmuLiveObjects(&live), CUDA_SUCCESS);
  EXPECT_EQ(live.graphs, 1u);
  EXPECT_EQ(live.graph_execs, 1u);
  EXPECT_EQ(e.cuGraphExecDestroy(exec), CUDA_SUCCESS);
  EXPECT_EQ(e.cuGraphDestroy(graph), CUDA_SUCCESS);
  ASSERT_EQ(e.kilnEmuLiveObjects(&live), CUDA_SUCCESS);
  EXPECT_EQ(live.graphs, 0u);
  EXPECT_EQ(live.graph_execs, 0u);
  EXPECT_EQ(e.cublasDestroy_v2(blas), CUBLAS_STATUS_SUCCESS);
}

TEST_F(GraphApiTest, ExecUpdateTakesTheNewAddressesAndRejectsANewTopology) {
  const Api& e = Emu();
  CUdeviceptr a = Alloc(), b = Alloc(), c = Alloc(), d = Alloc();
  Fill(a, 1.0f);
  Fill(b, 0.0f);
  Fill(c, 10.0f);
  Fill(d, 0.0f);
  auto capture = [&](CUdeviceptr in, CUdeviceptr out, int launches) {
    CUgraph g = nullptr;
    EXPECT_EQ(e.cuStreamBeginCapture(stream_, CU_STREAM_CAPTURE_MODE_RELAXED), CUDA_SUCCESS) << Detail();
    for (int i = 0; i < launches; ++i) EXPECT_EQ(AddOne(in, out), CUDA_SUCCESS) << Detail();
    EXPECT_EQ(e.cuStreamEndCapture(stream_, &g), CUDA_SUCCESS) << Detail();
    return g;
  };
  CUgraph first = capture(a, b, 1);
  CUgraphExec exec = nullptr;
  ASSERT_EQ(e.cuGraphInstantiateWithFlags(&exec, first, 0), CUDA_SUCCESS);
  ASSERT_EQ(e.cuGraphLaunch(exec, stream_), CUDA_SUCCESS) << Detail();
  EXPECT_EQ(Read(b)[3], 2.0f);

  CUgraph second = capture(c, d, 1);
  CUgraphExecUpdateResultInfo result{};
  ASSERT_EQ(e.cuGraphExecUpdate(exec, second, &result), CUDA_SUCCESS) << Detail();
  EXPECT_EQ(result.result, CU_GRAPH_EXEC_UPDATE_SUCCESS);
  ASSERT_EQ(e.cuGraphLaunch(exec, stream_), CUDA_SUCCESS) << Detail();
  EXPECT_EQ(Read(d)[3], 11.0f);

  CUgraph third = capture(a, b, 2);
  EXPECT_EQ(e.cuGraphExecUpdate(exec, third, &result), CUDA_ERROR_GRAPH_EXEC_UPDATE_FAILURE);
  EXPECT_EQ(result.result, CU_GRAPH_EXEC_UPDATE_ERROR_TOPOLOGY_CHANGED);
  EXPECT_NE(Detail().find("2 nodes"), std::string::npos) << Detail();
  for (CUgraph g : {first, second, third}) EXPECT_EQ(e.cuGraphDestroy(g), CUDA_SUCCESS);
  EXPECT_EQ(e.cuGraphExecDestroy(exec), CUDA_SUCCESS);
}

TEST_F(GraphApiTest, SynchronizingACapturingStreamInvalidatesTheCapture) {
  const Api& e = Emu();
  CUdeviceptr a = Alloc();
  ASSERT_EQ(e.cuStreamBeginCapture(stream_, CU_STREAM_CAPTURE_MODE_THREAD_LOCAL), CUDA_SUCCESS);
  ASSERT_EQ(AddOne(a, a), CUDA_SUCCESS);
  EXPECT_EQ(e.cuStreamSynchronize(stream_), CUDA_ERROR_STREAM_CAPTURE_UNSUPPORTED);
  EXPECT_EQ(Status(), CU_STREAM_CAPTURE_STATUS_INVALIDATED);
  EXPECT_EQ(AddOne(a, a), CUDA_ERROR_STREAM_CAPTURE_INVALIDATED);
  CUgraph graph = reinterpret_cast<CUgraph>(1);
  EXPECT_EQ(e.cuStreamEndCapture(stream_, &graph), CUDA_ERROR_STREAM_CAPTURE_INVALIDATED);
  EXPECT_EQ(graph, nullptr);
  EXPECT_NE(Detail().find("cuStreamSynchronize on a capturing stream"), std::string::npos) << Detail();
  EXPECT_EQ(Status(), CU_STREAM_CAPTURE_STATUS_NONE);
  EXPECT_EQ(e.cuStreamSynchronize(stream_), CUDA_SUCCESS);
  // The legacy default stream cannot be captured at all.
  EXPECT_EQ(e.cuStreamBeginCapture(nullptr, CU_STREAM_CAPTURE_MODE_RELAXED), CUDA_ERROR_STREAM_CAPTURE_UNSUPPORTED);
}

TEST_F(GraphApiTest, AllocationIsUnsafeInGlobalAndThisThreadsThreadLocalCapture) {
  const Api& e = Emu();
  CUdeviceptr p = 0;
  CUgraph graph = nullptr;
  // Global mode: prohibited on every thread; this thread's capture is invalidated.
  ASSERT_EQ(e.cuStreamBeginCapture(stream_, CU_STREAM_CAPTURE_MODE_GLOBAL), CUDA_SUCCESS);
  CUresult other = CUDA_SUCCESS;
  std::thread([&] {
    e.cuCtxSetCurrent(context_);
    CUdeviceptr q = 0;
    other = e.cuMemAlloc(&q, 64);
  }).join();
  EXPECT_EQ(other, CUDA_ERROR_STREAM_CAPTURE_UNSUPPORTED);
  EXPECT_EQ(e.cuMemAlloc(&p, 64), CUDA_ERROR_STREAM_CAPTURE_UNSUPPORTED);
  EXPECT_EQ(e.cuStreamEndCapture(stream_, &graph), CUDA_ERROR_STREAM_CAPTURE_INVALIDATED);

  // Thread-local mode: other threads allocate freely, this one may not.
  ASSERT_EQ(e.cuStreamBeginCapture(stream_, CU_STREAM_CAPTURE_MODE_THREAD_LOCAL), CUDA_SUCCESS);
  std::thread([&] {
    e.cuCtxSetCurrent(context_);
    CUdeviceptr q = 0;
    other = e.cuMemAlloc(&q, 64);
    if (other == CUDA_SUCCESS) other = e.cuMemFree(q);
  }).join();
  EXPECT_EQ(other, CUDA_SUCCESS) << Detail();
  EXPECT_EQ(e.cuMemAlloc(&p, 64), CUDA_ERROR_STREAM_CAPTURE_UNSUPPORTED);
  EXPECT_EQ(e.cuStreamEndCapture(stream_, &graph), CUDA_ERROR_STREAM_CAPTURE_INVALIDATED);

  // Relaxed mode: allowed, and the capture stays valid.
  ASSERT_EQ(e.cuStreamBeginCapture(stream_, CU_STREAM_CAPTURE_MODE_RELAXED), CUDA_SUCCESS);
  EXPECT_EQ(e.cuMemAlloc(&p, 64), CUDA_SUCCESS) << Detail();
  EXPECT_EQ(e.cuStreamEndCapture(stream_, &graph), CUDA_SUCCESS) << Detail();
  EXPECT_EQ(e.cuGraphDestroy(graph), CUDA_SUCCESS);
  EXPECT_EQ(e.cuMemFree(p), CUDA_SUCCESS);
}

TEST_F(GraphApiTest, ExternalEventRecordsAreNodesThatTimeTheReplay) {
  const Api& e = Emu();
  CUdeviceptr a = Alloc();
  Fill(a, 0.0f);
  CUevent begin = nullptr, end = nullptr, internal = nullptr;
  for (CUevent* ev : {&begin, &end, &internal}) ASSERT_EQ(e.cuEventCreate(ev, CU_EVENT_DEFAULT), CUDA_SUCCESS);
  EXPECT_EQ(e.cuEventRecordWithFlags(begin, stream_, CU_EVENT_RECORD_EXTERNAL), CUDA_ERROR_INVALID_VALUE);
  ASSERT_EQ(e.cuStreamBeginCapture(stream_, CU_STREAM_CAPTURE_MODE_THREAD_LOCAL), CUDA_SUCCESS);
  ASSERT_EQ(e.cuEventRecordWithFlags(begin, stream_, CU_EVENT_RECORD_EXTERNAL), CUDA_SUCCESS) << Detail();
  ASSERT_EQ(AddOne(a, a), CUDA_SUCCESS);
  ASSERT_EQ(e.cuEventRecordWithFlags(end, stream_, CU_EVENT_RECORD_EXTERNAL), CUDA_SUCCESS) << Detail();
  ASSERT_EQ(e.cuEventRecord(internal, stream_), CUDA_SUCCESS) << Detail();  // orders only: no node
  CUgraph graph = nullptr;
  ASSERT_EQ(e.cuStreamEndCapture(stream_, &graph), CUDA_SUCCESS) << Detail();
  size_t nodes = 0;
  ASSERT_EQ(e.cuGraphGetNodes(graph, nullptr, &nodes), CUDA_SUCCESS);
  EXPECT_EQ(nodes, 3u);
  float ms = 0;
  EXPECT_EQ(e.cuEventElapsedTime(&ms, begin, internal), CUDA_ERROR_STREAM_CAPTURE_UNSUPPORTED);
  CUgraphExec exec = nullptr;
  ASSERT_EQ(e.cuGraphInstantiateWithFlags(&exec, graph, 0), CUDA_SUCCESS);
  ASSERT_EQ(e.cuGraphLaunch(exec, stream_), CUDA_SUCCESS) << Detail();
  ASSERT_EQ(e.cuEventElapsedTime(&ms, begin, end), CUDA_SUCCESS) << Detail();
  EXPECT_GT(ms, 0.0f);  // the modeled launch
  KilnEmuCounters counters{};
  ASSERT_EQ(e.kilnEmuEventCounters(begin, end, &counters), CUDA_SUCCESS);
  EXPECT_EQ(counters.launches, 1u);
  EXPECT_EQ(Read(a)[0], 1.0f);
  EXPECT_EQ(e.cuGraphExecDestroy(exec), CUDA_SUCCESS);
  EXPECT_EQ(e.cuGraphDestroy(graph), CUDA_SUCCESS);
}

TEST_F(GraphApiTest, ReplayIsMemchecked) {
  const Api& e = Emu();
  CUdeviceptr a = Alloc(), b = Alloc();
  Fill(a, 0.0f);
  ASSERT_EQ(e.cuStreamBeginCapture(stream_, CU_STREAM_CAPTURE_MODE_THREAD_LOCAL), CUDA_SUCCESS);
  ASSERT_EQ(AddOne(a, b), CUDA_SUCCESS);
  CUgraph graph = nullptr;
  ASSERT_EQ(e.cuStreamEndCapture(stream_, &graph), CUDA_SUCCESS);
  CUgraphExec exec = nullptr;
  ASSERT_EQ(e.cuGraphInstantiateWithFlags(&exec, graph, 0), CUDA_SUCCESS);
  ASSERT_EQ(e.cuMemFree(b), CUDA_SUCCESS);
  EXPECT_EQ(e.cuGraphLaunch(exec, stream_), CUDA_ERROR_ILLEGAL_ADDRESS);
  EXPECT_NE(Detail().find("add_one"), std::string::npos) << Detail();
}

// Two streams, one kernel each, forked from and joined back into the
// first: the second stream's kernel starts when the fork was recorded (its
// clock moves up to the event's), and the first stream's clock after the
// join is the later of the two ends, not their sum.
TEST_F(GraphApiTest, WaitEventOrdersStreamsAndTheirWorkOverlapsInModeledTime) {
  const Api& e = Emu();
  CUstream other = nullptr;
  ASSERT_EQ(e.cuStreamCreate(&other, CU_STREAM_NON_BLOCKING), CUDA_SUCCESS);
  CUdeviceptr a = Alloc(), b = Alloc(), c = Alloc(), d = Alloc();
  Fill(a, 1.0f);
  Fill(c, 10.0f);
  CUevent start = Event(), fork = Event(), other_begin = Event(), other_end = Event(), join = Event(),
          mine_end = Event(), end = Event();
  // Work on the first stream only, so that its clock is ahead of the other's.
  ASSERT_EQ(AddOne(a, a), CUDA_SUCCESS);
  ASSERT_EQ(e.cuEventRecord(start, stream_), CUDA_SUCCESS);
  ASSERT_EQ(e.cuEventRecord(fork, stream_), CUDA_SUCCESS);
  ASSERT_EQ(e.cuStreamWaitEvent(other, fork, 0), CUDA_SUCCESS) << Detail();
  ASSERT_EQ(e.cuEventRecord(other_begin, other), CUDA_SUCCESS);
  ASSERT_EQ(AddOneOn(other, c, d), CUDA_SUCCESS);
  ASSERT_EQ(AddOneOn(other, d, d), CUDA_SUCCESS);
  ASSERT_EQ(e.cuEventRecord(other_end, other), CUDA_SUCCESS);
  ASSERT_EQ(e.cuEventRecord(join, other), CUDA_SUCCESS);
  ASSERT_EQ(AddOne(a, b), CUDA_SUCCESS);
  ASSERT_EQ(e.cuEventRecord(mine_end, stream_), CUDA_SUCCESS);
  ASSERT_EQ(e.cuStreamWaitEvent(stream_, join, 0), CUDA_SUCCESS) << Detail();
  ASSERT_EQ(e.cuEventRecord(end, stream_), CUDA_SUCCESS);
  ASSERT_EQ(e.cuStreamSynchronize(stream_), CUDA_SUCCESS);
  EXPECT_EQ(Read(b)[3], 3.0f);   // 1 + 1 + 1
  EXPECT_EQ(Read(d)[5], 12.0f);  // 10 + 1 + 1

  EXPECT_EQ(Ms(start, other_begin), 0.0f);  // the fork: the other stream starts at `start`
  const float mine = Ms(start, mine_end), theirs = Ms(other_begin, other_end);
  EXPECT_GT(mine, 0.0f);
  EXPECT_GT(theirs, mine);  // two launches against one
  EXPECT_FLOAT_EQ(Ms(start, end), std::max(mine, theirs));
  EXPECT_LT(Ms(start, end), mine + theirs);
  // Waiting for an event never recorded is a no-op; flags are checked.
  CUevent never = Event();
  EXPECT_EQ(e.cuStreamWaitEvent(stream_, never, 0), CUDA_SUCCESS);
  EXPECT_EQ(e.cuStreamWaitEvent(stream_, never, 7), CUDA_ERROR_INVALID_VALUE);
  EXPECT_EQ(e.cuStreamDestroy(other), CUDA_SUCCESS);
}

// The capture begins on the first stream, forks into the second through an
// event recorded before any work, and joins back before it ends:
//   n0 (first: x = 2)            n1 (second: y = 5) -> n2 (second: z = y + 1)
//   n3 (first: w = x + 1), after n0 and n2
TEST_F(GraphApiTest, CaptureForksIntoAnotherStreamAndJoinsBack) {
  const Api& e = Emu();
  CUstream other = nullptr;
  ASSERT_EQ(e.cuStreamCreate(&other, CU_STREAM_NON_BLOCKING), CUDA_SUCCESS);
  CUdeviceptr x = Alloc(), y = Alloc(), z = Alloc(), w = Alloc();
  for (CUdeviceptr p : {x, y, z, w}) Fill(p, 0.0f);
  CUevent fork = Event(), join = Event();
  ASSERT_EQ(e.cuStreamBeginCapture(stream_, CU_STREAM_CAPTURE_MODE_THREAD_LOCAL), CUDA_SUCCESS);
  ASSERT_EQ(e.cuEventRecord(fork, stream_), CUDA_SUCCESS) << Detail();
  ASSERT_EQ(e.cuMemsetD32Async(x, Bits(2.0f), kN, stream_), CUDA_SUCCESS) << Detail();
  EXPECT_EQ(StatusOf(other), CU_STREAM_CAPTURE_STATUS_NONE);
  ASSERT_EQ(e.cuStreamWaitEvent(other, fork, 0), CUDA_SUCCESS) << Detail();
  EXPECT_EQ(StatusOf(other), CU_STREAM_CAPTURE_STATUS_ACTIVE);  // joined the capture
  ASSERT_EQ(e.cuMemsetD32Async(y, Bits(5.0f), kN, other), CUDA_SUCCESS) << Detail();
  ASSERT_EQ(AddOneOn(other, y, z), CUDA_SUCCESS) << Detail();
  ASSERT_EQ(e.cuEventRecord(join, other), CUDA_SUCCESS) << Detail();
  ASSERT_EQ(e.cuStreamWaitEvent(stream_, join, 0), CUDA_SUCCESS) << Detail();
  ASSERT_EQ(AddOne(x, w), CUDA_SUCCESS) << Detail();
  CUgraph graph = nullptr;
  ASSERT_EQ(e.cuStreamEndCapture(stream_, &graph), CUDA_SUCCESS) << Detail();
  EXPECT_EQ(StatusOf(other), CU_STREAM_CAPTURE_STATUS_NONE);
  EXPECT_EQ(Read(w)[0], 0.0f);  // nothing ran yet

  size_t count = 0;
  ASSERT_EQ(e.cuGraphGetNodes(graph, nullptr, &count), CUDA_SUCCESS);
  ASSERT_EQ(count, 4u);
  std::vector<CUgraphNode> nodes(count);
  ASSERT_EQ(e.cuGraphGetNodes(graph, nodes.data(), &count), CUDA_SUCCESS);
  size_t edges = 0;
  ASSERT_EQ(e.cuGraphGetEdges(graph, nullptr, nullptr, nullptr, &edges), CUDA_SUCCESS);
  ASSERT_EQ(edges, 3u);
  std::vector<CUgraphNode> from(edges), to(edges);
  ASSERT_EQ(e.cuGraphGetEdges(graph, from.data(), to.data(), nullptr, &edges), CUDA_SUCCESS);
  auto index = [&](CUgraphNode n) { return std::find(nodes.begin(), nodes.end(), n) - nodes.begin(); };
  std::set<std::pair<long, long>> found;
  for (size_t i = 0; i < edges; ++i) found.insert({index(from[i]), index(to[i])});
  EXPECT_EQ(found, (std::set<std::pair<long, long>>{{0, 3}, {1, 2}, {2, 3}}));

  CUgraphExec exec = nullptr;
  ASSERT_EQ(e.cuGraphInstantiateWithFlags(&exec, graph, 0), CUDA_SUCCESS) << Detail();
  CUevent begin = Event(), end = Event();
  ASSERT_EQ(e.cuEventRecord(begin, stream_), CUDA_SUCCESS);
  ASSERT_EQ(e.cuGraphLaunch(exec, stream_), CUDA_SUCCESS) << Detail();
  ASSERT_EQ(e.cuEventRecord(end, stream_), CUDA_SUCCESS);
  ASSERT_EQ(e.cuStreamSynchronize(stream_), CUDA_SUCCESS);
  EXPECT_EQ(Read(w)[9], 3.0f);
  EXPECT_EQ(Read(z)[kN - 1], 6.0f);
  EXPECT_GT(Ms(begin, end), 0.0f);
  EXPECT_EQ(e.cuGraphExecDestroy(exec), CUDA_SUCCESS);
  EXPECT_EQ(e.cuGraphDestroy(graph), CUDA_SUCCESS);
  EXPECT_EQ(e.cuStreamDestroy(other), CUDA_SUCCESS);
}

TEST_F(GraphApiTest, CaptureAcrossStreamsFollowsTheDriversRules) {
  const Api& e = Emu();
  CUstream other = nullptr;
  ASSERT_EQ(e.cuStreamCreate(&other, CU_STREAM_NON_BLOCKING), CUDA_SUCCESS);
  CUdeviceptr a = Alloc();
  CUevent fork = Event(), outside = Event();
  CUgraph graph = nullptr;

  // A forked stream that never joins back.
  ASSERT_EQ(e.cuStreamBeginCapture(stream_, CU_STREAM_CAPTURE_MODE_THREAD_LOCAL), CUDA_SUCCESS);
  ASSERT_EQ(e.cuEventRecord(fork, stream_), CUDA_SUCCESS);
  ASSERT_EQ(e.cuStreamWaitEvent(other, fork, 0), CUDA_SUCCESS) << Detail();
  ASSERT_EQ(AddOneOn(other, a, a), CUDA_SUCCESS);
  EXPECT_EQ(e.cuStreamEndCapture(stream_, &graph), CUDA_ERROR_STREAM_CAPTURE_UNJOINED);
  EXPECT_NE(Detail().find("not joined back"), std::string::npos) << Detail();
  EXPECT_EQ(StatusOf(stream_), CU_STREAM_CAPTURE_STATUS_NONE);
  EXPECT_EQ(StatusOf(other), CU_STREAM_CAPTURE_STATUS_NONE);

  // Ending on the stream that joined, not the one that began.
  ASSERT_EQ(e.cuStreamBeginCapture(stream_, CU_STREAM_CAPTURE_MODE_THREAD_LOCAL), CUDA_SUCCESS);
  ASSERT_EQ(e.cuEventRecord(fork, stream_), CUDA_SUCCESS);
  ASSERT_EQ(e.cuStreamWaitEvent(other, fork, 0), CUDA_SUCCESS);
  EXPECT_EQ(e.cuStreamEndCapture(other, &graph), CUDA_ERROR_STREAM_CAPTURE_UNMATCHED);
  EXPECT_EQ(StatusOf(stream_), CU_STREAM_CAPTURE_STATUS_NONE);

  // A capturing stream waiting for an event recorded outside its capture.
  ASSERT_EQ(e.cuEventRecord(outside, other), CUDA_SUCCESS);
  ASSERT_EQ(e.cuStreamBeginCapture(stream_, CU_STREAM_CAPTURE_MODE_THREAD_LOCAL), CUDA_SUCCESS);
  EXPECT_EQ(e.cuStreamWaitEvent(stream_, outside, 0), CUDA_ERROR_STREAM_CAPTURE_ISOLATION);
  EXPECT_EQ(e.cuStreamEndCapture(stream_, &graph), CUDA_ERROR_STREAM_CAPTURE_INVALIDATED);

  // An event of an ended capture cannot be waited for.
  ASSERT_EQ(e.cuStreamBeginCapture(stream_, CU_STREAM_CAPTURE_MODE_THREAD_LOCAL), CUDA_SUCCESS);
  ASSERT_EQ(e.cuEventRecord(fork, stream_), CUDA_SUCCESS);
  ASSERT_EQ(e.cuStreamEndCapture(stream_, &graph), CUDA_SUCCESS);
  EXPECT_EQ(e.cuStreamWaitEvent(other, fork, 0), CUDA_ERROR_STREAM_CAPTURE_ISOLATION);
  EXPECT_EQ(e.cuGraphDestroy(graph), CUDA_SUCCESS);
  EXPECT_EQ(e.cuStreamDestroy(other), CUDA_SUCCESS);
}

}  // namespace

namespace {

// *counter -= 1; the handle is set to whether it is still positive.
constexpr char kStepPtx[] = R"(.version 8.0
.target sm_90
.address_size 64

.extern .func cudaGraphSetConditional
(
	.param .b64 cudaGraphSetConditional_param_0,
	.param .b32 cudaGraphSetConditional_param_1
)
;

.visible .entry step(.param .u64 p_handle, .param .u64 p_counter)
{
	.reg .pred 	%p<1>;
	.reg .b32 	%r<3>;
	.reg .b64 	%rd<2>;
	ld.param.u64 	%rd0, [p_handle];
	ld.param.u64 	%rd1, [p_counter];
	ld.global.u32 	%r0, [%rd1];
	sub.s32 	%r1, %r0, 1;
	st.global.u32 	[%rd1], %r1;
	setp.gt.s32 	%p0, %r1, 0;
	selp.u32 	%r2, 1, 0, %p0;
	{
	.param .b64 param0;
	st.param.b64 	[param0+0], %rd0;
	.param .b32 param1;
	st.param.b32 	[param1+0], %r2;
	call.uni
	cudaGraphSetConditional,
	(
	param0,
	param1
	);
	}
	ret;
}
)";

// A conditional node added into `stream`'s capture after its current
// nodes, which then depends on it alone.
CUgraphNode AddConditional(CUstream stream, CUcontext ctx, CUgraphConditionalHandle* handle,
                           CUgraphConditionalNodeType type, unsigned size, CUgraph* bodies, unsigned default_value) {
  const Api& e = Emu();
  CUstreamCaptureStatus status{};
  CUgraph graph = nullptr;
  const CUgraphNode* deps = nullptr;
  size_t count = 0;
  EXPECT_EQ(e.cuStreamGetCaptureInfo(stream, &status, nullptr, &graph, &deps, nullptr, &count), CUDA_SUCCESS);
  EXPECT_NE(graph, nullptr);
  EXPECT_EQ(e.cuGraphConditionalHandleCreate(handle, graph, ctx, default_value, CU_GRAPH_COND_ASSIGN_DEFAULT),
            CUDA_SUCCESS) << Detail();
  std::vector<CUgraphNode> copy(deps, deps + count);
  CUgraphNodeParams params{};
  params.type = CU_GRAPH_NODE_TYPE_CONDITIONAL;
  params.conditional.handle = *handle;
  params.conditional.type = type;
  params.conditional.size = size;
  params.conditional.phGraph_out = bodies;
  params.conditional.ctx = ctx;
  CUgraphNode node = nullptr;
  CUresult r = e.cuGraphAddNode(&node, graph, copy.data(), nullptr, copy.size(), &params);
  if (r != CUDA_SUCCESS) return nullptr;
  EXPECT_EQ(e.cuStreamUpdateCaptureDependencies(stream, &node, nullptr, 1, CU_STREAM_SET_CAPTURE_DEPENDENCIES),
            CUDA_SUCCESS) << Detail();
  return node;
}

TEST_F(GraphApiTest, WhileNodeRunsItsBodyUntilTheDeviceClearsTheHandle) {
  const Api& e = Emu();
  CUmodule m = nullptr;
  ASSERT_EQ(e.cuModuleLoadData(&m, kStepPtx), CUDA_SUCCESS) << Detail();
  CUfunction step = nullptr;
  ASSERT_EQ(e.cuModuleGetFunction(&step, m, "step"), CUDA_SUCCESS);
  CUdeviceptr a = Alloc(), counter = Alloc();
  Fill(a, 0.0f);
  ASSERT_EQ(e.cuStreamBeginCapture(stream_, CU_STREAM_CAPTURE_MODE_THREAD_LOCAL), CUDA_SUCCESS);
  CUgraphConditionalHandle h = 0;
  CUgraph body = nullptr;
  CUgraphNode node = AddConditional(stream_, context_, &h, CU_GRAPH_COND_TYPE_WHILE, 1, &body, 1);
  ASSERT_NE(node, nullptr) << Detail();
  CUgraph outer = nullptr;
  ASSERT_EQ(e.cuStreamEndCapture(stream_, &outer), CUDA_SUCCESS) << Detail();
  // The body, captured on the same stream into the node's body graph.
  ASSERT_EQ(e.cuStreamBeginCaptureToGraph(stream_, body, nullptr, nullptr, 0, CU_STREAM_CAPTURE_MODE_THREAD_LOCAL),
            CUDA_SUCCESS) << Detail();
  ASSERT_EQ(AddOne(a, a), CUDA_SUCCESS);
  void* params[] = {&h, &counter};
  ASSERT_EQ(e.cuLaunchKernel(step, 1, 1, 1, 1, 1, 1, 0, stream_, params, nullptr), CUDA_SUCCESS) << Detail();
  CUgraph ended = nullptr;
  ASSERT_EQ(e.cuStreamEndCapture(stream_, &ended), CUDA_SUCCESS) << Detail();
  EXPECT_EQ(ended, body);
  EXPECT_EQ(Read(a)[0], 0.0f);  // recorded, not run
  CUgraphExec exec = nullptr;
  ASSERT_EQ(e.cuGraphInstantiateWithFlags(&exec, outer, 0), CUDA_SUCCESS) << Detail();
  for (int32_t trips : {3, 2}) {
    int32_t start[kN] = {trips};
    ASSERT_EQ(e.cuMemcpyHtoD(counter, start, sizeof start), CUDA_SUCCESS);
    Fill(a, 0.0f);
    KilnEmuApiCalls before = Calls();
    ASSERT_EQ(e.cuGraphLaunch(exec, stream_), CUDA_SUCCESS) << Detail();
    KilnEmuApiCalls after = Calls();
    EXPECT_EQ(Read(a)[0], static_cast<float>(trips));  // the default value 1 entered the loop each launch
    EXPECT_EQ(after.graph_launches - before.graph_launches, 1u);
    EXPECT_EQ(after.graph_nodes_run - before.graph_nodes_run, 1u + 2u * static_cast<uint64_t>(trips));
  }
  EXPECT_EQ(e.cuGraphExecDestroy(exec), CUDA_SUCCESS);
  EXPECT_EQ(e.cuGraphDestroy(outer), CUDA_SUCCESS);
}

TEST_F(GraphApiTest, ConditionalBodiesTakeNoEventsAndSwitchNeedsDriver12_8) {
  const Api& e = Emu();
  ASSERT_EQ(e.cuStreamBeginCapture(stream_, CU_STREAM_CAPTURE_MODE_THREAD_LOCAL), CUDA_SUCCESS);
  CUgraphConditionalHandle h = 0;
  CUgraph bodies[3] = {};
  ASSERT_NE(AddConditional(stream_, context_, &h, CU_GRAPH_COND_TYPE_SWITCH, 3, bodies, 0), nullptr) << Detail();
  setenv("KILN_EMU_DRIVER_VERSION", "12040", 1);
  CUgraph more[3] = {};
  EXPECT_EQ(AddConditional(stream_, context_, &h, CU_GRAPH_COND_TYPE_SWITCH, 3, more, 0), nullptr);
  EXPECT_NE(AddConditional(stream_, context_, &h, CU_GRAPH_COND_TYPE_IF, 1, more, 0), nullptr) << Detail();
  unsetenv("KILN_EMU_DRIVER_VERSION");
  CUgraph outer = nullptr;
  ASSERT_EQ(e.cuStreamEndCapture(stream_, &outer), CUDA_SUCCESS) << Detail();
  ASSERT_EQ(e.cuStreamBeginCaptureToGraph(stream_, bodies[1], nullptr, nullptr, 0, CU_STREAM_CAPTURE_MODE_THREAD_LOCAL),
            CUDA_SUCCESS) << Detail();
  CUevent ev = Event();
  EXPECT_EQ(e.cuEventRecordWithFlags(ev, stream_, CU_EVENT_RECORD_EXTERNAL), CUDA_ERROR_STREAM_CAPTURE_UNSUPPORTED);
  EXPECT_EQ(StatusOf(stream_), CU_STREAM_CAPTURE_STATUS_INVALIDATED);
  CUgraph ended = nullptr;
  EXPECT_EQ(e.cuStreamEndCapture(stream_, &ended), CUDA_ERROR_STREAM_CAPTURE_INVALIDATED);
  EXPECT_EQ(e.cuEventDestroy(ev), CUDA_SUCCESS);
  EXPECT_EQ(e.cuGraphDestroy(outer), CUDA_SUCCESS);
}

}  // namespace
