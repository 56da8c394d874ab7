// Multi-output fusion (XLA's MultiOutputFusion), two passes sharing one
// merge:
//   * SiblingFusion: two loop kernels with the same output dimensions that
//     both read a large buffer become one kernel with a tuple of outputs,
//     so the buffer is read once per element instead of once per kernel.
//     Kernels are merged only when neither depends on the other, so the
//     merged kernel can run where both could.
//   * MultiOutputFusion: a kernel whose value is read by a consumer kernel
//     and by others is computed inside the consumer, which also outputs it,
//     when the roofline time saved is positive and no other path joins
//     them (that would be a cycle).
// Kernels whose root codegen must see (a tiled transpose hero, at the root
// or under an epilogue: FindTiledTransposeHero; an in-place update) are
// never merged: a tuple root would hide it. Neither are row
// normalizations (row_normalization.h), whose structure codegen needs.
#include <algorithm>
#include <map>
#include <unordered_map>
#include <unordered_set>

#include "compiler/analysis/hlo_cost_analysis.h"
#include "compiler/passes/fusible_ops.h"
#include "compiler/passes/fusion_decisions.h"
#include "compiler/passes/hlo_builder.h"
#include "compiler/passes/passes.h"
#include "compiler/passes/row_normalization.h"
#include "compiler/passes/sequential_computations.h"

namespace kiln::passes {
namespace {

using hlo::HloComputation;
using hlo::HloInstruction;
using hlo::HloOpcode;

// Buffers smaller than this are cheap to read twice; merging for them
// would only make kernels bigger.
constexpr int64_t kMinSharedBytes = 1024;
// Bound on the dependence search between two candidates (instructions
// visited); beyond it the pair is not merged.
constexpr int64_t kMaxSearch = 4096;

// The outputs of a fusion: its root's tuple elements, or the root.
std::vector<HloInstruction*> Outputs(const HloComputation& body) {
  if (body.root()->opcode() == HloOpcode::kTuple) return body.root()->operands();
  return {body.root()};
}

// Roofline seconds of one kernel launch doing `cost`'s work.
double KernelSeconds(const analysis::HloCost& cost, const FusionOptions& options) {
  return passes::KernelSeconds(cost.bytes_accessed(), cost.flops, cost.transcendentals, options);
}

class Merger {
 public:
  Merger(HloComputation& comp, hlo::HloModule& module, NameUniquer& names, const FusionOptions& options)
      : comp_(comp), module_(module), names_(names), options_(options) {}

  // Rounds of merging until none applies; within a round every fusion takes
  // part in at most one merge, so a round is one linear scan.
  StatusOr<bool> RunSiblings() {
    bool changed = false;
    for (bool merged = true; merged;) {
      merged = false;
      Index();
      for (size_t k = 0; k < order_.size(); ++k) {
        HloInstruction* shared = order_[k];
        // Fusions merged this round are deleted: never touch them again.
        if (consumed_.count(shared)) continue;
        if (!shared->shape().IsArray() || shared->shape().ByteSize() < kMinSharedBytes) continue;
        std::vector<HloInstruction*> users;
        for (HloInstruction* u : shared->users())
          if (Available(u) && std::find(users.begin(), users.end(), u) == users.end()) users.push_back(u);
        std::sort(users.begin(), users.end(),
                  [&](const HloInstruction* a, const HloInstruction* b) { return position_[a] < position_[b]; });
        for (size_t i = 0; i < users.size(); ++i) {
          if (consumed_.count(users[i])) continue;
          for (size_t j = i + 1; j < users.size(); ++j) {
            if (consumed_.count(users[j]) || !CanMergeSiblings(users[i], users[j])) continue;
            double saved = shared->shape().ByteSize() / options_.target.bytes_per_second + options_.kernel_launch_seconds;
            ForgetPositionsBeforeMerge(users[i], users[j]);
            KILN_RETURN_IF_ERROR(Merge(users[i], users[j], saved));
            merged = changed = true;
            break;
          }
        }
      }
    }
    return changed;
  }

