// DynamicPadder: see dynamic_padder.h.
#include "compiler/passes/dynamic_padder.h"

#include <algorithm>
#include <memory>
#include <string>
#include <unordered_map>
#include <vector>

#include "compiler/passes/hlo_builder.h"

namespace kiln::passes {
namespace {

using hlo::HloComputation;
using hlo::HloInstruction;
using hlo::HloOpcode;

// The sizes of a value's dimensions (nullptr: static, the bound), or of a
// tuple's elements.
struct Sizes {
  std::vector<HloInstruction*> dims;
  std::vector<Sizes> elements;

  bool dynamic() const {
    for (const HloInstruction* d : dims)
      if (d) return true;
    for (const Sizes& e : elements)
      if (e.dynamic()) return true;
    return false;
  }
};

void ClearDynamic(Shape& shape) {
  for (int64_t i = 0; i < shape.rank(); ++i) shape.set_dynamic_dim(i, false);
  for (Shape& e : shape.mutable_tuple_shapes()) ClearDynamic(e);
}

Status RefuseDynamicOutsideEntry(const hlo::HloModule& module) {
  for (const HloComputation* comp : module.computations()) {
    if (comp == module.entry()) continue;
    for (const HloInstruction* inst : comp->instructions()) {
      if (inst->shape().is_dynamic())
        return Error(inst->DebugName() + ": bef-compile supports dynamic shapes only in the entry computation");
    }
  }
  return Status::Ok();
}

class Padder {
 public:
  explicit Padder(hlo::HloModule& module) : module_(module), entry_(*module.entry()), names_(module) {}

  Status Run() {
    const Shape declared_root = entry_.root()->shape();
    const std::vector<HloInstruction*> order = entry_.PostOrder();
    KILN_RETURN_IF_ERROR(AddSizeParameters());
    for (HloInstruction* inst : order) {
      if (inst->opcode() != HloOpcode::kParameter) KILN_RETURN_IF_ERROR(Visit(inst));
    }
    const Sizes root_sizes = SizesOf(entry_.root());
    for (HloInstruction* inst : passthrough_) {
      inst->ReplaceAllUsesWith(inst->operand(0));
      KILN_RETURN_IF_ERROR(entry_.RemoveInstruction(inst));
    }
    ReturnResultSizes(declared_root, root_sizes);
    for (HloInstruction* inst : entry_.instructions()) ClearDynamic(inst->mutable_shape());
    if (auto& layout = module_.config().entry_computation_layout) {
      layout->parameters = entry_.ParameterShapes();
      layout->result = entry_.root()->shape();
    }
    return Status::Ok();
  }

 private:
  // ---- the entry's edges ------------------------------------------------------

  // One trailing s32[] parameter per dynamic dimension of every parameter.
  Status AddSizeParameters() {
    const int64_t count = entry_.parameter_count();
    int64_t next = count;
    for (int64_t p = 0; p < count; ++p) {
      HloInstruction* param = entry_.parameter(p);
      ShapeIndex index;
      sizes_[param] = ParameterSizes(param, p, param->shape(), index, next);
    }
    return Status::Ok();
  }

  Sizes ParameterSizes(HloInstruction* param, int64_t p, const Shape& shape, ShapeIndex& index, int64_t& next) {
    Sizes s;
    if (shape.IsTuple()) {
      for (int64_t i = 0; i < shape.tuple_size(); ++i) {
        index.push_back(i);
        s.elements.push_back(ParameterSizes(param, p, shape.tuple_shape(i), index, next));
        index.pop_back();
      }
      return s;
    }
    s.dims.assign(shape.IsArray() ? shape.rank() : 0, nullptr);
    for (int64_t d = 0; d < static_cast<int64_t>(s.dims.size()); ++d) {
      if (!shape.is_dynamic_dim(d)) continue;
      auto size = std::make_unique<HloInstruction>(HloOpcode::kParameter,
                                                   names_.Get(param->name() + ".size" + std::to_string(d)),
                                                   Shape::Scalar(ElementType::kS32));
      size->set_parameter_number(next);
      s.dims[d] = entry_.AddInstruction(std::move(size));
      module_.config().entry_dynamic_dimensions.push_back({false, p, index, d, next});
      ++next;
    }
    return s;
  }

