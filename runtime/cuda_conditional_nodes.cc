// Conditional nodes inside CUDA graphs; see cuda_conditional_nodes.h.
#include "runtime/cuda_conditional_nodes.h"

#include <functional>
#include <string>
#include <vector>

#include "runtime/cuda_backend.h"

namespace kiln::runtime {
namespace {

namespace th = ::kiln::thunks;

// kiln_set_conditional(handle, value, mode, count, case) reads the byte
// predicate (mode 0: a while loop's; mode 1: a conditional's, true ->
// branch 0) or the s32 branch index (mode 2; out of range -> count - 1)
// and sets the handle to the predicate (mode 0), the branch (case ==
// 0xffffffff) or whether the branch is `case`.
constexpr const char* kSetConditionalBody = R"(.address_size 64

.extern .func cudaGraphSetConditional
(
	.param .b64 cudaGraphSetConditional_param_0,
	.param .b32 cudaGraphSetConditional_param_1
)
;

.visible .entry kiln_set_conditional(
	.param .u64 kiln_set_conditional_handle,
	.param .u64 kiln_set_conditional_value,
	.param .u32 kiln_set_conditional_mode,
	.param .u32 kiln_set_conditional_count,
	.param .u32 kiln_set_conditional_case
)
{
	.reg .pred 	%p<4>;
	.reg .b16 	%rs<2>;
	.reg .b32 	%r<8>;
	.reg .b64 	%rd<4>;

	ld.param.u64 	%rd1, [kiln_set_conditional_handle];
	ld.param.u64 	%rd2, [kiln_set_conditional_value];
	ld.param.u32 	%r1, [kiln_set_conditional_mode];
	ld.param.u32 	%r2, [kiln_set_conditional_count];
	ld.param.u32 	%r3, [kiln_set_conditional_case];
	cvta.to.global.u64 	%rd3, %rd2;
	setp.eq.s32 	%p1, %r1, 2;
	@%p1 bra 	$L__index;
	ld.global.u8 	%rs1, [%rd3];
	setp.ne.s16 	%p2, %rs1, 0;
	selp.u32 	%r5, 1, 0, %p2;
	setp.eq.s32 	%p3, %r1, 0;
	@%p3 bra 	$L__set;
	xor.b32 	%r5, %r5, 1;
	bra.uni 	$L__select;
$L__index:
	ld.global.u32 	%r6, [%rd3];
	add.s32 	%r7, %r2, -1;
	setp.ge.u32 	%p2, %r6, %r2;
	selp.b32 	%r5, %r7, %r6, %p2;
$L__select:
	setp.eq.s32 	%p3, %r3, -1;
	@%p3 bra 	$L__set;
	setp.eq.s32 	%p2, %r5, %r3;
	selp.u32 	%r5, 1, 0, %p2;
$L__set:
	{
	.param .b64 param0;
	st.param.b64 	[param0+0], %rd1;
	.param .b32 param1;
	st.param.b32 	[param1+0], %r5;
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

constexpr unsigned kWhileMode = 0, kPredMode = 1, kIndexMode = 2;
constexpr unsigned kAnyCase = 0xffffffffu;

// Records nodes into ctx.stream's capture.
class Recorder {
 public:
  Recorder(const CudaDriver& d, CUfunction setter, CUcontext context, CudaExecutionContext& ctx)
      : d_(d), setter_(setter), context_(context), ctx_(ctx) {}

  // A driver call of the recording: a refusal marks the capture as failed
  // (ctx.capture_refused), so the segment falls back to direct issue.
  Status Check(CUresult r, const char* what) {
    Status s = d_.Check(r, what);
    if (!s.ok()) ctx_.capture_refused = true;
    return s;
  }

  // A handle of the graph the stream captures into, 0 by default at each
  // launch (the set kernel always runs before its node).
  StatusOr<CUgraphConditionalHandle> NewHandle() {
    KILN_ASSIGN_OR_RETURN(CUgraph graph, CaptureGraph(nullptr));
    CUgraphConditionalHandle h = 0;
    KILN_RETURN_IF_ERROR(Check(d_.cuGraphConditionalHandleCreate(&h, graph, context_, 0, CU_GRAPH_COND_ASSIGN_DEFAULT),
                                  "cuGraphConditionalHandleCreate"));
    return h;
  }

  Status Set(CUgraphConditionalHandle h, const th::BufferSlice& value, unsigned mode, unsigned count,
             unsigned which) {
    CUdeviceptr address = ctx_.allocation_base[value.allocation] + static_cast<CUdeviceptr>(value.offset);
    void* params[] = {&h, &address, &mode, &count, &which};
    return Check(d_.cuLaunchKernel(setter_, 1, 1, 1, 1, 1, 1, 0, ctx_.stream, params, nullptr),
                    "cuLaunchKernel of 'kiln_set_conditional'");
  }

  // Adds a conditional node after the capture's current nodes and makes
  // it the capture's only dependency; *bodies gets its body graphs.
  StatusOr<CUgraphNode> AddNode(CUgraphConditionalHandle h, CUgraphConditionalNodeType type, unsigned size,
                                std::vector<CUgraph>* bodies) {
    std::vector<CUgraphNode> deps;
    KILN_ASSIGN_OR_RETURN(CUgraph graph, CaptureGraph(&deps));
    bodies->assign(size, nullptr);
    CUgraphNodeParams params{};
    params.type = CU_GRAPH_NODE_TYPE_CONDITIONAL;
    params.conditional.handle = h;
    params.conditional.type = type;
    params.conditional.size = size;
    params.conditional.phGraph_out = bodies->data();
    params.conditional.ctx = context_;
    CUgraphNode node = nullptr;
    KILN_RETURN_IF_ERROR(Check(d_.cuGraphAddNode(&node, graph, deps.data(), nullptr, deps.size(), &params),
                                  "cuGraphAddNode (conditional)"));
    KILN_RETURN_IF_ERROR(Check(d_.cuStreamUpdateCaptureDependencies(ctx_.stream, &node, nullptr, 1,
                                                                       CU_STREAM_SET_CAPTURE_DEPENDENCIES),
                                  "cuStreamUpdateCaptureDependencies"));
    return node;
  }

  // Captures body i with `issue(i)` for every body of `node`, on the same
  // stream, then resumes the capture after the node.
  Status CaptureBodies(CUgraphNode node, const std::vector<CUgraph>& bodies,
                       const std::function<Status(size_t)>& issue) {
    KILN_ASSIGN_OR_RETURN(CUgraph outer, CaptureGraph(nullptr));
    CUgraph ended = nullptr;
    KILN_RETURN_IF_ERROR(Check(d_.cuStreamEndCapture(ctx_.stream, &ended), "cuStreamEndCapture"));
    Status status = Status::Ok();
    for (size_t i = 0; i < bodies.size() && status.ok(); ++i) {
      status = Check(d_.cuStreamBeginCaptureToGraph(ctx_.stream, bodies[i], nullptr, nullptr, 0,
                                                       CU_STREAM_CAPTURE_MODE_THREAD_LOCAL),
                        "cuStreamBeginCaptureToGraph");
      if (!status.ok()) break;
      status = issue(i);
      CUgraph body = nullptr;
      Status body_ended = Check(d_.cuStreamEndCapture(ctx_.stream, &body), "cuStreamEndCapture");
      if (status.ok()) status = body_ended;
    }
    // Resumed even after a failure: the segment's capture ends it.
    Status resumed = Check(d_.cuStreamBeginCaptureToGraph(ctx_.stream, outer, &node, nullptr, 1,
                                                             CU_STREAM_CAPTURE_MODE_THREAD_LOCAL),
                              "cuStreamBeginCaptureToGraph");
    return status.ok() ? resumed : status;
  }

 private:
  // The graph ctx.stream captures into and, when `deps` is set, the
  // capture's current dependencies.
  StatusOr<CUgraph> CaptureGraph(std::vector<CUgraphNode>* deps) {
    CUstreamCaptureStatus status = CU_STREAM_CAPTURE_STATUS_NONE;
    CUgraph graph = nullptr;
    const CUgraphNode* nodes = nullptr;
    size_t count = 0;
    KILN_RETURN_IF_ERROR(Check(d_.cuStreamGetCaptureInfo(ctx_.stream, &status, nullptr, &graph, &nodes, nullptr, &count),
                                  "cuStreamGetCaptureInfo"));
    if (status != CU_STREAM_CAPTURE_STATUS_ACTIVE || !graph) {
      return Error("internal error: a conditional node outside an active stream capture");
    }
    if (deps) deps->assign(nodes, nodes + count);
    return graph;
  }

  const CudaDriver& d_;
  CUfunction setter_;
  CUcontext context_;
  CudaExecutionContext& ctx_;
};

}  // namespace

std::string SetConditionalPtx(int sm_arch) {
  return ".version 8.0\n.target " + SmName(sm_arch) + "\n" + kSetConditionalBody;
}

StatusOr<std::unique_ptr<CudaConditionalNodes>> CudaConditionalNodes::Load(const CudaDriver& driver, int sm_arch) {
  if (!driver.has_graphs() || !driver.has_conditional_functions()) {
    return Error("the driver lacks the conditional node entry points");
  }
  int version = 0;
  KILN_RETURN_IF_ERROR(driver.Check(driver.cuDriverGetVersion(&version), "cuDriverGetVersion"));
  if (version < 12040) {
    return Error("driver version " + std::to_string(version) + " has no conditional nodes (12.4 and later do)");
  }
  CUcontext context = nullptr;
  KILN_RETURN_IF_ERROR(driver.Check(driver.cuCtxGetCurrent(&context), "cuCtxGetCurrent"));
  const std::string ptx = SetConditionalPtx(sm_arch);
  CudaCode code;
  code.ptx = &ptx;
  code.description = "kiln_set_conditional PTX";
  KILN_ASSIGN_OR_RETURN(std::unique_ptr<CudaModule> module, CudaModule::Load(driver, code, {"kiln_set_conditional"}));
  CUfunction setter = module->Find("kiln_set_conditional");
  return std::unique_ptr<CudaConditionalNodes>(
      new CudaConditionalNodes(driver, std::move(module), setter, context, version));
}

Status CudaConditionalNodes::RecordWhile(const th::WhileThunk& w, CudaExecutionContext& ctx, int depth) const {
  Recorder r(driver_, setter_, context_, ctx);
  KILN_RETURN_IF_ERROR(ExecuteCudaSequence(w.condition, ctx, depth + 1));
  KILN_ASSIGN_OR_RETURN(CUgraphConditionalHandle h, r.NewHandle());
  KILN_RETURN_IF_ERROR(r.Set(h, w.predicate, kWhileMode, 0, kAnyCase));
  std::vector<CUgraph> bodies;
  KILN_ASSIGN_OR_RETURN(CUgraphNode node, r.AddNode(h, CU_GRAPH_COND_TYPE_WHILE, 1, &bodies));
  return r.CaptureBodies(node, bodies, [&](size_t) -> Status {
    KILN_RETURN_IF_ERROR(ExecuteCudaSequence(w.body, ctx, depth + 1));
    KILN_RETURN_IF_ERROR(ExecuteCudaSequence(w.condition, ctx, depth + 1));
    return r.Set(h, w.predicate, kWhileMode, 0, kAnyCase);
  });
}

Status CudaConditionalNodes::RecordConditional(const th::ConditionalThunk& c, CudaExecutionContext& ctx,
                                               int depth) const {
  if (c.branches.empty()) return Error("conditional without branches");
  Recorder r(driver_, setter_, context_, ctx);
  const unsigned n = static_cast<unsigned>(c.branches.size());
  const unsigned mode = c.is_pred ? kPredMode : kIndexMode;
  auto branch = [&](size_t i) { return ExecuteCudaSequence(c.branches[i], ctx, depth + 1); };
  std::vector<CUgraph> bodies;
  if (has_switch_) {
    KILN_ASSIGN_OR_RETURN(CUgraphConditionalHandle h, r.NewHandle());
    KILN_RETURN_IF_ERROR(r.Set(h, c.branch_index, mode, n, kAnyCase));
    KILN_ASSIGN_OR_RETURN(CUgraphNode node, r.AddNode(h, CU_GRAPH_COND_TYPE_SWITCH, n, &bodies));
    return r.CaptureBodies(node, bodies, branch);
  }
  // Every handle is set before the first IF runs: a branch may overwrite
  // the index.
  std::vector<CUgraphConditionalHandle> handles;
  for (unsigned i = 0; i < n; ++i) {
    KILN_ASSIGN_OR_RETURN(CUgraphConditionalHandle h, r.NewHandle());
    KILN_RETURN_IF_ERROR(r.Set(h, c.branch_index, mode, n, i));
    handles.push_back(h);
  }
  for (unsigned i = 0; i < n; ++i) {
    KILN_ASSIGN_OR_RETURN(CUgraphNode node, r.AddNode(handles[i], CU_GRAPH_COND_TYPE_IF, 1, &bodies));
    KILN_RETURN_IF_ERROR(r.CaptureBodies(node, bodies, [&](size_t) { return branch(i); }));
  }
  return Status::Ok();
}

}  // namespace kiln::runtime