  // Producer-consumer rounds: a fusion with users besides one consumer
  // fusion is merged into it (the producer first among the outputs).
  StatusOr<bool> RunProducerConsumer() {
    bool changed = false;
    for (bool merged = true; merged;) {
      merged = false;
      Index();
      for (HloInstruction* producer : order_) {
        if (!Available(producer) || producer->shape().IsTuple() || producer->user_count() < 2) continue;
        std::vector<HloInstruction*> consumers;
        for (HloInstruction* u : producer->users())
          if (Available(u) && u != producer && std::find(consumers.begin(), consumers.end(), u) == consumers.end())
            consumers.push_back(u);
        HloInstruction* best = nullptr;
        double best_saved = 0;
        for (HloInstruction* c : consumers) {
          double saved = ProducerConsumerSaving(producer, c);
          if (saved > best_saved) best = c, best_saved = saved;
        }
        // Only other uses make it worth an extra output; a producer used by
        // its consumer alone was left unfused by KernelFusion on purpose.
        if (!best || std::all_of(producer->users().begin(), producer->users().end(),
                                 [&](const HloInstruction* u) { return u == best; }))
          continue;
        ForgetPositionsBeforeMerge(producer, best);
        KILN_RETURN_IF_ERROR(Merge(producer, best, best_saved));
        merged = changed = true;
      }
    }
    return changed;
  }

 private:
  void Index() {
    order_ = comp_.PostOrder();
    position_.clear();
    consumed_.clear();
    for (size_t i = 0; i < order_.size(); ++i) position_[order_[i]] = static_cast<int64_t>(i);
  }

  // Before `early` and `late` merge: the merged fusion reads both operand
  // lists, so users of `early` placed before `late` (and their users placed
  // before `late`) come to depend on `late`'s operands, and their positions
  // stop being a topological order. Forgets them: the dependence search
  // prunes by position, and an unknown position counts as a dependence.
  void ForgetPositionsBeforeMerge(const HloInstruction* early, const HloInstruction* late) {
    if (position_.at(early) > position_.at(late)) std::swap(early, late);
    const int64_t limit = position_.at(late);
    std::vector<const HloInstruction*> stack{early};
    while (!stack.empty()) {
      const HloInstruction* x = stack.back();
      stack.pop_back();
      for (const HloInstruction* u : x->users()) {
        auto it = position_.find(u);
        if (u == late || it == position_.end() || it->second >= limit) continue;
        position_.erase(it);
        stack.push_back(u);
      }
    }
  }

  // A mergeable fusion not touched by a merge this round (checked first:
  // merged fusions are deleted).
  bool Available(const HloInstruction* inst) const {
    return !consumed_.count(inst) && position_.count(inst) && IsMergeable(*inst);
  }

  static bool IsMergeable(const HloInstruction& inst) {
    if (inst.opcode() != HloOpcode::kFusion) return false;
    const HloComputation* body = inst.called_computation("calls");
    if (!body || !body->root() || inst.control_successors().size() || inst.control_predecessors().size())
      return false;
    return !FindTiledTransposeHero(*body) && !AnalyzeRowNormalization(*body) &&
           InPlaceOperandNumbers(inst).empty() && body->root()->opcode() != HloOpcode::kDynamicUpdateSlice &&
           body->root()->opcode() != HloOpcode::kScatter;
  }

  static std::vector<int64_t> OutputDims(const HloInstruction& fusion) {
    return Outputs(*fusion.called_computation("calls"))[0]->shape().dims();
  }

  bool CanMergeSiblings(const HloInstruction* a, const HloInstruction* b) {
    // Positions forgotten by a merge this round: wait for the next round.
    if (!position_.count(a) || !position_.count(b)) return false;
    if (OutputDims(*a) != OutputDims(*b) || b->shape().IsTuple()) return false;
    const HloInstruction* early = position_.at(a) < position_.at(b) ? a : b;
    const HloInstruction* late = early == a ? b : a;
    return !DependsOn(late, early, /*direct_ok=*/false);
  }

  // Seconds saved by computing `p` inside `c` as an extra output; 0 when
  // not allowed: different output dimensions, a path joining them through
  // another instruction, or `c` reading an expensive or reducing `p` at
  // other indices than the element it computes (recomputation).
  double ProducerConsumerSaving(const HloInstruction* p, const HloInstruction* c) {
    if (OutputDims(*p) != OutputDims(*c)) return 0;
    const HloComputation& pb = *p->called_computation("calls");
    const HloComputation& cb = *c->called_computation("calls");
    bool cheap = true;
    for (const HloInstruction* inst : pb.instructions())
      if (inst->opcode() != HloOpcode::kParameter && !IsCheapToRepeat(*inst)) cheap = false;
    if (!cheap && !ReadsElementwise(cb, *c, p)) return 0;
    if (DependsOn(c, p, /*direct_ok=*/true)) return 0;
    analysis::HloCost pc = analysis::InstructionCost(*p), cc = analysis::InstructionCost(*c);
    analysis::HloCost merged;
    merged.flops = pc.flops + cc.flops;
    merged.transcendentals = pc.transcendentals + cc.transcendentals;
    merged.bytes_written = pc.bytes_written + cc.bytes_written;
    std::unordered_set<const HloInstruction*> read;
    for (const HloInstruction* fusion : {p, c})
      for (const HloInstruction* op : fusion->operands())
        if (op != p && read.insert(op).second && op->shape().IsArray()) merged.bytes_read += op->shape().ByteSize();
    return KernelSeconds(pc, options_) + KernelSeconds(cc, options_) - KernelSeconds(merged, options_);
  }