  // A root with dynamic dimensions becomes (root, sizes...).
  void ReturnResultSizes(const Shape& declared, const Sizes& sizes) {
    std::vector<HloInstruction*> elements{entry_.root()};
    ShapeIndex index;
    CollectResultSizes(declared, sizes, index, elements);
    if (elements.size() == 1) return;
    std::vector<Shape> shapes;
    for (const HloInstruction* e : elements) shapes.push_back(e->shape());
    HloInstruction* root = AddInstruction(entry_, HloOpcode::kTuple, Shape::Tuple(shapes), elements,
                                          names_.Get(entry_.root()->name() + ".with_sizes"));
    entry_.set_root(root);
    for (hlo::InputOutputAlias& a : module_.config().input_output_alias)
      a.output_index.insert(a.output_index.begin(), 0);
  }

  void CollectResultSizes(const Shape& declared, const Sizes& sizes, ShapeIndex& index,
                          std::vector<HloInstruction*>& elements) {
    if (declared.IsTuple()) {
      for (int64_t i = 0; i < declared.tuple_size(); ++i) {
        index.push_back(i);
        static const Sizes kStatic;
        const Sizes& e = i < static_cast<int64_t>(sizes.elements.size()) ? sizes.elements[i] : kStatic;
        CollectResultSizes(declared.tuple_shape(i), e, index, elements);
        index.pop_back();
      }
      return;
    }
    for (int64_t d = 0; d < (declared.IsArray() ? declared.rank() : 0); ++d) {
      if (!declared.is_dynamic_dim(d)) continue;
      HloInstruction* size = d < static_cast<int64_t>(sizes.dims.size()) ? sizes.dims[d] : nullptr;
      if (!size) size = Constant(declared.dim(d));
      module_.config().entry_dynamic_dimensions.push_back(
          {true, 0, index, d, static_cast<int64_t>(elements.size())});
      elements.push_back(size);
    }
  }

  // ---- one instruction --------------------------------------------------------

  Status Visit(HloInstruction* inst) {
    bool dynamic_operand = false;
    for (const HloInstruction* op : inst->operands()) dynamic_operand |= SizesOf(op).dynamic();
    switch (inst->opcode()) {
      case HloOpcode::kSetDimensionSize: return SetDimensionSize(inst);
      case HloOpcode::kGetDimensionSize: return GetDimensionSize(inst);
      case HloOpcode::kDynamicReshape: return Reshape(inst, DynamicReshapeSizes(inst));
      case HloOpcode::kReshape:
        if (!dynamic_operand && !inst->shape().is_dynamic()) return Status::Ok();
        {
          KILN_ASSIGN_OR_RETURN(std::vector<HloInstruction*> sizes, ReshapeSizes(inst));
          return Reshape(inst, sizes);
        }
      default: break;
    }
    if (!dynamic_operand && !inst->shape().is_dynamic()) return Status::Ok();
    if (hlo::IsElementwise(inst->opcode()) || inst->opcode() == HloOpcode::kBitcastConvert) {
      return Elementwise(inst);
    }
    switch (inst->opcode()) {
      case HloOpcode::kBroadcast: return Broadcast(inst);
      case HloOpcode::kTranspose: return Transpose(inst);
      case HloOpcode::kReduce: return Reduce(inst);
      case HloOpcode::kDot: return Dot(inst);
      case HloOpcode::kSlice: return Slice(inst);
      case HloOpcode::kTuple:
        for (const HloInstruction* op : inst->operands()) sizes_[inst].elements.push_back(SizesOf(op));
        return Status::Ok();
      case HloOpcode::kGetTupleElement: {
        const Sizes s = SizesOf(inst->operand(0));
        if (inst->tuple_index() < static_cast<int64_t>(s.elements.size()))
          sizes_[inst] = s.elements[inst->tuple_index()];
        return Status::Ok();
      }
      default:
        return Error(inst->DebugName() + ": bef-compile does not support " +
                     std::string(hlo::OpcodeName(inst->opcode())) + " on a dynamic dimension");
    }
  }

