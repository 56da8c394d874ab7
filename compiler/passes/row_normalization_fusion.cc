// RowNormalizationFusion (see row_normalization_fusion.h).
#include "compiler/passes/row_normalization_fusion.h"

#include <algorithm>
#include <memory>
#include <set>
#include <string>
#include <unordered_map>
#include <unordered_set>

#include "compiler/hlo/opcode.h"
#include "compiler/passes/fusible_ops.h"
#include "compiler/passes/hlo_builder.h"
#include "compiler/passes/priority_fusion.h"
#include "compiler/passes/row_normalization.h"
#include "compiler/passes/sequential_computations.h"

namespace kiln::passes {
namespace {

using hlo::HloComputation;
using hlo::HloInstruction;
using hlo::HloOpcode;

bool HasControlEdges(const HloInstruction& inst) {
  return !inst.control_predecessors().empty() || !inst.control_successors().empty();
}

// Free to move into a kernel: a kernel op without control edges, not a
// value cloned into its users anyway, and not an in-place update target.
bool Movable(const HloInstruction& inst) {
  return IsKernelOp(inst) && !HasControlEdges(inst) && inst.shape().IsArray() && !IsDuplicable(inst) &&
         !IsInPlaceTarget(inst) && inst.opcode() != HloOpcode::kParameter &&
         inst.opcode() != HloOpcode::kConstant;
}

bool IsComplexReduce(const HloInstruction& inst) {
  return inst.opcode() == HloOpcode::kReduce && IsComplex(inst.shape().element_type());
}

// A producer computed per element of the rows: an elementwise op or a
// reshape at the element level, a broadcast to it (of anything: a scale
// vector, a scalar), a sibling reduce of the same view, or a cheap
// elementwise op of another shape (the convert of a scale vector), which
// the broadcasts above it repeat per element.
bool IsRowProducer(const HloInstruction& inst, const RowShape& row) {
  if (!Movable(inst) || IsComplexReduce(inst)) return false;
  if (inst.opcode() == HloOpcode::kReduce) return KeepsRows(inst, row);
  if (LevelOf(inst.shape(), row) != RowLevel::kElement)
    return hlo::IsElementwise(inst.opcode()) && IsCheapToRepeat(inst);
  if (inst.opcode() == HloOpcode::kBroadcast) return true;
  if (inst.opcode() == HloOpcode::kReshape) return LevelOf(inst.operand(0)->shape(), row) == RowLevel::kElement;
  return hlo::IsElementwise(inst.opcode());
}

// One candidate fusion, grown from a row reduction.
class Candidate {
 public:
  Candidate(HloComputation& comp, const RowShape& row) : comp_(comp), row_(row) {}

  void Grow(HloInstruction* seed) {
    Add(seed, /*duplicate=*/false, /*row_dependent=*/true);
    for (bool changed = true; changed;) {
      changed = false;
      std::vector<HloInstruction*> snapshot = members_;
      for (HloInstruction* m : snapshot) {
        // Users of the reduces' results that keep rows.
        if (row_dependent_.count(m)) {
          for (HloInstruction* u : m->users()) {
            if (Contains(u) || !Movable(*u) || IsComplexReduce(*u) || !KeepsRows(*u, row_)) continue;
            Add(u, false, true);
            changed = true;
          }
        }
        // Producers computed per element (not from members: those are
        // users above).
        for (HloInstruction* op : m->operands()) {
          if (Contains(op) || !IsRowProducer(*op, row_)) continue;
          bool from_members = false;
          for (const HloInstruction* o : op->operands()) from_members |= Contains(o);
          if (from_members) continue;
          bool reduce = op->opcode() == HloOpcode::kReduce;
          // Read elsewhere: duplicated when cheap and every other reader is a
          // kernel op that can compute it too; else an extra output (a value
          // the root or a library call reads is written anyway).
          bool read_elsewhere = false, materialized = op == comp_.root();
          for (const HloInstruction* u : op->users()) {
            if (Contains(u) && !duplicates_.count(u)) continue;
            read_elsewhere = true;
            materialized |= !Contains(u) && !IsKernelOp(*u);
          }
          bool duplicate = read_elsewhere && !materialized && !reduce && IsCheapToRepeat(*op);
          // Repeating it would read more arrays than its value (a residual
          // stream's chain of adds): it stays outside.
          if (duplicate && NewReads(*op) > 1) continue;
          Add(op, duplicate, reduce);
          changed = true;
        }
      }
    }
    // A duplicate stays outside reading its operands: it cannot read a
    // member that moves into the fusion, so such a one moves too (its
    // other readers then read the fusion's output).
    for (bool changed = true; changed;) {
      changed = false;
      for (HloInstruction* m : members_) {
        if (!duplicates_.count(m)) continue;
        for (const HloInstruction* op : m->operands())
          if (Contains(op) && !duplicates_.count(op)) {
            duplicates_.erase(m);
            changed = true;
            break;
          }
      }
    }
  }