  // Every instruction of `cb` downstream of the parameters bound to `p` is
  // elementwise with `p`'s dimensions: each output element reads `p` at
  // its own index only.
  static bool ReadsElementwise(const HloComputation& cb, const HloInstruction& c, const HloInstruction* p) {
    std::vector<const HloInstruction*> stack;
    for (int64_t i = 0; i < c.operand_count(); ++i)
      if (c.operand(i) == p) stack.push_back(cb.parameter(i));
    std::unordered_set<const HloInstruction*> seen;
    while (!stack.empty()) {
      const HloInstruction* x = stack.back();
      stack.pop_back();
      for (const HloInstruction* u : x->users()) {
        if (!seen.insert(u).second) continue;
        if (u == cb.root() && u->opcode() == HloOpcode::kTuple) continue;
        if (!hlo::IsElementwise(u->opcode()) || u->shape().dims() != p->shape().dims()) return false;
        stack.push_back(u);
      }
    }
    return true;
  }

  // Whether `late` reads `early` through other instructions (or directly,
  // unless `direct_ok`).
  bool DependsOn(const HloInstruction* late, const HloInstruction* early, bool direct_ok) {
    std::vector<const HloInstruction*> stack{late};
    std::unordered_set<const HloInstruction*> seen{late};
    int64_t visited = 0;
    while (!stack.empty()) {
      const HloInstruction* x = stack.back();
      stack.pop_back();
      if (++visited > kMaxSearch) return true;  // give up: assume it does
      std::vector<const HloInstruction*> inputs(x->operands().begin(), x->operands().end());
      inputs.insert(inputs.end(), x->control_predecessors().begin(), x->control_predecessors().end());
      for (const HloInstruction* op : inputs) {
        if (op == early) {
          if (direct_ok && x == late) continue;
          return true;
        }
        auto pos = position_.find(op);
        // Made by a merge this round: its position is unknown, so assume
        // the worst rather than risk a cycle.
        if (pos == position_.end()) return true;
        if (pos->second > position_.at(early) && seen.insert(op).second) stack.push_back(op);
      }
    }
    return false;
  }

