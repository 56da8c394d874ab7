// ComputationEmitter: one thunk (or none) per scheduled instruction.
#include <algorithm>

#include "compiler/emitter/cost_model.h"
#include "compiler/emitter/program_builder.h"
#include "compiler/hlo/custom_call_targets.h"
#include "compiler/passes/cholesky_rewriter.h"
#include "compiler/passes/dot_precision.h"
#include "compiler/passes/fp8_gemm.h"
#include "compiler/passes/fusible_ops.h"
#include "compiler/passes/passes.h"
#include "compiler/passes/radix_sort_rewriter.h"
#include "thunks/fft_geometry.h"
#include "thunks/linalg_geometry.h"

namespace kiln::emitter {

namespace th = ::kiln::thunks;
using hlo::HloInstruction;
using hlo::HloOpcode;

namespace {

bool IsGemmType(ElementType t) {
  return t == ElementType::kF32 || t == ElementType::kF64 || t == ElementType::kC64 || t == ElementType::kC128;
}

// The element types of the LAPACK / cuSOLVER and trsm calls.
bool IsLinalgType(ElementType t) {
  return t == ElementType::kF32 || t == ElementType::kF64 || t == ElementType::kC64 || t == ElementType::kC128;
}

// Matrices in the leading dimensions of `shape` (rank >= 2).
int64_t BatchCount(const Shape& shape) {
  int64_t batch = 1;
  for (int64_t i = 0; i + 2 < shape.rank(); ++i) batch *= shape.dim(i);
  return batch;
}

th::Thunk MakeThunk(th::ThunkInfo info, th::ThunkBody body) { return th::Thunk{std::move(info), std::move(body)}; }

th::Thunk MakeCopy(const HloInstruction& origin, const std::string& suffix, th::BufferSlice from,
                   th::BufferSlice to) {
  th::ThunkInfo info = InfoFor(origin);
  info.profile_name += suffix;
  info.cost = CopyCost(from.size);
  return MakeThunk(std::move(info), th::CopyThunk{from, to});
}


struct Move {
  th::BufferSlice from, to;
};

// A library call that works in place on `to` needs the operand's value
// there first: a copy, unless buffer assignment shared the two slices.
Status CopyForInPlace(const HloInstruction& origin, th::BufferSlice from, th::BufferSlice to,
                      th::SequenceThunk& seq) {
  if (from == to) return Status::Ok();
  if (from.Overlaps(to))
    return Error(origin.DebugName() + ": in-place operand " + from.ToString() + " partly overlaps output " +
                 to.ToString());
  seq.thunks.push_back(MakeCopy(origin, ".in_place", from, to));
  return Status::Ok();
}

// Emits `moves` as copies that behave as if all sources were read before
// any destination is written: a move whose source overlaps one of
// `destinations` is staged through a fresh temporary first.
void EmitMoves(ProgramBuilder& builder, const std::vector<Move>& moves,
               const std::vector<th::BufferSlice>& destinations, const HloInstruction& origin,
               th::SequenceThunk& seq, const std::string& suffix = ".result") {
  std::vector<Move> direct, staged;
  for (const Move& m : moves) {
    if (m.from == m.to || m.from.size == 0) continue;
    bool reads_destination = false;
    for (const th::BufferSlice& d : destinations) reads_destination |= m.from.Overlaps(d);
    (reads_destination ? staged : direct).push_back(m);
  }
  std::vector<th::BufferSlice> stages;
  for (const Move& m : staged) {
    th::BufferSlice stage{builder.AddTemp(m.from.size), 0, m.from.size};
    stages.push_back(stage);
    seq.thunks.push_back(MakeCopy(origin, ".stage", m.from, stage));
  }
  for (const Move& m : direct) seq.thunks.push_back(MakeCopy(origin, suffix, m.from, m.to));
  for (size_t i = 0; i < staged.size(); ++i) seq.thunks.push_back(MakeCopy(origin, suffix, stages[i], staged[i].to));
}

// XLA's known_trip_count backend config: {"known_trip_count":{"n":"7"}}.
std::optional<int64_t> KnownTripCount(const HloInstruction& loop) {
  std::string text = loop.BackendConfig();
  size_t at = text.find("\"known_trip_count\"");
  if (at == std::string::npos) return std::nullopt;
  at = text.find("\"n\"", at);
  if (at == std::string::npos) return std::nullopt;
  at = text.find_first_of("0123456789", at + 3);
  if (at == std::string::npos) return std::nullopt;
  int64_t n = 0;
  for (; at < text.size() && std::isdigit(static_cast<unsigned char>(text[at])); ++at) {
    if (n > (int64_t{1} << 50)) return std::nullopt;
    n = n * 10 + (text[at] - '0');
  }
  return n;
}

}  // namespace

StatusOr<th::SequenceThunk> ComputationEmitter::Emit() {
  th::SequenceThunk seq;
  for (const HloInstruction* inst : assignment_->schedule().sequence)
    KILN_RETURN_IF_ERROR(EmitInstruction(*inst, seq));
  KILN_RETURN_IF_ERROR(EmitOutputCopies(seq));
  return seq;
}

Status ComputationEmitter::EmitOutputCopies(th::SequenceThunk& seq) {
  const auto& copies = assignment_->output_copies();
  if (copies.empty()) return Status::Ok();
  std::vector<Move> moves;
  std::vector<th::BufferSlice> destinations;
  for (const pipeline::OutputCopy& c : copies) {
    KILN_ASSIGN_OR_RETURN(th::BufferSlice from, ToProgram(c.from, comp_.root()));
    KILN_ASSIGN_OR_RETURN(th::BufferSlice to, ToProgram(c.to, comp_.root()));
    moves.push_back({from, to});
    destinations.push_back(to);
  }
  EmitMoves(builder_, moves, destinations, *comp_.root(), seq);
  return Status::Ok();
}

Status ComputationEmitter::EmitInstruction(const HloInstruction& inst, th::SequenceThunk& seq) {
  switch (inst.opcode()) {
    // Values that exist without running anything: caller buffers, constant
    // data, and views of other values.
    case HloOpcode::kParameter:
    case HloOpcode::kConstant:
    case HloOpcode::kTuple:
    case HloOpcode::kGetTupleElement:
    case HloOpcode::kOptimizationBarrier:
    case HloOpcode::kAfterAll:
      return Status::Ok();
    case HloOpcode::kBitcast:
      if (!passes::IsRowMajorReshape(inst.operand(0)->shape(), inst.shape()))
        return Error(inst.DebugName() + ": bef-compile does not support a bitcast from " +
                     inst.operand(0)->shape().ToString() + " to " + inst.shape().ToString() +
                     " (it changes the element type or depends on a non-row-major layout)");
      return Status::Ok();
    case HloOpcode::kFusion: return EmitFusion(inst, seq);
    case HloOpcode::kDot: return EmitGemm(inst, seq);
    case HloOpcode::kConvolution: return EmitConvolution(inst, seq);
    case HloOpcode::kFft: return EmitFft(inst, seq);
    case HloOpcode::kTriangularSolve: return EmitTriangularSolve(inst, seq);
    case HloOpcode::kWhile: return EmitWhile(inst, seq);
    case HloOpcode::kConditional: return EmitConditional(inst, seq);
    case HloOpcode::kRngGetAndUpdateState: return EmitRngGetAndUpdateState(inst, seq);
    case HloOpcode::kCustomCall: return EmitCustomCall(inst, seq);
    case HloOpcode::kReplicaId:
    case HloOpcode::kPartitionId: return EmitDeviceId(inst, seq);
    case HloOpcode::kAllReduce:
    case HloOpcode::kAllReduceStart:
    case HloOpcode::kAllGather:
    case HloOpcode::kAllGatherStart:
    case HloOpcode::kReduceScatter:
    case HloOpcode::kAllToAll:
    case HloOpcode::kCollectivePermute:
    case HloOpcode::kCollectivePermuteStart:
    case HloOpcode::kCollectiveBroadcast: return EmitCollective(inst, seq);
    case HloOpcode::kAsyncStart: return EmitCollective(inst, seq);  // wrapped_collective.h
    case HloOpcode::kAllReduceDone:
    case HloOpcode::kAllGatherDone:
    case HloOpcode::kCollectivePermuteDone:
    case HloOpcode::kAsyncDone: return EmitCollectiveDone(inst, seq);
    default:
      return Error(inst.DebugName() + ": bef-compile does not support opcode '" +
                   std::string(hlo::OpcodeName(inst.opcode())) + "' yet (supported: " + SupportedOpsSummary() + ")");
  }
}

Status ComputationEmitter::EmitFusion(const HloInstruction& fusion, th::SequenceThunk& seq) {
  const hlo::HloComputation* body = fusion.called_computation("calls");
  if (!body) return Error(fusion.DebugName() + ": fusion without a computation");
  th::KernelThunk kernel;
  kernel.kernel_name = builder_.KernelName(fusion.name());
  for (const HloInstruction* op : fusion.operands()) {
    if (!op->shape().IsArray()) return Error(fusion.DebugName() + ": a kernel operand must be an array");
    KILN_ASSIGN_OR_RETURN(th::BufferSlice s, Slice(op, {}));
    kernel.args.push_back({s, false});
  }
  // One output per array leaf (a multi-output fusion has a tuple shape).
  for (const ShapeIndex& index : ArrayLeaves(fusion.shape())) {
    KILN_ASSIGN_OR_RETURN(th::BufferSlice out, Slice(&fusion, index));
    kernel.args.push_back({out, true});
  }
  KILN_RETURN_IF_ERROR(EmitInPlaceCopies(fusion, kernel, seq));
  builder_.result().kernels.push_back({kernel.kernel_name, body});
  th::ThunkInfo info = InfoFor(fusion);
  info.cost = FusionCost(fusion);
  seq.thunks.push_back(MakeThunk(std::move(info), std::move(kernel)));
  return Status::Ok();
}

// The runtime keeps the state (RngGetAndUpdateStateThunk); the instruction's
// buffer receives it.
Status ComputationEmitter::EmitRngGetAndUpdateState(const HloInstruction& inst, th::SequenceThunk& seq) {
  const int64_t* delta = inst.GetAttribute<int64_t>("delta");
  if (!delta) return Error(inst.DebugName() + ": rng-get-and-update-state needs a delta");
  if (!inst.shape().IsArray() || inst.shape().element_type() != ElementType::kU64 ||
      inst.shape().dims() != std::vector<int64_t>{2})
    return Error(inst.DebugName() + ": rng-get-and-update-state must produce u64[2], not " +
                 inst.shape().ToString(false));
  th::RngGetAndUpdateStateThunk r;
  KILN_ASSIGN_OR_RETURN(r.state, Slice(&inst, {}));
  r.delta = *delta;
  seq.thunks.push_back(MakeThunk(InfoFor(inst), std::move(r)));
  return Status::Ok();
}

// An in-place kernel (dynamic-update-slice / scatter root) writes only the
// updated elements: each output must hold its operand's value first.
// Buffer assignment shares the two slices when the operand dies there;
// otherwise copy it, as if all operands were read before any output is
// written (a scatter of N operands has N outputs, and one operand may start
// several of them).
Status ComputationEmitter::EmitInPlaceCopies(const HloInstruction& fusion, const th::KernelThunk& kernel,
                                             th::SequenceThunk& seq) {
  std::vector<int64_t> targets = passes::InPlaceOperandNumbers(fusion);
  if (targets.empty()) return Status::Ok();
  const size_t first_output = static_cast<size_t>(fusion.operand_count());
  if (kernel.args.size() != first_output + targets.size())
    return Error(fusion.DebugName() + ": an in-place kernel needs one output per updated operand");
  std::vector<Move> moves;
  std::vector<th::BufferSlice> destinations;
  for (size_t k = 0; k < targets.size(); ++k) {
    const th::BufferSlice& in = kernel.args.at(targets[k]).slice;
    const th::BufferSlice& out = kernel.args[first_output + k].slice;
    if (in != out && in.Overlaps(out))
      return Error(fusion.DebugName() + ": in-place operand " + in.ToString() + " partly overlaps output " +
                   out.ToString());
    moves.push_back({in, out});
    destinations.push_back(out);
  }
  EmitMoves(builder_, moves, destinations, fusion, seq, ".in_place");
  return Status::Ok();
}

// A canonical dot (see DotCanonicalization): lhs [b,m,k] or [b,k,m], rhs
// [b,k,n] or [b,n,k], out [b,m,n], all dense row-major.
Status ComputationEmitter::EmitGemm(const HloInstruction& dot, th::SequenceThunk& seq) {
  hlo::DotDimensionNumbers dn = dot.dot_dimension_numbers();
  const Shape& ls = dot.operand(0)->shape();
  const Shape& rs = dot.operand(1)->shape();
  const Shape& os = dot.shape();
  // f32, f64, c64 and c128 GEMMs, and bf16 x bf16 -> f32 (DotCanonicalization's form
  // for CUDA).
  bool bf16 = ls.element_type() == ElementType::kBF16 && os.element_type() == ElementType::kF32;
  // s8 x s8 -> s32 in cuBLAS' int8 form (see passes/int8_gemm.h).
  bool int8 = ls.element_type() == ElementType::kS8 && os.element_type() == ElementType::kS32 &&
              dn.lhs_contracting == std::vector<int64_t>{2} && dn.rhs_contracting == std::vector<int64_t>{2};
  // f8 x f8 -> f32, bf16 or f16 in cuBLASLt's FP8 form (see passes/fp8_gemm.h).
  bool fp8 = passes::IsFp8GemmDot(dot) && passes::Fp8GemmOutputType(os.element_type()) == os.element_type() &&
             dn.lhs_contracting == std::vector<int64_t>{2} && dn.rhs_contracting == std::vector<int64_t>{2};
  if (ls.rank() != 3 || rs.rank() != 3 || os.rank() != 3 || dn.lhs_contracting.size() != 1 ||
      dn.rhs_contracting.size() != 1 || (ls.element_type() != rs.element_type() && !fp8) ||
      !(bf16 || int8 || fp8 || (IsGemmType(ls.element_type()) && ls.element_type() == os.element_type())))
    return Error(dot.DebugName() + ": bef-compile does not support dot of " + ls.ToString(false) + " x " +
                 rs.ToString(false) + " -> " + os.ToString(false) +
                 " (the GEMM libraries take f32, f64, c64, c128, bf16 x bf16 -> f32, [b,m,k] x [b,n,k] s8 x s8 -> s32"
                 " and f8e4m3fn/f8e5m2 -> f32, bf16 or f16; f16 is widened to f32)");
  th::GemmThunk g;
  KILN_ASSIGN_OR_RETURN(g.lhs, Slice(dot.operand(0), {}));
  KILN_ASSIGN_OR_RETURN(g.rhs, Slice(dot.operand(1), {}));
  KILN_ASSIGN_OR_RETURN(g.out, Slice(&dot, {}));
  g.lhs_type = ls.element_type();
  g.rhs_type = rs.element_type();
  g.out_type = os.element_type();
  g.lhs_transposed = dn.lhs_contracting[0] == 1;
  g.rhs_transposed = dn.rhs_contracting[0] == 2;
  g.batch = os.dim(0);
  g.m = os.dim(1);
  g.n = os.dim(2);
  g.k = ls.dim(g.lhs_transposed ? 1 : 2);
  g.lhs_leading_dim = std::max<int64_t>(1, g.lhs_transposed ? g.m : g.k);
  g.rhs_leading_dim = std::max<int64_t>(1, g.rhs_transposed ? g.k : g.n);
  g.out_leading_dim = std::max<int64_t>(1, g.n);
  g.lhs_batch_stride = g.m * g.k;
  g.rhs_batch_stride = g.k * g.n;
  g.out_batch_stride = g.m * g.n;
  g.tf32 = builder_.options().tf32 && ls.element_type() == ElementType::kF32 &&
           os.element_type() == ElementType::kF32 && passes::DotAllowsTf32(dot);
  th::ThunkInfo info = InfoFor(dot);
  info.cost = GemmCost(dot);
  seq.thunks.push_back(MakeThunk(std::move(info), std::move(g)));
  return Status::Ok();
}

// A convolution, in any dimension numbers (ConvolutionCanonicalization has
// put it in b01f_01io->b01f or bf01_oi01->bf01, but the thunk carries the
// numbers and layouts, so the library needs no particular one).
Status ComputationEmitter::EmitConvolution(const HloInstruction& conv, th::SequenceThunk& seq) {
  const hlo::ConvDimensionNumbers* dn = conv.GetAttribute<hlo::ConvDimensionNumbers>("dim_labels");
  if (!dn || conv.operand_count() != 2) return Error(conv.DebugName() + ": malformed convolution");
  const Shape& in = conv.operand(0)->shape();
  const Shape& kernel = conv.operand(1)->shape();
  const Shape& out = conv.shape();
  // The host convolution widens f16 and bf16 to f32
  // (kernels_lib/host_convolution.h); other types become kernels in fusion
  // (passes::IsKernelOp), except complex ones.
  if (!passes::IsLibraryConvolution(conv))
    return Error(conv.DebugName() + ": bef-compile does not support convolution of " + in.ToString(false) + " x " +
                 kernel.ToString(false) + " -> " + out.ToString(false) +
                 " (the convolution library takes f16, bf16, f32 and f64; kernels take real and pred types)");
  th::ConvolutionThunk c;
  c.kind = th::ConvolutionKind::kForward;
  for (int64_t i = 0; i < 2; ++i) {
    KILN_ASSIGN_OR_RETURN(th::BufferSlice s, Slice(conv.operand(i), {}));
    c.operands.push_back(s);
    c.operand_shapes.push_back(conv.operand(i)->shape());
  }
  KILN_ASSIGN_OR_RETURN(c.result, Slice(&conv, {}));
  c.result_shape = out;
  c.dimensions = {dn->input_batch,  dn->input_feature,  dn->input_spatial,
                  dn->kernel_input_feature, dn->kernel_output_feature, dn->kernel_spatial,
                  dn->output_batch, dn->output_feature, dn->output_spatial};
  const hlo::Window* window = conv.GetAttribute<hlo::Window>("window");
  if (window && !window->dims.empty() && window->dims.size() != dn->kernel_spatial.size())
    return Error(conv.DebugName() + ": window has " + std::to_string(window->dims.size()) + " dimensions, expected " +
                 std::to_string(dn->kernel_spatial.size()));
  for (size_t i = 0; i < dn->kernel_spatial.size(); ++i) {
    th::WindowDimension w;
    if (window && i < window->dims.size()) {
      const hlo::WindowDim& d = window->dims[i];
      w = {d.size, d.stride, d.pad_low, d.pad_high, d.lhs_dilation, d.rhs_dilation, d.reversal};
    } else {
      w.size = kernel.dim(dn->kernel_spatial[i]);  // no window attribute: the whole kernel, unit steps
    }
    c.window.push_back(w);
  }
  c.feature_group_count = conv.GetInt("feature_group_count", 1);
  c.batch_group_count = conv.GetInt("batch_group_count", 1);
  th::ThunkInfo info = InfoFor(conv);
  info.cost = ConvolutionCost(conv);
  seq.thunks.push_back(MakeThunk(std::move(info), std::move(c)));
  return Status::Ok();
}

// An fft, on the dense row-major buffers every value has after
// LayoutNormalization: the libraries (FFTW, cuFFT) transform the innermost
// dimensions of each batch element in one call.
Status ComputationEmitter::EmitFft(const HloInstruction& fft, th::SequenceThunk& seq) {
  if (fft.operand_count() != 1 || !fft.operand(0)->shape().IsArray() || !fft.shape().IsArray())
    return Error(fft.DebugName() + ": malformed fft");
  // An empty result needs no transform (a zero batch, or XLA's fft_length 0).
  if (fft.shape().ElementCount() == 0) return Status::Ok();
  th::FftThunk f;
  const std::string type = fft.GetString("fft_type");
  if (type == "FFT") f.type = th::FftType::kFft;
  else if (type == "IFFT") f.type = th::FftType::kIfft;
  else if (type == "RFFT") f.type = th::FftType::kRfft;
  else if (type == "IRFFT") f.type = th::FftType::kIrfft;
  else return Error(fft.DebugName() + ": unknown fft_type '" + type + "'");
  f.fft_length = fft.GetInts("fft_length");
  KILN_ASSIGN_OR_RETURN(f.input, Slice(fft.operand(0), {}));
  KILN_ASSIGN_OR_RETURN(f.output, Slice(&fft, {}));
  f.input_shape = fft.operand(0)->shape();
  f.output_shape = fft.shape();
  if (Status s = th::AnalyzeFft(f).status(); !s.ok())
    return Error(fft.DebugName() + ": bef-compile does not support this fft: " + s.message());
  th::ThunkInfo info = InfoFor(fft);
  info.cost = FftCost(fft);
  seq.thunks.push_back(MakeThunk(std::move(info), std::move(f)));
  return Status::Ok();
}

// The registry (hlo/custom_call_targets.h) says who handles a target; the
// rewriters' targets are gone by now, so only the library calls remain.
Status ComputationEmitter::EmitCustomCall(const HloInstruction& call, th::SequenceThunk& seq) {
  const std::optional<hlo::CustomCallTarget> target = hlo::FindCustomCallTarget(call.GetString("custom_call_target"));
  if (!target) return hlo::UnsupportedCustomCallTarget(call, "bef-compile");
  if (call.operand_count() == 0)
    return Error(call.DebugName() + ": malformed " + call.GetString("custom_call_target") + " call (no operand)");
  switch (target->handler) {
    case hlo::CustomCallHandler::kCholeskyEmitter: return EmitCholesky(call, seq);
    case hlo::CustomCallHandler::kLapackEmitter: return EmitLapackCall(call, target->lapack_op, seq);
    case hlo::CustomCallHandler::kRadixSortEmitter: return EmitRadixSort(call, seq);
    default:
      return Error(call.DebugName() + ": custom-call target '" + call.GetString("custom_call_target") +
                   "' reached thunk emission (its rewriter did not accept the call)");
  }
}

// CholeskyRewriter's or JAX's potrf call: (factor, info) = custom-call(a).
// potrf works in place on the factor's slice, which receives a first.
Status ComputationEmitter::EmitCholesky(const HloInstruction& call, th::SequenceThunk& seq) {
  const Shape& a = call.operand(0)->shape();
  const Shape& out = call.shape();
  if (!a.IsArray() || a.rank() < 2 || a.dim(a.rank() - 1) != a.dim(a.rank() - 2) || !out.IsTuple() ||
      out.tuple_size() != 2 || !out.tuple_shape(0).IsArray() || out.tuple_shape(0).dims() != a.dims())
    return Error(call.DebugName() + ": malformed " + passes::kCholeskyCallTarget + " call");
  if (!IsLinalgType(a.element_type()))
    return Error(call.DebugName() + ": bef-compile does not support cholesky of " + a.ToString(false) +
                 " (LAPACK and cuSOLVER take f32, f64, c64 and c128)");
  th::CholeskyThunk c;
  KILN_ASSIGN_OR_RETURN(th::BufferSlice operand, Slice(call.operand(0), {}));
  KILN_ASSIGN_OR_RETURN(c.a, Slice(&call, {0}));
  KILN_ASSIGN_OR_RETURN(c.info, Slice(&call, {1}));
  KILN_RETURN_IF_ERROR(CopyForInPlace(call, operand, c.a, seq));
  c.type = a.element_type();
  c.n = a.dim(a.rank() - 1);
  c.batch = BatchCount(a);
  c.lower = call.GetBool("lower", false);
  if (call.GetString("custom_call_target") != passes::kCholeskyCallTarget) {
    // JAX's lapack_?potrf_ffi: uplo of the logical matrix (XLA's operand is
    // column-major, so LAPACK's triangle is the logical one).
    KILN_ASSIGN_OR_RETURN(hlo::LapackAttributes attrs, hlo::ReadLapackAttributes(call));
    c.lower = attrs.uplo == 'L';
  }
  th::ThunkInfo info = InfoFor(call);
  info.cost = CholeskyCost(call);
  seq.thunks.push_back(MakeThunk(std::move(info), std::move(c)));
  return Status::Ok();
}

namespace {

// The LinalgThunk routine of a LAPACK target (potrf is a CholeskyThunk).
std::optional<th::LinalgOp> LinalgOpFor(hlo::LapackOp op) {
  switch (op) {
    case hlo::LapackOp::kGetrf: return th::LinalgOp::kGetrf;
    case hlo::LapackOp::kGeqrf: return th::LinalgOp::kGeqrf;
    case hlo::LapackOp::kOrgqr: return th::LinalgOp::kOrgqr;
    case hlo::LapackOp::kSyevd: return th::LinalgOp::kSyevd;
    case hlo::LapackOp::kGesdd: return th::LinalgOp::kGesdd;
    case hlo::LapackOp::kPotrf: break;
  }
  return std::nullopt;
}

// The call's result `i` as an array shape (the result itself for orgqr).
const Shape* ResultShape(const HloInstruction& call, int64_t i) {
  const Shape& s = call.shape();
  if (s.IsArray()) return i == 0 ? &s : nullptr;
  return i < s.tuple_size() && s.tuple_shape(i).IsArray() ? &s.tuple_shape(i) : nullptr;
}

}  // namespace

// JAX's lapack_*_ffi calls other than potrf: one LinalgThunk in place on
// result 0's slice, which receives operand 0 first (XLA aliases the two).
Status ComputationEmitter::EmitLapackCall(const HloInstruction& call, hlo::LapackOp op, th::SequenceThunk& seq) {
  const Shape& a = call.operand(0)->shape();
  const size_t operands = op == hlo::LapackOp::kOrgqr ? 2 : 1;
  const Shape* result0 = ResultShape(call, 0);
  const std::optional<th::LinalgOp> routine = LinalgOpFor(op);
  if (!routine || call.operand_count() != static_cast<int64_t>(operands) || !a.IsArray() || a.rank() < 2 || !result0 ||
      result0->dims() != a.dims() || result0->element_type() != a.element_type())
    return Error(call.DebugName() + ": malformed " + call.GetString("custom_call_target") + " call");
  KILN_ASSIGN_OR_RETURN(hlo::LapackAttributes attrs, hlo::ReadLapackAttributes(call));
  th::LinalgThunk l;
  l.op = *routine;
  l.type = a.element_type();
  l.m = a.dim(a.rank() - 2);
  l.n = a.dim(a.rank() - 1);
  l.batch = BatchCount(a);
  l.lower = attrs.uplo == 'L';
  l.mode = attrs.mode;
  if (op == hlo::LapackOp::kOrgqr) {
    const Shape& tau = call.operand(1)->shape();
    if (!tau.IsArray() || tau.rank() != a.rank() - 1 || tau.element_type() != a.element_type())
      return Error(call.DebugName() + ": malformed orgqr call (tau)");
    l.k = tau.dim(tau.rank() - 1);
    KILN_ASSIGN_OR_RETURN(l.tau, Slice(call.operand(1), {}));
  }
  StatusOr<th::LinalgGeometry> geometry = th::GetLinalgGeometry(l);
  if (!geometry.ok()) return Error(call.DebugName() + ": " + geometry.status().message());
  // Every other result must be what the routine writes: same count, types
  // and sizes, batch included.
  const int64_t results = call.shape().IsTuple() ? call.shape().tuple_size() : 1;
  if (results != static_cast<int64_t>(geometry->results.size()) + 1)
    return Error(call.DebugName() + ": " + std::string(th::LinalgOpName(l.op)) + " returns " +
                 std::to_string(geometry->results.size() + 1) + " results");
  for (size_t i = 0; i < geometry->results.size(); ++i) {
    const th::LinalgBlock& block = geometry->results[i];
    const Shape* shape = ResultShape(call, static_cast<int64_t>(i) + 1);
    if (!shape || shape->element_type() != block.type || shape->ElementCount() != block.elements * l.batch)
      return Error(call.DebugName() + ": result " + std::to_string(i + 1) + " (" + block.name + ") must hold " +
                   std::to_string(block.elements * l.batch) + " " + std::string(ElementTypeName(block.type)) +
                   " values");
    KILN_ASSIGN_OR_RETURN(th::BufferSlice slice, Slice(&call, {static_cast<int64_t>(i) + 1}));
    l.results.push_back(slice);
  }
  KILN_ASSIGN_OR_RETURN(th::BufferSlice operand, Slice(call.operand(0), {}));
  KILN_ASSIGN_OR_RETURN(l.a, Slice(&call, call.shape().IsTuple() ? ShapeIndex{0} : ShapeIndex{}));
  if (op == hlo::LapackOp::kOrgqr && l.tau.Overlaps(l.a))
    return Error(call.DebugName() + ": the result's slice overlaps tau");
  KILN_RETURN_IF_ERROR(CopyForInPlace(call, operand, l.a, seq));
  th::ThunkInfo info = InfoFor(call);
  info.cost = LinalgCost(call, l);
  seq.thunks.push_back(MakeThunk(std::move(info), std::move(l)));
  return Status::Ok();
}

// RadixSortRewriter's call: (keys, values) = custom-call(keys[, values]),
// sorted along the minor dimension.
Status ComputationEmitter::EmitRadixSort(const HloInstruction& call, th::SequenceThunk& seq) {
  const Shape& keys = call.operand(0)->shape();
  const Shape& out = call.shape();
  const int64_t operands = call.operand_count();
  if (operands < 1 || operands > 2 || !keys.IsArray() || keys.rank() < 1 || !out.IsTuple() ||
      out.tuple_size() != operands)
    return Error(call.DebugName() + ": malformed " + passes::kRadixSortCallTarget + " call");
  th::RadixSortThunk r;
  const std::string order = call.GetString("radix_order");
  bool known = false;
  for (int o = 0; o <= static_cast<int>(th::RadixKeyOrder::kFloatNumpy); ++o) {
    if (th::RadixKeyOrderName(static_cast<th::RadixKeyOrder>(o)) != order) continue;
    r.order = static_cast<th::RadixKeyOrder>(o);
    known = true;
  }
  if (!known) return Error(call.DebugName() + ": unknown radix_order '" + order + "'");
  KILN_ASSIGN_OR_RETURN(r.keys, Slice(call.operand(0), {}));
  KILN_ASSIGN_OR_RETURN(r.keys_out, Slice(&call, {0}));
  if (operands == 2) {
    KILN_ASSIGN_OR_RETURN(r.values, Slice(call.operand(1), {}));
    KILN_ASSIGN_OR_RETURN(r.values_out, Slice(&call, {1}));
    r.value_type = call.operand(1)->shape().element_type();
  }
  r.key_type = keys.element_type();
  r.row_length = keys.dim(keys.rank() - 1);
  r.rows = r.row_length == 0 ? 0 : keys.ElementCount() / r.row_length;
  r.descending = call.GetBool("descending", false);
  th::ThunkInfo info = InfoFor(call);
  info.cost = RadixSortCost(call);
  seq.thunks.push_back(MakeThunk(std::move(info), std::move(r)));
  return Status::Ok();
}

// triangular-solve(a, b): trsm in place on the result's slice, which
// receives b first.
Status ComputationEmitter::EmitTriangularSolve(const HloInstruction& solve, th::SequenceThunk& seq) {
  const Shape& a = solve.operand(0)->shape();
  const Shape& b = solve.operand(1)->shape();
  if (!IsLinalgType(b.element_type()))
    return Error(solve.DebugName() + ": bef-compile does not support triangular-solve of " + b.ToString(false) +
                 " (BLAS trsm takes f32, f64, c64 and c128)");
  th::TriangularSolveThunk t;
  KILN_ASSIGN_OR_RETURN(t.a, Slice(solve.operand(0), {}));
  KILN_ASSIGN_OR_RETURN(th::BufferSlice rhs, Slice(solve.operand(1), {}));
  KILN_ASSIGN_OR_RETURN(t.b, Slice(&solve, {}));
  if (t.a.Overlaps(t.b)) return Error(solve.DebugName() + ": the result's slice overlaps a");
  KILN_RETURN_IF_ERROR(CopyForInPlace(solve, rhs, t.b, seq));
  const std::string transpose = solve.GetString("transpose_a");
  t.transpose_a = transpose == "ADJOINT"     ? th::TriangularSolveTranspose::kAdjoint
                  : transpose == "TRANSPOSE" ? th::TriangularSolveTranspose::kTranspose
                                             : th::TriangularSolveTranspose::kNoTranspose;
  t.type = b.element_type();
  t.m = b.dim(b.rank() - 2);
  t.n = b.dim(b.rank() - 1);
  t.batch = BatchCount(b);
  t.left_side = solve.GetBool("left_side", false);
  t.lower = solve.GetBool("lower", false);
  t.unit_diagonal = solve.GetBool("unit_diagonal", false);
  if (a.rank() != b.rank() || a.dim(a.rank() - 1) != t.k())
    return Error(solve.DebugName() + ": malformed triangular-solve");
  th::ThunkInfo info = InfoFor(solve);
  info.cost = TriangularSolveCost(solve);
  seq.thunks.push_back(MakeThunk(std::move(info), std::move(t)));
  return Status::Ok();
}

Status ComputationEmitter::CopyLeaves(const ComputationEmitter& callee, const HloInstruction* from,
                                      const ParameterBindings& to, const HloInstruction& origin,
                                      th::SequenceThunk& seq) {
  std::vector<Move> moves;
  for (const ShapeIndex& index : ArrayLeaves(from->shape())) {
    KILN_ASSIGN_OR_RETURN(th::BufferSlice src, callee.Slice(from, index));
    auto it = to.find({0, index});
    if (it == to.end()) return Error(origin.DebugName() + ": no destination for result leaf " + ShapeIndexToString(index));
    moves.push_back({src, it->second});
  }
  std::vector<th::BufferSlice> destinations;
  for (const auto& [key, slice] : to) destinations.push_back(slice);
  EmitMoves(builder_, moves, destinations, origin, seq);
  return Status::Ok();
}

Status ComputationEmitter::EmitWhile(const HloInstruction& loop, th::SequenceThunk& seq) {
  const hlo::HloComputation* cond = loop.called_computation("condition");
  const hlo::HloComputation* body = loop.called_computation("body");
  if (!cond || !body) return Error(loop.DebugName() + ": while needs condition and body");
  // The loop state lives in the while's own buffers; the body and the
  // condition read it in place through their parameter.
  ParameterBindings state;
  for (const ShapeIndex& index : ArrayLeaves(loop.shape())) {
    KILN_ASSIGN_OR_RETURN(th::BufferSlice init, Slice(loop.operand(0), index));
    KILN_ASSIGN_OR_RETURN(th::BufferSlice slot, Slice(&loop, index));
    state[{0, index}] = slot;
    if (init != slot && init.size > 0) seq.thunks.push_back(MakeCopy(loop, ".init", init, slot));
  }
  ComputationEmitter cond_emitter(builder_, *cond, state);
  KILN_RETURN_IF_ERROR(cond_emitter.Init());
  th::WhileThunk w;
  KILN_ASSIGN_OR_RETURN(w.condition, cond_emitter.Emit());
  if (!cond->root()->shape().IsArray() || cond->root()->shape().element_type() != ElementType::kPred)
    return Error(loop.DebugName() + ": the condition must return pred[]");
  KILN_ASSIGN_OR_RETURN(w.predicate, cond_emitter.Slice(cond->root(), {}));
  // The body computes each new state value in place when the old one is
  // dead by then, so most iterations need no copy back.
  ComputationEmitter body_emitter(builder_, *body, state, state);
  KILN_RETURN_IF_ERROR(body_emitter.Init());
  KILN_ASSIGN_OR_RETURN(w.body, body_emitter.Emit());
  KILN_RETURN_IF_ERROR(CopyLeaves(body_emitter, body->root(), state, loop, w.body));
  w.trip_count = KnownTripCount(loop);
  th::ThunkInfo info = InfoFor(loop);
  seq.thunks.push_back(MakeThunk(std::move(info), std::move(w)));
  return Status::Ok();
}

Status ComputationEmitter::EmitConditional(const HloInstruction& cond, th::SequenceThunk& seq) {
  std::vector<hlo::HloComputation*> branches = cond.branch_computations();
  if (branches.empty() || cond.operand_count() != static_cast<int64_t>(branches.size()) + 1)
    return Error(cond.DebugName() + ": conditional needs one operand per branch plus the selector");
  th::ConditionalThunk c;
  const Shape& selector = cond.operand(0)->shape();
  c.is_pred = selector.element_type() == ElementType::kPred;
  KILN_ASSIGN_OR_RETURN(c.branch_index, Slice(cond.operand(0), {}));
  ParameterBindings result;
  for (const ShapeIndex& index : ArrayLeaves(cond.shape())) {
    KILN_ASSIGN_OR_RETURN(result[std::make_pair(int64_t{0}, index)], Slice(&cond, index));
  }
  for (size_t i = 0; i < branches.size(); ++i) {
    const HloInstruction* operand = cond.operand(static_cast<int64_t>(i) + 1);
    ParameterBindings args;
    for (const ShapeIndex& index : ArrayLeaves(operand->shape())) {
      KILN_ASSIGN_OR_RETURN(args[std::make_pair(int64_t{0}, index)], Slice(operand, index));
    }
    ComputationEmitter branch(builder_, *branches[i], args, result);
    KILN_RETURN_IF_ERROR(branch.Init());
    KILN_ASSIGN_OR_RETURN(th::SequenceThunk s, branch.Emit());
    KILN_RETURN_IF_ERROR(CopyLeaves(branch, branches[i]->root(), result, cond, s));
    c.branches.push_back(std::move(s));
  }
  seq.thunks.push_back(MakeThunk(InfoFor(cond), std::move(c)));
  return Status::Ok();
}

}  // namespace kiln::emitter