  // Drops members that read a value computed from the candidate's own
  // members outside it (fused, that would be a cycle), and every member
  // computed from them. False when the seed goes too.
  bool RemoveCycles(const HloInstruction* seed) {
    for (;;) {
      std::unordered_set<const HloInstruction*> below;  // non-members computed from members
      std::vector<const HloInstruction*> stack;
      for (const HloInstruction* m : members_) {
        if (duplicates_.count(m)) continue;  // its readers outside keep the original
        for (const HloInstruction* u : m->users())
          if (!Contains(u)) stack.push_back(u);
      }
      while (!stack.empty()) {
        const HloInstruction* x = stack.back();
        stack.pop_back();
        if (!below.insert(x).second) continue;
        for (const HloInstruction* u : x->users()) stack.push_back(u);
      }
      std::unordered_set<const HloInstruction*> drop;
      for (const HloInstruction* m : members_)
        for (const HloInstruction* op : m->operands())
          if (!Contains(op) && below.count(op)) drop.insert(m);
      if (drop.empty()) return true;
      // ... and the members computed from them.
      std::vector<const HloInstruction*> down(drop.begin(), drop.end());
      while (!down.empty()) {
        const HloInstruction* x = down.back();
        down.pop_back();
        for (const HloInstruction* u : x->users())
          if (Contains(u) && drop.insert(u).second) down.push_back(u);
      }
      if (drop.count(seed)) return false;
      std::vector<HloInstruction*> kept;
      for (HloInstruction* m : members_)
        if (!drop.count(m)) kept.push_back(m);
      members_ = std::move(kept);
      member_set_.clear();
      member_set_.insert(members_.begin(), members_.end());
    }
  }

  // Outlines the candidate into a fusion when its computation is a row
  // normalization. Returns whether it did.
  StatusOr<bool> Outline(hlo::HloModule& module, NameUniquer& names) {
    std::vector<HloInstruction*> order;  // members in post order
    for (HloInstruction* inst : comp_.PostOrder())
      if (Contains(inst)) order.push_back(inst);
    std::vector<HloInstruction*> outputs;
    for (HloInstruction* m : order) {
      if (duplicates_.count(m)) continue;
      bool read_elsewhere = m == comp_.root();
      for (const HloInstruction* u : m->users()) read_elsewhere |= !Contains(u);
      if (read_elsewhere) outputs.push_back(m);
    }
    if (outputs.empty()) return false;
    HloInstruction* seed_like = outputs.back();
    auto fused = std::make_unique<HloComputation>(names.Get("fused_" + seed_like->name()));
    std::vector<HloInstruction*> operands;
    std::unordered_map<const HloInstruction*, HloInstruction*> map;
    for (HloInstruction* m : order) {
      std::vector<HloInstruction*> new_operands;
      for (HloInstruction* op : m->operands()) new_operands.push_back(Inside(op, *fused, map, operands, names));
      // A moved member keeps its name (profiles name the input's
      // instructions); a duplicated one leaves it to the original.
      std::string name = duplicates_.count(m) ? names.Get(m->name()) : m->name();
      map[m] = fused->AddInstruction(m->CloneWithOperands(new_operands, std::move(name)));
    }
    HloInstruction* root;
    if (outputs.size() == 1) {
      root = map.at(outputs[0]);
    } else {
      std::vector<HloInstruction*> elements;
      std::vector<Shape> shapes;
      for (HloInstruction* out : outputs) {
        elements.push_back(map.at(out));
        shapes.push_back(out->shape());
      }
      root = AddInstruction(*fused, HloOpcode::kTuple, Shape::Tuple(shapes), elements,
                            names.Get(seed_like->name() + ".outputs"));
    }
    fused->set_root(root);
    if (!AnalyzeRowNormalization(*fused)) return false;
    HloComputation* callee = module.AddComputation(std::move(fused));
    HloInstruction* fusion = AddInstruction(comp_, HloOpcode::kFusion, root->shape(), operands,
                                            names.Get(seed_like->name() + ".fusion"));
    fusion->set_location(seed_like->location());
    fusion->SetAttribute("kind", hlo::EnumAttr{"kInput"});
    fusion->SetAttribute("calls", hlo::ComputationRefs{{callee}});
    if (const hlo::Attribute* md = seed_like->FindAttribute("metadata")) fusion->SetAttribute("metadata", md->value);
    if (outputs.size() == 1) {
      outputs[0]->ReplaceAllUsesWith(fusion);
    } else {
      for (size_t i = 0; i < outputs.size(); ++i) {
        HloInstruction* element = AddInstruction(comp_, HloOpcode::kGetTupleElement, outputs[i]->shape(), {fusion},
                                                 names.Get(outputs[i]->name() + ".element"));
        element->SetAttribute("index", static_cast<int64_t>(i));
        outputs[i]->ReplaceAllUsesWith(element);
      }
    }
    for (auto it = order.rbegin(); it != order.rend(); ++it)
      if (!duplicates_.count(*it)) KILN_RETURN_IF_ERROR(comp_.RemoveInstruction(*it));
    return true;
  }

