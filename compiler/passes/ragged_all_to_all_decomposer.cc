// RaggedAllToAllDecomposer: see ragged_all_to_all_decomposer.h.
#include "compiler/passes/ragged_all_to_all_decomposer.h"

#include <string>
#include <vector>

#include "compiler/passes/hlo_builder.h"

namespace kiln::passes {
namespace {

using hlo::HloInstruction;
using hlo::HloOpcode;

// (x, y) -> y: a scatter that overwrites.
hlo::HloComputation* AddOverwrite(hlo::HloModule& module, NameUniquer& names, ElementType type) {
  const std::string base = names.Get("ragged_overwrite");
  auto comp = std::make_unique<hlo::HloComputation>(base);
  Shape scalar(type, {});
  HloInstruction* last = nullptr;
  for (int64_t i = 0; i < 2; ++i) {
    auto p = std::make_unique<HloInstruction>(HloOpcode::kParameter, names.Get(base + "_p"), scalar);
    p->set_parameter_number(i);
    last = comp->AddInstruction(std::move(p));
  }
  comp->set_root(last);
  return module.AddComputation(std::move(comp));
}

StatusOr<HloInstruction*> Decompose(HloInstruction* ragged, NameUniquer& names) {
  hlo::HloComputation& comp = *ragged->parent();
  const std::string base = ragged->name();
  if (ragged->operand_count() != 6) return Error(ragged->DebugName() + ": ragged-all-to-all takes 6 operands");
  HloInstruction* input = ragged->operand(0);
  HloInstruction* output = ragged->operand(1);
  HloInstruction* input_offsets = ragged->operand(2);
  HloInstruction* output_offsets = ragged->operand(4);
  HloInstruction* recv_sizes = ragged->operand(5);
  const Shape& in = input->shape();
  const Shape& out = output->shape();
  const Shape& offsets = input_offsets->shape();
  if (!in.IsArray() || !out.IsArray() || in.rank() < 1 || in.rank() != out.rank() || !offsets.IsArray() ||
      offsets.rank() != 1)
    return Error(ragged->DebugName() + ": needs array input and output of one rank and 1-D offsets");
  for (int64_t i = 2; i < 6; ++i)
    if (ragged->operand(i)->shape().dims() != offsets.dims() ||
        ragged->operand(i)->shape().element_type() != offsets.element_type())
      return Error(ragged->DebugName() + ": offsets and sizes must have one shape");
  const int64_t n = offsets.dim(0);
  // One offset per participant (XLA also allows several, its multi-update form).
  int64_t group_size = comp.parent()->config().replica_count;
  if (const auto* groups = ragged->GetAttribute<hlo::ReplicaGroups>("replica_groups"); groups && !groups->groups.empty())
    group_size = static_cast<int64_t>(groups->groups[0].size());
  else if (ragged->HasAttribute("channel_id"))
    group_size = comp.parent()->config().num_partitions;
  if (group_size != n)
    return Error(ragged->DebugName() + ": bef-compile supports one offset per participant (" +
                 std::to_string(group_size) + "), not " + std::to_string(n));
  const int64_t rows = in.dim(0);
  const ElementType index_type = offsets.element_type();
  std::vector<int64_t> inner(in.dims().begin() + 1, in.dims().end());
  auto op = [&](HloOpcode opcode, const Shape& shape, std::vector<HloInstruction*> operands, const std::string& what) {
    return AddInstruction(comp, opcode, shape, operands, names.Get(base + "." + what));
  };
  const Shape grid(index_type, {n, rows});
  auto broadcast_rows = [&](HloInstruction* per_peer, const std::string& what) {
    HloInstruction* b = op(HloOpcode::kBroadcast, grid, {per_peer}, what);
    b->SetAttribute("dimensions", std::vector<int64_t>{0});
    return b;
  };
  HloInstruction* r = op(HloOpcode::kIota, grid, {}, "row");
  r->SetAttribute("iota_dimension", int64_t{1});

  // 1. The n x R rows from each input offset.
  HloInstruction* starts =
      op(HloOpcode::kAdd, grid, {broadcast_rows(input_offsets, "input_offsets"), r}, "input_rows");
  std::vector<int64_t> chunk_dims = {n, rows};
  chunk_dims.insert(chunk_dims.end(), inner.begin(), inner.end());
  const Shape chunk_shape(in.element_type(), chunk_dims);
  HloInstruction* chunks = op(HloOpcode::kGather, chunk_shape, {input, starts}, "chunks");
  std::vector<int64_t> offset_dims, slice_sizes = {1};
  for (size_t d = 0; d < inner.size(); ++d) {
    offset_dims.push_back(static_cast<int64_t>(d) + 2);
    slice_sizes.push_back(inner[d]);
  }
  chunks->SetAttribute("offset_dims", offset_dims);
  chunks->SetAttribute("collapsed_slice_dims", std::vector<int64_t>{0});
  chunks->SetAttribute("start_index_map", std::vector<int64_t>{0});
  chunks->SetAttribute("index_vector_dim", int64_t{2});
  chunks->SetAttribute("slice_sizes", slice_sizes);

  // 2. Every participant's chunk for this device, and where it goes.
  auto all_to_all = [&](HloInstruction* x, const std::string& what) {
    HloInstruction* a = op(HloOpcode::kAllToAll, x->shape(), {x}, what);
    a->SetAttribute("dimensions", std::vector<int64_t>{0});
    for (const char* name : {"replica_groups", "channel_id"})
      if (const hlo::Attribute* attr = ragged->FindAttribute(name)) a->SetAttribute(name, attr->value);
    return a;
  };
  HloInstruction* received = all_to_all(chunks, "received");
  HloInstruction* placed_at = all_to_all(output_offsets, "placed_at");

  // 3. Row placed_at[i] + r of the output for r < recv_sizes[i], else row O.
  HloInstruction* targets = op(HloOpcode::kAdd, grid, {broadcast_rows(placed_at, "placed_at"), r}, "targets");
  HloInstruction* kept = op(HloOpcode::kCompare, Shape(ElementType::kPred, {n, rows}),
                            {r, broadcast_rows(recv_sizes, "recv_sizes")}, "kept");
  kept->SetAttribute("direction", hlo::EnumAttr{"LT"});
  HloInstruction* beyond = AddSplat(comp, grid, static_cast<double>(out.dim(0)), names, base + ".beyond");
  HloInstruction* rows_at = op(HloOpcode::kSelect, grid, {kept, targets, beyond}, "rows_at");
  HloInstruction* result = op(HloOpcode::kScatter, WithoutLayout(out), {output, rows_at, received}, "result");
  std::vector<int64_t> window_dims;
  for (size_t d = 0; d < inner.size(); ++d) window_dims.push_back(static_cast<int64_t>(d) + 2);
  result->SetAttribute("update_window_dims", window_dims);
  result->SetAttribute("inserted_window_dims", std::vector<int64_t>{0});
  result->SetAttribute("scatter_dims_to_operand_dims", std::vector<int64_t>{0});
  result->SetAttribute("index_vector_dim", int64_t{2});
  result->SetAttribute("to_apply",
                       hlo::ComputationRefs{{AddOverwrite(*comp.parent(), names, out.element_type())}});
  return result;
}

}  // namespace

StatusOr<bool> RaggedAllToAllDecomposer::Run(hlo::HloModule& module) {
  return ExpandInstructions(
      module, [](const HloInstruction& inst) { return inst.opcode() == HloOpcode::kRaggedAllToAll; }, Decompose);
}

}  // namespace kiln::passes