  Status SetDimensionSize(HloInstruction* inst) {
    Sizes s = SizesOf(inst->operand(0));
    const std::vector<int64_t> dims = inst->dimensions();
    if (dims.size() != 1 || dims[0] < 0 || dims[0] >= static_cast<int64_t>(s.dims.size()))
      return Error(inst->DebugName() + ": set-dimension-size needs one dimension of its operand");
    s.dims[dims[0]] = inst->operand(1);
    sizes_[inst] = s;
    passthrough_.push_back(inst);
    return Status::Ok();
  }

  Status GetDimensionSize(HloInstruction* inst) {
    const std::vector<int64_t> dims = inst->dimensions();
    const Sizes s = SizesOf(inst->operand(0));
    if (dims.size() != 1 || dims[0] < 0 || dims[0] >= static_cast<int64_t>(s.dims.size()))
      return Error(inst->DebugName() + ": get-dimension-size needs one dimension of its operand");
    if (HloInstruction* size = s.dims[dims[0]]) Replace(inst, size);
    return Status::Ok();  // static: the simplifier folds it to the bound
  }

  Status Elementwise(HloInstruction* inst) {
    Sizes& out = sizes_[inst];
    out.dims.assign(inst->shape().rank(), nullptr);
    for (const HloInstruction* op : inst->operands()) {
      const Sizes s = SizesOf(op);
      if (s.dims.size() != out.dims.size()) continue;  // a scalar clamp bound
      for (size_t d = 0; d < out.dims.size(); ++d)
        if (!out.dims[d]) out.dims[d] = s.dims[d];
    }
    return Status::Ok();
  }

  Status Broadcast(HloInstruction* inst) {
    const Sizes s = SizesOf(inst->operand(0));
    const std::vector<int64_t> at = inst->dimensions();
    Sizes& out = sizes_[inst];
    out.dims.assign(inst->shape().rank(), nullptr);
    for (size_t i = 0; i < at.size() && i < s.dims.size(); ++i) out.dims[at[i]] = s.dims[i];
    return Status::Ok();
  }

  Status Transpose(HloInstruction* inst) {
    const Sizes s = SizesOf(inst->operand(0));
    const std::vector<int64_t> perm = inst->dimensions();
    Sizes& out = sizes_[inst];
    for (int64_t p : perm) out.dims.push_back(s.dims[p]);
    return Status::Ok();
  }

  // Padding of a reduced dimension becomes the init value first.
  Status Reduce(HloInstruction* inst) {
    const int64_t n = inst->operand_count() / 2;
    const std::vector<int64_t> reduced = inst->dimensions();
    const Sizes s = SizesOf(inst->operand(0));
    for (int64_t i = 0; i < n; ++i) {
      HloInstruction* x = inst->operand(i);
      for (int64_t d : reduced)
        if (s.dims[d]) x = Mask(x, d, s.dims[d], inst->operand(n + i));
      if (x != inst->operand(i)) inst->ReplaceOperand(i, x);
    }
    Sizes kept;
    for (int64_t d = 0; d < static_cast<int64_t>(s.dims.size()); ++d)
      if (std::find(reduced.begin(), reduced.end(), d) == reduced.end()) kept.dims.push_back(s.dims[d]);
    if (inst->shape().IsTuple()) {
      sizes_[inst].elements.assign(n, kept);
    } else {
      sizes_[inst] = kept;
    }
    return Status::Ok();
  }

