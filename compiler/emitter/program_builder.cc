// ProgramBuilder, the allocation mapping of ComputationEmitter, ThunkInfo
// construction and the entry point EmitThunkProgram.
#include <algorithm>
#include <cctype>
#include <cstring>
#include <map>
#include <set>

#include "compiler/emitter/program_builder.h"
#include "compiler/pipeline/in_place.h"
#include "compiler/pipeline/latency_hiding.h"
#include "compiler/pipeline/list_scheduler.h"
#include "compiler/passes/hlo_builder.h"

namespace kiln::emitter {

namespace th = ::kiln::thunks;
using hlo::HloOpcode;

// ---- ProgramBuilder -----------------------------------------------------------

int32_t ProgramBuilder::AddAllocation(th::Allocation allocation) {
  program().allocations.push_back(std::move(allocation));
  return static_cast<int32_t>(program().allocations.size() - 1);
}

int32_t ProgramBuilder::AddTemp(int64_t size) {
  th::Allocation a;
  a.size = size;
  a.alignment = pipeline::kBufferAlignment;
  return AddAllocation(std::move(a));
}

StatusOr<int64_t> ProgramBuilder::AddConstant(const hlo::HloInstruction& constant) {
  if (!constant.has_literal()) return Error(constant.DebugName() + ": constant has no value");
  const Literal& lit = constant.literal();
  if (!constant.shape().IsArray() || static_cast<int64_t>(lit.raw_size()) != constant.shape().ByteSize())
    return Error(constant.DebugName() + ": constant of shape " + constant.shape().ToString(false) +
                 " has no dense byte representation kiln can store");
  th::Constant c;
  c.name = constant.name();
  c.bytes.assign(lit.raw(), lit.raw() + lit.raw_size());
  program().constants.push_back(std::move(c));
  return static_cast<int64_t>(program().constants.size() - 1);
}

std::string ProgramBuilder::KernelName(const std::string& hlo_name) {
  std::string base;
  for (char c : hlo_name) base += std::isalnum(static_cast<unsigned char>(c)) ? c : '_';
  if (base.empty() || std::isdigit(static_cast<unsigned char>(base[0]))) base = "k_" + base;
  std::string name = base;
  for (int i = 1; !kernel_names_.insert(name).second; ++i) name = base + "_" + std::to_string(i);
  return name;
}

// ---- ThunkInfo ----------------------------------------------------------------

namespace {

// op_name="..." inside a metadata={...} attribute, or "".
std::string OpName(const hlo::HloInstruction& inst) {
  const hlo::Attribute* md = inst.FindAttribute("metadata");
  if (!md) return "";
  const auto* raw = std::get_if<hlo::RawAttr>(&md->value);
  if (!raw) return "";
  const std::string& t = raw->text;
  size_t at = t.find("op_name=\"");
  if (at == std::string::npos) return "";
  at += std::strlen("op_name=\"");
  std::string out;
  for (size_t i = at; i < t.size() && t[i] != '"'; ++i) {
    if (t[i] == '\\' && i + 1 < t.size()) ++i;
    out += t[i];
  }
  return out;
}

th::HloInstructionRef Ref(const hlo::HloInstruction& inst) {
  return {inst.name(), std::string(hlo::OpcodeName(inst.opcode())), OpName(inst)};
}

}  // namespace

th::ThunkInfo InfoFor(const hlo::HloInstruction& inst) {
  th::ThunkInfo info;
  info.profile_name = inst.name();
  const hlo::HloComputation* fused =
      inst.opcode() == HloOpcode::kFusion ? inst.called_computation("calls") : nullptr;
  if (!fused) {
    info.hlo.push_back(Ref(inst));
    return info;
  }
  for (const hlo::HloInstruction* member : fused->PostOrder())
    if (member->opcode() != HloOpcode::kParameter) info.hlo.push_back(Ref(*member));
  return info;
}

// ---- ComputationEmitter: allocations ------------------------------------------

namespace {

// A loop body's schedule with each instruction that computes a new state
// leaf moved after the other readers of that leaf's old value where the
// dependencies allow (otherwise `schedule`'s order): the new value can then
// be computed in the state's own buffer (ResultSlotFor) instead of a
// temporary copied back every iteration. A stable list schedule: the
// earliest ready instruction runs first unless it is such a writer whose
// leaf has readers still to run and something else is ready.
pipeline::SequentialSchedule StateWritersLast(const hlo::HloComputation& body,
                                              const pipeline::SequentialSchedule& schedule) {
  const hlo::HloInstruction* root = body.root();
  const hlo::HloInstruction* state = body.parameter_count() == 1 ? body.parameter(0) : nullptr;
  if (!state || root->opcode() != HloOpcode::kTuple) return schedule;
  // The readers of each state leaf's old value, keyed by the leaf's writer.
  std::map<const hlo::HloInstruction*, std::vector<const hlo::HloInstruction*>> readers;
  for (const hlo::HloInstruction* gte : state->users()) {
    if (gte->opcode() != HloOpcode::kGetTupleElement) return schedule;
    const int64_t j = gte->tuple_index();
    if (j < 0 || j >= root->operand_count()) return schedule;
    const hlo::HloInstruction* writer = root->operand(j);
    if (writer == gte || writer->opcode() == HloOpcode::kParameter) continue;
    for (const hlo::HloInstruction* user : gte->users())
      if (user != writer && user != root) readers[writer].push_back(user);
  }
  if (readers.empty()) return schedule;
  const int64_t n = schedule.size();
  std::map<const hlo::HloInstruction*, int64_t> pending;  // unscheduled operands
  for (const hlo::HloInstruction* inst : schedule.sequence) {
    std::set<const hlo::HloInstruction*> preds(inst->operands().begin(), inst->operands().end());
    preds.insert(inst->control_predecessors().begin(), inst->control_predecessors().end());
    pending[inst] = static_cast<int64_t>(preds.size());
  }
  std::set<const hlo::HloInstruction*> done;
  pipeline::SequentialSchedule out;
  out.computation = schedule.computation;
  auto deferred = [&](const hlo::HloInstruction* inst) {
    auto it = readers.find(inst);
    if (it == readers.end()) return false;
    for (const hlo::HloInstruction* r : it->second)
      if (!done.count(r)) return true;
    return false;
  };
  while (static_cast<int64_t>(out.sequence.size()) < n) {
    const hlo::HloInstruction* pick = nullptr;
    const hlo::HloInstruction* first_ready = nullptr;
    for (const hlo::HloInstruction* inst : schedule.sequence) {
      if (done.count(inst) || pending[inst] > 0) continue;
      if (!first_ready) first_ready = inst;
      if (!deferred(inst)) {
        pick = inst;
        break;
      }
    }
    if (!pick) pick = first_ready;
    if (!pick) return schedule;  // not a complete schedule: leave it alone
    done.insert(pick);
    out.sequence.push_back(pick);
    std::set<const hlo::HloInstruction*> successors(pick->users().begin(), pick->users().end());
    successors.insert(pick->control_successors().begin(), pick->control_successors().end());
    for (const hlo::HloInstruction* s : successors)
      if (pending.count(s)) --pending[s];
  }
  out.Reindex();
  return out;
}

}  // namespace

std::vector<ShapeIndex> ComputationEmitter::ArrayLeaves(const Shape& shape) {
  std::vector<ShapeIndex> leaves;
  for (const ShapeIndex& index : pipeline::LeafIndices(shape))
    if (SubShape(shape, index)->IsArray()) leaves.push_back(index);
  return leaves;
}

Status ComputationEmitter::Init() {
  KILN_ASSIGN_OR_RETURN(pipeline::BufferAssignment ba,
                        pipeline::AssignBuffersMinimizingMemory(comp_, options_));
  if (bindings_ && !results_.empty()) {
    // A loop body: prefer the order that updates the loop state in place,
    // unless it needs more temporary memory.
    pipeline::SequentialSchedule reordered = StateWritersLast(comp_, ba.schedule());
    if (reordered.sequence != ba.schedule().sequence && pipeline::VerifySchedule(reordered).ok()) {
      StatusOr<pipeline::BufferAssignment> in_place = pipeline::AssignBuffers(comp_, std::move(reordered), options_);
      if (in_place.ok() && in_place->peak_temp_bytes() <= ba.peak_temp_bytes()) ba = std::move(*in_place);
    }
  }
  if (!options_.concurrent_temps) {
    // Independent compute between each async collective's start and done.
    KILN_ASSIGN_OR_RETURN(std::optional<pipeline::BufferAssignment> overlapped,
                          pipeline::AssignBuffersHidingLatency(comp_, ba, options_));
    if (overlapped) ba = std::move(*overlapped);
  }
  assignment_.emplace(std::move(ba));
  const auto& local = assignment_->allocations();
  for (size_t a = 0; a < local.size(); ++a) {
    th::Allocation alloc = local[a];
    if (alloc.is_parameter() && bindings_) {
      global_.push_back(-1);  // resolved through the bindings
      continue;
    }
    if (std::optional<th::BufferSlice> slot = ResultSlotFor(alloc, static_cast<int32_t>(a))) {
      global_.push_back(-1);
      bound_[static_cast<int32_t>(a)] = *slot;
      continue;
    }
    if (alloc.constant) {
      const hlo::HloInstruction* c = assignment_->constants()[*alloc.constant];
      KILN_ASSIGN_OR_RETURN(alloc.constant, builder_.AddConstant(*c));
    }
    // Only the entry's root is a program output; a called computation's
    // result is copied to its caller's slices.
    if (bindings_) alloc.output.reset();
    global_.push_back(builder_.AddAllocation(std::move(alloc)));
  }
  builder_.result().temp_peak_bytes += assignment_->peak_temp_bytes();
  builder_.result().temp_lower_bound_bytes += assignment_->temp_lower_bound();
  builder_.result().buffer_assignment_text +=
      "computation " + comp_.name() + ":\n" + assignment_->ToString() + "\n";
  return Status::Ok();
}

bool ComputationEmitter::UpdatesInPlace(const hlo::HloInstruction& inst, const ShapeIndex& index,
                                        int64_t buffer) const {
  std::vector<pipeline::OperandUse> uses = assignment_->points_to().OperandUses(&inst);
  const pipeline::OperandUse* only = nullptr;
  for (const pipeline::OperandUse& use : uses) {
    if (use.buffer != buffer) continue;
    if (only) return false;  // read twice: the second read could see the new value
    only = &use;
  }
  return only && pipeline::CanShareOperandBuffer(inst, only->operand_number, only->operand_index, index);
}

std::optional<th::BufferSlice> ComputationEmitter::ResultSlotFor(const th::Allocation& alloc, int32_t local) const {
  // Only a root leaf's own output allocation (not a parameter or constant
  // that the root forwards) can be computed in place.
  if (results_.empty() || !alloc.output || alloc.is_parameter() || alloc.is_constant()) return std::nullopt;
  auto slot = results_.find({0, *alloc.output});
  if (slot == results_.end()) return std::nullopt;
  const pipeline::PointsToAnalysis& pt = assignment_->points_to();
  const hlo::HloInstruction* root = comp_.root();
  // The buffer must fill exactly this allocation and be the root's value at
  // that leaf only.
  std::optional<int64_t> buffer;
  int leaves = 0;
  for (const auto& [index, id] : pt.LeavesOf(root)) {
    if (assignment_->placement(id).slice.allocation != local) continue;
    ++leaves;
    buffer = id;
  }
  if (leaves != 1 || !buffer || pt.buffer(*buffer).size != slot->second.size) return std::nullopt;
  // The allocation is first written by the earliest buffer placed in it (a
  // chain of in-place updates can start before the root value).
  int64_t first = *buffer;
  for (const pipeline::LogicalBuffer& b : pt.buffers())
    if (assignment_->placement(b.id).slice.allocation == local &&
        assignment_->placement(b.id).live_start < assignment_->placement(first).live_start)
      first = b.id;
  const int64_t first_write = assignment_->placement(first).live_start;
  // Writing the caller's slice must not clobber a value still to be read:
  // the caller's value there is this computation's parameter leaf (a while
  // loop's state), so it must be dead before the first write, or be read
  // only by that first writer, which updates it in place.
  for (const hlo::HloInstruction* param : comp_.parameters()) {
    if (!param || !bindings_) continue;
    for (const auto& [index, id] : pt.LeavesOf(param)) {
      auto bound = bindings_->find({param->parameter_number(), index});
      if (bound == bindings_->end()) continue;
      const th::BufferSlice& s = bound->second;
      bool overlaps = s.allocation == slot->second.allocation && s.offset < slot->second.end() &&
                      slot->second.offset < s.end();
      int64_t last_read = assignment_->placement(id).live_end;
      if (!overlaps || last_read < first_write) continue;
      const pipeline::LogicalBuffer& writer = pt.buffer(first);
      bool in_place_ok = last_read == first_write && s == slot->second &&
                         UpdatesInPlace(*writer.defining, writer.index, id);
      if (!in_place_ok) return std::nullopt;
    }
  }
  return slot->second;
}

StatusOr<th::BufferSlice> ComputationEmitter::Slice(const hlo::HloInstruction* inst,
                                                    const ShapeIndex& index) const {
  KILN_ASSIGN_OR_RETURN(th::BufferSlice local, assignment_->SliceFor(inst, index));
  return ToProgram(local, inst);
}

StatusOr<th::BufferSlice> ComputationEmitter::ResultSlice(const ShapeIndex& index) const {
  KILN_ASSIGN_OR_RETURN(th::BufferSlice local, assignment_->ResultSlice(index));
  return ToProgram(local, comp_.root());
}

StatusOr<th::BufferSlice> ComputationEmitter::ToProgram(const th::BufferSlice& local,
                                                        const hlo::HloInstruction* inst) const {
  int32_t global = global_.at(local.allocation);
  if (global >= 0) return th::BufferSlice{global, local.offset, local.size};
  if (auto b = bound_.find(local.allocation); b != bound_.end())
    return th::BufferSlice{b->second.allocation, b->second.offset + local.offset, local.size};
  const th::Allocation& alloc = assignment_->allocations()[local.allocation];
  auto it = bindings_->find({alloc.parameter->number, alloc.parameter->index});
  if (it == bindings_->end())
    return Error(inst->DebugName() + ": parameter leaf " + ShapeIndexToString(alloc.parameter->index) +
                 " of " + comp_.name() + " is not bound by its caller");
  return th::BufferSlice{it->second.allocation, it->second.offset + local.offset, local.size};
}

// ---- the program ------------------------------------------------------------------

namespace {

Shape* MutableSubShape(Shape& shape, const ShapeIndex& index) {
  Shape* s = &shape;
  for (int64_t i : index) {
    if (!s->IsTuple() || i < 0 || i >= s->tuple_size()) return nullptr;
    s = &s->mutable_tuple_shapes()[i];
  }
  return s;
}

// DynamicPadder's record of the entry's dynamic dimensions, as leaves of the
// signature (thunks::DynamicDimension); the caller's shapes get their
// dynamic flags back.
Status AddDynamicDimensions(const hlo::HloModule& module, th::Signature& sig) {
  auto parameter_leaf = [&](int64_t number, const ShapeIndex& index) -> int64_t {
    for (size_t i = 0; i < sig.parameter_leaves.size(); ++i)
      if (sig.parameter_leaves[i].parameter_number == number && sig.parameter_leaves[i].index == index)
        return static_cast<int64_t>(i);
    return -1;
  };
  auto result_leaf = [&](const ShapeIndex& index) -> int64_t {
    for (size_t i = 0; i < sig.result_leaves.size(); ++i)
      if (sig.result_leaves[i].index == index) return static_cast<int64_t>(i);
    return -1;
  };
  for (const hlo::EntryDynamicDimension& d : module.config().entry_dynamic_dimensions) {
    th::DynamicDimension out{d.of_result, -1, d.dimension, -1};
    Shape* shape = nullptr;
    if (d.of_result) {
      ShapeIndex index{0};
      index.insert(index.end(), d.index.begin(), d.index.end());
      out.leaf = result_leaf(index);
      out.size_leaf = result_leaf({d.size_position});
      shape = MutableSubShape(sig.result, index);
    } else {
      out.leaf = parameter_leaf(d.parameter_number, d.index);
      out.size_leaf = parameter_leaf(d.size_position, {});
      if (d.parameter_number >= 0 && d.parameter_number < static_cast<int64_t>(sig.parameters.size()))
        shape = MutableSubShape(sig.parameters[d.parameter_number], d.index);
    }
    if (out.leaf < 0 || out.size_leaf < 0 || !shape || d.dimension >= shape->rank())
      return Error("entry dynamic dimension " + std::to_string(d.dimension) + " has no signature leaf");
    shape->set_dynamic_dim(d.dimension, true);
    sig.dynamic_dimensions.push_back(out);
  }
  return Status::Ok();
}

Status BuildSignature(const hlo::HloModule& module, const ComputationEmitter& entry, th::Signature& sig) {
  const hlo::HloComputation& comp = *module.entry();
  for (int64_t p = 0; p < comp.parameter_count(); ++p) {
    const hlo::HloInstruction* param = comp.parameter(p);
    if (!param) return Error("entry computation has no parameter " + std::to_string(p));
    // kiln buffers are dense row-major: the signature says so explicitly
    // whatever layout the HLO named.
    sig.parameters.push_back(passes::WithoutLayout(param->shape()));
    for (const ShapeIndex& index : ComputationEmitter::ArrayLeaves(param->shape())) {
      KILN_ASSIGN_OR_RETURN(th::BufferSlice slice, entry.Slice(param, index));
      sig.parameter_leaves.push_back({p, index, slice});
    }
  }
  sig.result = passes::WithoutLayout(comp.root()->shape());
  for (const ShapeIndex& index : ComputationEmitter::ArrayLeaves(sig.result)) {
    KILN_ASSIGN_OR_RETURN(th::BufferSlice slice, entry.ResultSlice(index));
    sig.result_leaves.push_back({index, slice});
  }
  for (const hlo::InputOutputAlias& a : module.config().input_output_alias)
    sig.aliases.push_back({a.output_index, a.parameter_number, a.parameter_index, a.must_alias});
  return AddDynamicDimensions(module, sig);
}

}  // namespace

StatusOr<EmittedProgram> EmitThunkProgram(const hlo::HloModule& module, const EmitOptions& emit) {
  if (!module.entry() || !module.entry()->root()) return Error("module has no entry computation");
  ProgramBuilder builder(emit);
  builder.program().replica_count = std::max<int64_t>(1, module.config().replica_count);
  builder.program().num_partitions = std::max<int64_t>(1, module.config().num_partitions);
  pipeline::BufferAssignmentOptions options;
  options.aliases = module.config().input_output_alias;
  options.concurrent_temps = emit.concurrent_temps;
  ComputationEmitter entry(builder, *module.entry(), std::nullopt, {}, std::move(options));
  KILN_RETURN_IF_ERROR(entry.Init());
  KILN_ASSIGN_OR_RETURN(builder.program().root, entry.Emit());
  KILN_RETURN_IF_ERROR(BuildSignature(module, entry, builder.program().signature));
  return std::move(builder.result());
}

std::string SupportedOpsSummary() {
  return "elementwise ops (reduce-precision too), bitcast-convert (one element width), map of elementwise "
         "computations, broadcast, reshape, bitcast, transpose, slice, concatenate, iota, convert, "
         "compare, select, clamp, reverse, pad, dynamic-slice, dynamic-update-slice, gather, scatter "
         "(also variadic), reduce (also variadic), reduce-window (also variadic), dot, convolution "
         "(f16/bf16/f32/f64 by cuDNN on CUDA; integer, pred and mixed types as kernels), fft "
         "(FFT/IFFT/RFFT/IRFFT; FFTW on the host, cuFFT on CUDA), cholesky and triangular-solve "
         "(f32/f64/c64/c128; LAPACK/BLAS on the host, cuSOLVER/cuBLAS on CUDA), tuple, "
         "get-tuple-element, call, async-start/done and copy-start/done (run synchronously), while, "
         "conditional, sort (any comparator; a kernel of its own), topk, rng-get-and-update-state, parameter, "
         "constant, all-reduce, all-gather, reduce-scatter, all-to-all, collective-permute, collective-broadcast "
         "(and the all-reduce, all-gather and collective-permute start/done pairs), replica-id, partition-id";
}

}  // namespace kiln::emitter