  // Replaces a and b by one fusion computing a's outputs, then b's; when b
  // reads a, it reads a's outputs inside the fusion.
  Status Merge(HloInstruction* a, HloInstruction* b, double saved_seconds) {
    consumed_.insert(a);
    consumed_.insert(b);
    // Their memory may be reused by new instructions: forget their
    // positions (unknown positions count as dependences).
    position_.erase(a);
    position_.erase(b);
    const HloComputation& body_a = *a->called_computation("calls");
    auto fused = std::make_unique<HloComputation>(names_.Get(body_a.name() + ".multi"));
    std::vector<HloInstruction*> operands;
    std::map<const HloInstruction*, HloInstruction*> param_of;  // caller operand -> new parameter
    std::vector<HloInstruction*> outputs;
    HloInstruction* a_root = nullptr;  // a's value inside, for b reading a
    for (const HloInstruction* fusion : {static_cast<const HloInstruction*>(a), static_cast<const HloInstruction*>(b)}) {
      const HloComputation& body = *fusion->called_computation("calls");
      std::unordered_map<const HloInstruction*, HloInstruction*> map;
      for (int64_t i = 0; i < body.parameter_count(); ++i) {
        HloInstruction* outer = fusion->operand(i);
        if (outer == a) {
          map[body.parameter(i)] = a_root;
          continue;
        }
        auto it = param_of.find(outer);
        if (it == param_of.end()) {
          auto param = std::make_unique<HloInstruction>(
              HloOpcode::kParameter, names_.Get("param_" + std::to_string(operands.size())), outer->shape());
          param->set_parameter_number(static_cast<int64_t>(operands.size()));
          it = param_of.emplace(outer, fused->AddInstruction(std::move(param))).first;
          operands.push_back(outer);
        }
        map[body.parameter(i)] = it->second;
      }
      for (const HloInstruction* inst : body.PostOrder()) {
        if (inst->opcode() == HloOpcode::kParameter) continue;
        if (inst == body.root() && inst->opcode() == HloOpcode::kTuple) continue;
        std::vector<HloInstruction*> ops;
        for (const HloInstruction* op : inst->operands()) ops.push_back(map.at(op));
        map[inst] = fused->AddInstruction(inst->CloneWithOperands(ops, names_.Get(inst->name())));
      }
      for (HloInstruction* out : Outputs(body)) outputs.push_back(map.at(out));
      if (fusion == a) a_root = outputs.front();
    }
    std::vector<Shape> shapes;
    for (const HloInstruction* o : outputs) shapes.push_back(o->shape());
    HloInstruction* root = AddInstruction(*fused, HloOpcode::kTuple, Shape::Tuple(shapes), outputs,
                                          names_.Get(a->name() + ".outputs"));
    fused->set_root(root);
    HloComputation* callee = module_.AddComputation(std::move(fused));
    bool input = a->GetString("kind") == "kInput" || b->GetString("kind") == "kInput";
    HloInstruction* merged = AddInstruction(comp_, HloOpcode::kFusion, Shape::Tuple(shapes), operands,
                                            names_.Get(a->name() + ".multi"));
    merged->set_location(a->location());
    merged->SetAttribute("kind", hlo::EnumAttr{input ? "kInput" : "kLoop"});
    merged->SetAttribute("calls", hlo::ComputationRefs{{callee}});
    std::vector<FusionDecision> decisions = FusionDecisionsOf(*a);
    for (const FusionDecision& d : FusionDecisionsOf(*b)) decisions.push_back(d);
    decisions.push_back({a->name(), b->name(), saved_seconds * 1e6});
    SetFusionDecisions(*merged, decisions);
    // a's uses read the first outputs, b's the last ones.
    std::vector<HloInstruction*> views;
    for (size_t i = 0; i < shapes.size(); ++i) {
      HloInstruction* g = AddInstruction(comp_, HloOpcode::kGetTupleElement, shapes[i], {merged},
                                         names_.Get(merged->name() + ".out"));
      g->SetAttribute("index", static_cast<int64_t>(i));
      views.push_back(g);
    }
    // The value replacing `fusion`: its one output, or a tuple of its outputs.
    auto value_of = [&](HloInstruction* fusion, size_t first, size_t end) {
      if (!fusion->shape().IsTuple()) return views[first];
      return AddInstruction(comp_, HloOpcode::kTuple, fusion->shape(),
                            std::vector<HloInstruction*>(views.begin() + first, views.begin() + end),
                            names_.Get(fusion->name() + ".value"));
    };
    size_t a_outputs = Outputs(body_a).size();
    HloInstruction* a_value = value_of(a, 0, a_outputs);
    HloInstruction* b_value = value_of(b, a_outputs, views.size());
    b->ReplaceAllUsesWith(b_value);
    KILN_RETURN_IF_ERROR(comp_.RemoveInstruction(b));
    a->ReplaceAllUsesWith(a_value);
    return comp_.RemoveInstruction(a);
  }

  HloComputation& comp_;
  hlo::HloModule& module_;
  NameUniquer& names_;
  const FusionOptions& options_;
  std::vector<HloInstruction*> order_;
  std::unordered_map<const HloInstruction*, int64_t> position_;
  std::unordered_set<const HloInstruction*> consumed_;
};

template <typename RunOne>
StatusOr<bool> ForEachSequentialComputation(hlo::HloModule& module, RunOne run_one) {
  if (!module.entry()) return Error("module has no entry computation");
  NameUniquer names(module);
  bool changed = false;
  for (HloComputation* comp : SequentialComputations(module)) {
    KILN_ASSIGN_OR_RETURN(bool c, run_one(*comp, names));
    changed |= c;
  }
  return changed;
}

}  // namespace

StatusOr<bool> SiblingFusion::Run(hlo::HloModule& module) {
  FusionOptions options;
  return ForEachSequentialComputation(module, [&](HloComputation& comp, NameUniquer& names) {
    return Merger(comp, module, names, options).RunSiblings();
  });
}

StatusOr<bool> MultiOutputFusion::Run(hlo::HloModule& module) {
  return ForEachSequentialComputation(module, [&](HloComputation& comp, NameUniquer& names) {
    return Merger(comp, module, names, options_).RunProducerConsumer();
  });
}

}  // namespace kiln::passes