 private:
  bool Contains(const HloInstruction* inst) const { return member_set_.count(inst) > 0; }

  // The arrays the candidate would read besides what it reads now if it
  // computed `op` inside: the operands of `op` no member reads (cloned
  // scalars and iotas read nothing).
  int64_t NewReads(const HloInstruction& op) const {
    int64_t n = 0;
    for (const HloInstruction* o : op.operands()) {
      if (IsDuplicable(*o) || !o->shape().IsArray()) continue;
      bool read = false;
      for (const HloInstruction* u : o->users()) read |= Contains(u);
      n += !read;
    }
    return n;
  }

  void Add(HloInstruction* inst, bool duplicate, bool row_dependent) {
    members_.push_back(inst);
    member_set_.insert(inst);
    if (duplicate) duplicates_.insert(inst);
    if (row_dependent) row_dependent_.insert(inst);
  }

  // The value of external `op` inside the fusion: a clone of a duplicable
  // value (a scalar constant, an iota, their broadcasts), else a parameter.
  HloInstruction* Inside(HloInstruction* op, HloComputation& body,
                         std::unordered_map<const HloInstruction*, HloInstruction*>& map,
                         std::vector<HloInstruction*>& operands, NameUniquer& names) {
    auto it = map.find(op);
    if (it != map.end()) return it->second;
    HloInstruction* value;
    if (IsDuplicable(*op) && !IsInPlaceTarget(*op)) {
      std::vector<HloInstruction*> inner;
      for (HloInstruction* o : op->operands()) inner.push_back(Inside(o, body, map, operands, names));
      value = body.AddInstruction(op->CloneWithOperands(inner, names.Get(op->name())));
    } else {
      auto param = std::make_unique<HloInstruction>(
          HloOpcode::kParameter, names.Get("param_" + std::to_string(operands.size())), op->shape());
      param->set_parameter_number(static_cast<int64_t>(operands.size()));
      value = body.AddInstruction(std::move(param));
      operands.push_back(op);
    }
    map[op] = value;
    return value;
  }

  HloComputation& comp_;
  const RowShape& row_;
  std::vector<HloInstruction*> members_;
  std::unordered_set<const HloInstruction*> member_set_;
  std::unordered_set<const HloInstruction*> duplicates_;     // members that also stay outside
  std::unordered_set<const HloInstruction*> row_dependent_;  // the reduces and what uses their results
};

// Forms row-normalization fusions in `comp` until no row reduction left
// starts one.
StatusOr<bool> RunOnComputation(HloComputation& comp, hlo::HloModule& module, NameUniquer& names) {
  bool changed = false;
  std::set<std::string> tried;  // seeds, by name (outlining deletes instructions)
  for (bool formed = true; formed;) {
    formed = false;
    for (HloInstruction* inst : comp.PostOrder()) {
      if (inst->opcode() != HloOpcode::kReduce || !Movable(*inst) || IsComplexReduce(*inst) ||
          !tried.insert(inst->name()).second)
        continue;
      std::optional<RowShape> row = RowReductionShape(*inst);
      if (!row) continue;
      Candidate candidate(comp, *row);
      candidate.Grow(inst);
      if (!candidate.RemoveCycles(inst)) continue;
      KILN_ASSIGN_OR_RETURN(formed, candidate.Outline(module, names));
      if (formed) {
        changed = true;
        break;  // the computation changed: look again
      }
    }
  }
  return changed;
}

}  // namespace

StatusOr<bool> RowNormalizationFusion::Run(hlo::HloModule& module) {
  if (!module.entry()) return Error("module has no entry computation");
  NameUniquer names(module);
  bool changed = false;
  for (HloComputation* comp : SequentialComputations(module)) {
    KILN_ASSIGN_OR_RETURN(bool c, RunOnComputation(*comp, module, names));
    changed |= c;
  }
  return changed;
}

}  // namespace kiln::passes