  // Padding of a contracted dimension becomes zero in both operands, so that
  // no padding value (even NaN) reaches a sum.
  Status Dot(HloInstruction* inst) {
    const hlo::DotDimensionNumbers dn = inst->dot_dimension_numbers();
    Sizes l = SizesOf(inst->operand(0)), r = SizesOf(inst->operand(1));
    HloInstruction* lhs = inst->operand(0);
    HloInstruction* rhs = inst->operand(1);
    for (size_t i = 0; i < dn.lhs_contracting.size(); ++i) {
      const int64_t ld = dn.lhs_contracting[i], rd = dn.rhs_contracting[i];
      HloInstruction* size = l.dims[ld] ? l.dims[ld] : r.dims[rd];
      if (!size) continue;
      lhs = Mask(lhs, ld, size, Constant(0, lhs->shape().element_type()));
      rhs = Mask(rhs, rd, size, Constant(0, rhs->shape().element_type()));
    }
    if (lhs != inst->operand(0)) inst->ReplaceOperand(0, lhs);
    if (rhs != inst->operand(1)) inst->ReplaceOperand(1, rhs);
    Sizes& out = sizes_[inst];
    for (size_t i = 0; i < dn.lhs_batch.size(); ++i)
      out.dims.push_back(l.dims[dn.lhs_batch[i]] ? l.dims[dn.lhs_batch[i]] : r.dims[dn.rhs_batch[i]]);
    auto free = [&](const Sizes& s, const std::vector<int64_t>& batch, const std::vector<int64_t>& contracting) {
      for (int64_t d = 0; d < static_cast<int64_t>(s.dims.size()); ++d)
        if (std::find(batch.begin(), batch.end(), d) == batch.end() &&
            std::find(contracting.begin(), contracting.end(), d) == contracting.end())
          out.dims.push_back(s.dims[d]);
    };
    free(l, dn.lhs_batch, dn.lhs_contracting);
    free(r, dn.rhs_batch, dn.rhs_contracting);
    return Status::Ok();
  }

  // slice [0:limit] of a dynamic dimension has size min(size, limit).
  Status Slice(HloInstruction* inst) {
    const Sizes s = SizesOf(inst->operand(0));
    const auto* slice = inst->GetAttribute<std::vector<hlo::SliceDim>>("slice");
    Sizes& out = sizes_[inst];
    out.dims.assign(s.dims.size(), nullptr);
    for (size_t d = 0; d < s.dims.size(); ++d) {
      if (!s.dims[d]) continue;
      if (!slice || d >= slice->size() || (*slice)[d].start != 0 || (*slice)[d].stride != 1)
        return Error(inst->DebugName() + ": bef-compile supports slices of a dynamic dimension only from 0 "
                     "with stride 1");
      out.dims[d] = Op(HloOpcode::kMinimum, Shape::Scalar(ElementType::kS32),
                       {s.dims[d], Constant((*slice)[d].limit)}, inst->name() + ".size");
    }
    return Status::Ok();
  }

  // ---- reshapes -----------------------------------------------------------------

  std::vector<HloInstruction*> DynamicReshapeSizes(HloInstruction* inst) {
    std::vector<HloInstruction*> out(inst->shape().rank(), nullptr);
    for (int64_t d = 0; d < inst->shape().rank(); ++d)
      if (inst->shape().is_dynamic_dim(d) && d + 1 < inst->operand_count()) out[d] = inst->operand(d + 1);
    return out;
  }

  // A plain reshape's output sizes: one dynamic output dimension takes the
  // logical element count over the other dimensions' bounds.
  StatusOr<std::vector<HloInstruction*>> ReshapeSizes(HloInstruction* inst) {
    const Shape& shape = inst->shape();
    std::vector<HloInstruction*> out(shape.rank(), nullptr);
    int64_t dynamic = -1, others = 1;
    for (int64_t d = 0; d < shape.rank(); ++d) {
      if (!shape.is_dynamic_dim(d)) {
        others *= shape.dim(d);
      } else if (dynamic >= 0) {
        return Error(inst->DebugName() + ": bef-compile supports a reshape to one dynamic dimension; use "
                     "dynamic-reshape");
      } else {
        dynamic = d;
      }
    }
    if (dynamic < 0) return out;
    out[dynamic] = Op(HloOpcode::kDivide, Shape::Scalar(ElementType::kS32),
                      {ElementCount(inst->operand(0)), Constant(std::max<int64_t>(others, 1))},
                      inst->name() + ".size");
    return out;
  }

  Status Reshape(HloInstruction* inst, const std::vector<HloInstruction*>& out_sizes) {
    HloInstruction* x = inst->operand(0);
    const Sizes in = SizesOf(x);
    Shape shape(inst->shape().element_type(), inst->shape().dims());
    HloInstruction* result = MajorOnlyDynamic(in.dims, out_sizes, x->shape(), shape)
                                 ? Op(HloOpcode::kReshape, shape, {x}, inst->name() + ".padded")
                                 : GatherReshape(inst, x, in.dims, shape, out_sizes);
    sizes_[result].dims = out_sizes;
    Replace(inst, result);
    return entry_.RemoveInstruction(inst);
  }

  // When at most the major dimension is dynamic on either side, the logical
  // elements are a row-major prefix of both bounds, so reshaping the bounds
  // moves every logical element where it belongs.
  static bool MajorOnlyDynamic(const std::vector<HloInstruction*>& in, const std::vector<HloInstruction*>& out,
                               const Shape& in_shape, const Shape& out_shape) {
    for (size_t d = 1; d < in.size(); ++d)
      if (in[d]) return false;
    for (size_t d = 1; d < out.size(); ++d)
      if (out[d]) return false;
    return in_shape.ElementCount() == out_shape.ElementCount();
  }

  // result[o] = x[in_index(L)] for the row-major position L of o among the
  // logical output elements.
  HloInstruction* GatherReshape(HloInstruction* inst, HloInstruction* x, const std::vector<HloInstruction*>& in,
                                const Shape& shape, const std::vector<HloInstruction*>& out) {
    const std::string base = inst->name();
    const std::vector<int64_t>& dims = shape.dims();
    const Shape positions(ElementType::kS32, dims);
    HloInstruction* linear = nullptr;
    HloInstruction* stride = Constant(1);
    for (int64_t d = shape.rank() - 1; d >= 0; --d) {
      HloInstruction* iota = Op(HloOpcode::kIota, positions, {}, base + ".position");
      iota->SetAttribute("iota_dimension", d);
      HloInstruction* term = Op(HloOpcode::kMultiply, positions, {iota, Splat(stride, dims)}, base + ".term");
      linear = linear ? Op(HloOpcode::kAdd, positions, {linear, term}, base + ".linear") : term;
      stride = Mul(stride, SizeOr(out[d], dims[d]));
    }
    if (!linear) linear = Splat(Constant(0), dims);
    const int64_t rank = x->shape().rank();
    std::vector<int64_t> index_dims = dims;
    index_dims.push_back(1);
    std::vector<HloInstruction*> indices;
    HloInstruction* in_stride = Constant(1);
    std::vector<HloInstruction*> in_strides(rank);
    for (int64_t d = rank - 1; d >= 0; --d) {
      in_strides[d] = in_stride;
      in_stride = Mul(in_stride, SizeOr(in[d], x->shape().dim(d)));
    }
    for (int64_t d = 0; d < rank; ++d) {
      HloInstruction* q = Op(HloOpcode::kDivide, positions, {linear, Splat(AtLeastOne(in_strides[d]), dims)},
                             base + ".quotient");
      HloInstruction* i = Op(HloOpcode::kRemainder, positions,
                             {q, Splat(AtLeastOne(SizeOr(in[d], x->shape().dim(d))), dims)}, base + ".index");
      indices.push_back(Op(HloOpcode::kReshape, Shape(ElementType::kS32, index_dims), {i}, base + ".index"));
    }
    HloInstruction* start = indices.size() == 1
                                ? indices[0]
                                : Op(HloOpcode::kConcatenate,
                                     Shape(ElementType::kS32, [&] {
                                       std::vector<int64_t> v = dims;
                                       v.push_back(rank);
                                       return v;
                                     }()),
                                     indices, base + ".indices");
    if (indices.size() > 1) start->SetAttribute("dimensions", std::vector<int64_t>{shape.rank()});
    std::vector<int64_t> all(rank);
    for (int64_t d = 0; d < rank; ++d) all[d] = d;
    HloInstruction* g = Op(HloOpcode::kGather, shape, {x, start}, base + ".padded");
    g->SetAttribute("offset_dims", std::vector<int64_t>{});
    g->SetAttribute("collapsed_slice_dims", all);
    g->SetAttribute("start_index_map", all);
    g->SetAttribute("index_vector_dim", shape.rank());
    g->SetAttribute("slice_sizes", std::vector<int64_t>(rank, 1));
    return g;
  }

  // ---- helpers ------------------------------------------------------------------

  Sizes SizesOf(const HloInstruction* inst) {
    auto it = sizes_.find(inst);
    if (it != sizes_.end()) return it->second;
    Sizes s;
    if (inst->shape().IsArray()) s.dims.assign(inst->shape().rank(), nullptr);
    return s;
  }

  HloInstruction* ElementCount(const HloInstruction* x) {
    const Sizes s = SizesOf(x);
    HloInstruction* n = Constant(1);
    for (int64_t d = 0; d < x->shape().rank(); ++d) n = Mul(n, SizeOr(s.dims[d], x->shape().dim(d)));
    return n;
  }

  void Replace(HloInstruction* inst, HloInstruction* with) { inst->ReplaceAllUsesWith(with); }

  // select(iota along d < size, x, fill): x with its padding along d replaced.
  HloInstruction* Mask(HloInstruction* x, int64_t d, HloInstruction* size, HloInstruction* fill) {
    const std::vector<int64_t>& dims = x->shape().dims();
    HloInstruction* iota = Op(HloOpcode::kIota, Shape(ElementType::kS32, dims), {}, x->name() + ".position");
    iota->SetAttribute("iota_dimension", d);
    HloInstruction* inside = Op(HloOpcode::kCompare, Shape(ElementType::kPred, dims), {iota, Splat(size, dims)},
                                x->name() + ".inside");
    inside->SetAttribute("direction", hlo::EnumAttr{"LT"});
    return Op(HloOpcode::kSelect, Shape(x->shape().element_type(), dims), {inside, x, Splat(fill, dims)},
              x->name() + ".unpadded");
  }

  HloInstruction* SizeOr(HloInstruction* size, int64_t bound) { return size ? size : Constant(bound); }

  HloInstruction* AtLeastOne(HloInstruction* v) {
    return Op(HloOpcode::kMaximum, Shape::Scalar(ElementType::kS32), {v, Constant(1)}, "size.nonzero");
  }

  HloInstruction* Mul(HloInstruction* a, HloInstruction* b) {
    return Op(HloOpcode::kMultiply, Shape::Scalar(ElementType::kS32), {a, b}, "size.product");
  }

  HloInstruction* Splat(HloInstruction* scalar, const std::vector<int64_t>& dims) {
    HloInstruction* b = Op(HloOpcode::kBroadcast, Shape(scalar->shape().element_type(), dims), {scalar},
                           scalar->name() + ".broadcast");
    b->SetAttribute("dimensions", std::vector<int64_t>{});
    return b;
  }

  HloInstruction* Constant(int64_t value, ElementType type = ElementType::kS32) {
    return AddScalarConstant(entry_, type, static_cast<double>(value), names_.Get("size.constant"));
  }

  HloInstruction* Op(HloOpcode opcode, const Shape& shape, const std::vector<HloInstruction*>& operands,
                     const std::string& name) {
    return AddInstruction(entry_, opcode, shape, operands, names_.Get(name));
  }

  hlo::HloModule& module_;
  HloComputation& entry_;
  NameUniquer names_;
  std::unordered_map<const HloInstruction*, Sizes> sizes_;
  // set-dimension-size instructions, replaced by their data at the end (their
  // sizes are looked up by instruction while users are visited).
  std::vector<HloInstruction*> passthrough_;
};

bool MentionsDynamicShapes(const HloComputation& entry) {
  for (const HloInstruction* inst : entry.instructions()) {
    if (inst->shape().is_dynamic() || inst->opcode() == HloOpcode::kSetDimensionSize ||
        inst->opcode() == HloOpcode::kDynamicReshape)
      return true;
  }
  return false;
}

}  // namespace

StatusOr<bool> DynamicPadder::Run(hlo::HloModule& module) {
  KILN_RETURN_IF_ERROR(RefuseDynamicOutsideEntry(module));
  if (!module.entry() || !MentionsDynamicShapes(*module.entry())) return false;
  Padder padder(module);
  KILN_RETURN_IF_ERROR(padder.Run());
  return true;
}

}  // namespace kiln::passes
