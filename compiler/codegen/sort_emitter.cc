// Sort and topk kernels.
//
// Sort (any number of operands of any supported types, any comparator,
// any sort dimension). Every operand is viewed as [O, N, I] around the
// sort dimension (N its length); each of the O * I sequences is sorted
// independently, all operands permuted alike. The comparator is inlined as
// scalar code, as a reduce's to_apply is (ElementalEmitter with scalar
// parameters: lhs/rhs of operand 0, of operand 1, ...). The kernel first
// copies each sequence from its operands into the output buffers (distinct
// from the operands: SortFusion's kernels share no buffer), then permutes
// it there.
//
//  * Host: one unit of the (args, begin, end) convention per sequence, so
//    the host thread pool splits the sequences. Each sequence is sorted by
//    a bottom-up merge sort (O(N log N)) ping-ponging between the output
//    and a scratch buffer of N elements per operand, heap-allocated once
//    per call (memref.alloc: a long sequence would not fit on a thread's
//    stack). The merge takes the left element unless the comparator says
//    right < left: the same stable merge sort as the evaluator's, so even
//    an is_stable=false sort with ties matches it.
//
//  * CUDA: XLA's bitonic sorting network over the power of two P >= N: for
//    k = 2, 4, ..., P and j = k/2, ..., 1 one compare-and-swap stage over
//    P/2 pairs, all ascending: in the first stage of each k the pairs are
//    mirrored within blocks of k (q <-> k-1-q), later ones are (q, q + j)
//    within blocks of 2j. Positions >= N act as +infinity: a pair whose
//    upper position is >= N is skipped, so nothing is ever swapped in. The
//    network is not stable; StableSortExpander makes stable sorts total
//    orders first. Deviation from XLA's one launch per stage: one launch
//    per sort, one block of T = min(1024, P/2) threads per sequence, the
//    stages separated by block barriers, each thread taking P/2/T pairs
//    per stage. A sequence of up to kMaxSharedBytes (all operands, each
//    element widened to the widest operand's bits) is loaded into dynamic
//    shared memory, sorted there and written back; longer ones are sorted
//    in place in global memory (bar.sync orders global memory within the
//    block too). One launch keeps the thunk
//    program the same for host and CUDA (one kernel per sort); a long
//    single sequence then runs on one SM, which a per-stage multi-block
//    version would fix.
//
// TopK (values and s32 positions of the K greatest, or least, elements of
// each row along the last dimension; floats in total order, so +NaN is
// the greatest; ties: the lower position first): a selection, not a sort.
// One sequential pass over the row keeps the best K seen so far sorted in
// the output row itself: an element better than the K-th is inserted by
// shifting the worse ones down (insertion into a bounded sorted buffer,
// O(N + insertions * K)). Host: one unit per row; CUDA: one thread per row
// (rows are typically many and K small: the MoE routing cases), the
// buffer in global memory, the same code. A single long row (sampling
// logits, 1 x 50000) then runs on one thread; splitting a row over a
// block (per-thread candidates merged through shared memory) would fix
// that.
#include "compiler/codegen/sort_emitter.h"

#include <algorithm>
#include <functional>

#include "compiler/codegen/elemental_emitter.h"
#include "compiler/codegen/scalar_ops.h"
#include "compiler/codegen/tiled_kernel_ir.h"
#include "mlir/Dialect/Arith/IR/Arith.h"
#include "mlir/Dialect/Func/IR/FuncOps.h"
#include "mlir/Dialect/MemRef/IR/MemRef.h"
#include "mlir/Dialect/SCF/IR/SCF.h"

namespace kiln::codegen::internal {
namespace {

using hlo::HloInstruction;
using hlo::HloOpcode;
using mlir::Value;
using Pi = mlir::arith::CmpIPredicate;

constexpr int64_t kMaxBlockThreads = 1024;
// CUDA: a sequence whose elements (all operands) fit in this much dynamic
// shared memory is sorted there: one global read and write per element
// instead of one per stage.
constexpr int64_t kMaxSharedBytes = 32 * 1024;

int64_t PowerOfTwoAtLeast(int64_t n) {
  int64_t p = 1;
  while (p < n) p *= 2;
  return p;
}

class SortEmitter {
 public:
  SortEmitter(mlir::ModuleOp module, const KernelSpec& spec, KernelTarget target)
      : module_(module), spec_(spec), comp_(*spec.computation), root_(*comp_.root()), target_(target),
        b_(module.getContext()), loc_(mlir::NameLoc::get(b_.getStringAttr(spec.name))), pool_(module, spec.name),
        m_(b_, loc_), ops_(b_, loc_) {}

  StatusOr<KernelInfo> Emit() {
    KILN_RETURN_IF_ERROR(Check());
    std::vector<mlir::Type> arg_types;
    for (int64_t i = 0; i < comp_.parameter_count(); ++i)
      arg_types.push_back(BitsBufferType(comp_.parameter(i)->shape()));
    for (const Shape& s : out_shapes_) arg_types.push_back(BitsBufferType(s));
    b_.setInsertionPointToEnd(module_.getBody());
    auto func = mlir::func::FuncOp::create(b_, loc_, spec_.name, b_.getFunctionType(arg_types, {}));
    mlir::Block* entry = func.addEntryBlock();
    b_.setInsertionPointToStart(entry);
    std::vector<Value> args(entry->args_begin(), entry->args_end());
    // Non-empty buffers viewed as [O, N, I] (sort) or [rows, N, 1] (topk).
    const int64_t num_params = comp_.parameter_count();
    KernelInfo empty(spec_.name, static_cast<int>(arg_types.size()), 0);
    empty.host_work = 1;  // one unit doing nothing (a launch needs a block)
    StatusOr<KernelInfo> info = empty;
    if (elements_ > 0) {
      for (int64_t i = 0; i < num_params; ++i) ins_.push_back(View(args[i], in_dims_));
      for (size_t k = 0; k < out_shapes_.size(); ++k)
        outs_.push_back(View(args[num_params + k], k < out_dims_.size() ? out_dims_[k] : out_dims_[0]));
      if (root_.opcode() == HloOpcode::kTopK) info = EmitTopK(static_cast<int>(arg_types.size()));
      else if (target_ == KernelTarget::kCuda) info = EmitBitonic(static_cast<int>(arg_types.size()));
      else info = EmitMergeSort(static_cast<int>(arg_types.size()));
    }
    KILN_RETURN_IF_ERROR(info.status().WithContext("kernel " + spec_.name));
    b_.setInsertionPointToEnd(entry);
    mlir::func::ReturnOp::create(b_, loc_);
    return info;
  }

 private:
  using Values = std::vector<Value>;

  Status Check() {
    const std::string where = root_.DebugName();
    for (int64_t i = 0; i < root_.operand_count(); ++i) {
      const HloInstruction* op = root_.operand(i);
      if (op->opcode() != HloOpcode::kParameter || op->parameter_number() != i)
        return Error(where + ": operand " + std::to_string(i) + " of a sort kernel must be its parameter " +
                     std::to_string(i));
      const Shape& s = op->shape();
      if (!s.IsArray() || s.is_dynamic() || !IsSupportedElementType(s.element_type()))
        return Error(where + ": codegen does not support sorting " + s.ToString(false));
      types_.push_back(s.element_type());
    }
    if (types_.empty()) return Error(where + ": sort needs an operand");
    if (comp_.parameter_count() != root_.operand_count())
      return Error(where + ": a sort kernel's parameters must be exactly the sort's operands");
    const Shape& s0 = root_.operand(0)->shape();
    if (s0.rank() == 0) return Error(where + ": sort needs an operand of rank >= 1");
    if (root_.shape().IsTuple()) {
      for (int64_t i = 0; i < root_.shape().tuple_size(); ++i) out_shapes_.push_back(root_.shape().tuple_shape(i));
    } else {
      out_shapes_.push_back(root_.shape());
    }
    for (const Shape& leaf : out_shapes_)
      if (!leaf.IsArray() || !IsSupportedElementType(leaf.element_type()))
        return Error(where + ": codegen does not support the result " + leaf.ToString(false));
    elements_ = s0.ElementCount();
    const std::vector<int64_t>& dims = s0.dims();
    if (root_.opcode() == HloOpcode::kTopK) {
      k_ = root_.GetInt("k", -1);
      largest_ = root_.GetBool("largest", true);
      n_ = dims.back();
      if (k_ < 0 || k_ > n_ || out_shapes_.size() != 2) return Error(where + ": malformed topk");
      outer_ = n_ == 0 ? 0 : elements_ / n_;
      in_dims_ = {outer_, n_, 1};
      out_dims_ = {{outer_, k_, 1}};
      if (outer_ * k_ == 0) elements_ = 0;
      return Status::Ok();
    }
    std::vector<int64_t> sort_dims = root_.dimensions();
    if (sort_dims.size() != 1 || sort_dims[0] < 0 || sort_dims[0] >= s0.rank())
      return Error(where + ": sort needs one dimension in range");
    for (const Shape& s : out_shapes_)
      if (s.dims() != dims) return Error(where + ": sort results must have the operands' dimensions");
    if (out_shapes_.size() != types_.size()) return Error(where + ": sort needs one result per operand");
    for (int64_t i = 1; i < root_.operand_count(); ++i)
      if (root_.operand(i)->shape().dims() != dims)
        return Error(where + ": sort operands must have the same dimensions");
    const int64_t d = sort_dims[0];
    for (int64_t i = 0; i < d; ++i) outer_ *= dims[i];
    for (int64_t i = d + 1; i < s0.rank(); ++i) inner_ *= dims[i];
    n_ = dims[d];
    in_dims_ = {outer_, n_, inner_};
    out_dims_ = {in_dims_};
    less_ = root_.to_apply();
    if (!less_ || !less_->root() || less_->parameter_count() != 2 * root_.operand_count())
      return Error(where + ": the comparator must take two scalars per operand");
    for (int64_t i = 0; i < less_->parameter_count(); ++i) {
      const hlo::HloInstruction* p = less_->parameter(i);
      if (!p || !p->shape().IsArray() || p->shape().rank() != 0 || p->shape().element_type() != types_[i / 2])
        return Error(where + ": comparator parameter " + std::to_string(i) + " must be a scalar of its operand's type");
    }
    if (!less_->root()->shape().IsArray() || less_->root()->shape().element_type() != ElementType::kPred)
      return Error(where + ": the comparator must return pred[]");
    return Status::Ok();
  }

  Value View(Value buffer, const std::vector<int64_t>& dims) {
    auto type = mlir::cast<mlir::MemRefType>(buffer.getType());
    auto view = mlir::MemRefType::get(dims, type.getElementType());
    return mlir::memref::ReinterpretCastOp::create(b_, loc_, view, buffer, /*offset=*/0, dims,
                                                   llvm::ArrayRef<int64_t>{dims[1] * dims[2], dims[2], 1});
  }

  // ---- small IR helpers ----
  Value Cmp(Pi pred, Value a, Value c) { return mlir::arith::CmpIOp::create(b_, loc_, pred, a, c); }
  Value MinU(Value a, Value c) { return mlir::arith::MinUIOp::create(b_, loc_, a, c); }
  Value Sel(Value p, Value a, Value c) { return mlir::arith::SelectOp::create(b_, loc_, p, a, c); }
  Value Sub(Value a, Value c) { return mlir::arith::SubIOp::create(b_, loc_, a, c); }
  Value Bool(bool v) { return mlir::arith::ConstantIntOp::create(b_, loc_, b_.getI1Type(), v ? 1 : 0); }
  // Elements move as their storage bits: floats as integers of their
  // width (the buffers are typed so; with the bare-pointer convention the
  // caller passes the same pointers), pred as i8. Only the comparisons see
  // float values: a bf16/f16 value that lived across blocks would be
  // legalized on x86 through f32 and a libgcc truncation the kernel
  // library cannot call.
  mlir::Type BitsType(ElementType t) {
    return IsFloat(t) ? b_.getIntegerType(BitWidth(t)) : StorageType(b_.getContext(), t);
  }
  // An empty buffer is never accessed: it is declared as one element (the
  // LLVM conversion rejects some zero-sized memref arguments).
  mlir::MemRefType BitsBufferType(const Shape& s) {
    if (s.ElementCount() == 0) return mlir::MemRefType::get({1}, BitsType(s.element_type()));
    return mlir::MemRefType::get(s.dims(), BitsType(s.element_type()));
  }
  Value Load(Value buffer, ElementType, mlir::ValueRange index) {
    return mlir::memref::LoadOp::create(b_, loc_, buffer, index);
  }
  void Store(Value bits, ElementType, Value buffer, mlir::ValueRange index) {
    mlir::memref::StoreOp::create(b_, loc_, bits, buffer, index);
  }
  // The comparator's value of loaded bits.
  Value ToValue(Value bits, ElementType t) {
    if (IsFloat(t)) return mlir::arith::BitcastOp::create(b_, loc_, ValueType(b_.getContext(), t), bits);
    return ops_.FromStorage(bits, t);
  }
  // scf.for [lo, hi) step `step` with iteration values `inits`; `body`
  // gets the induction variable and the values and returns the next ones.
  using ForBody = std::function<StatusOr<Values>(Value iv, const Values& iter)>;
  StatusOr<Values> For(Value lo, Value hi, Value step, const Values& inits, const ForBody& body) {
    auto loop = mlir::scf::ForOp::create(b_, loc_, lo, hi, step, inits);
    mlir::OpBuilder::InsertionGuard guard(b_);
    b_.setInsertionPointToStart(loop.getBody());
    Values iter(loop.getRegionIterArgs().begin(), loop.getRegionIterArgs().end());
    KILN_ASSIGN_OR_RETURN(Values next, body(loop.getInductionVar(), iter));
    if (loop.getBody()->empty() || !loop.getBody()->back().hasTrait<mlir::OpTrait::IsTerminator>())
      mlir::scf::YieldOp::create(b_, loc_, next);
    else
      loop.getBody()->back().setOperands(next);
    return Values(loop.getResults().begin(), loop.getResults().end());
  }
  Status If(Value cond, const std::function<Status()>& fn) {
    auto op = mlir::scf::IfOp::create(b_, loc_, cond, /*withElseRegion=*/false);
    mlir::OpBuilder::InsertionGuard guard(b_);
    b_.setInsertionPoint(op.thenBlock()->getTerminator());
    return fn();
  }
  // scf.if `cond` yielding then_fn() or else_fn() (one value each).
  StatusOr<Value> IfValue(Value cond, mlir::Type type, const std::function<StatusOr<Value>()>& then_fn,
                          const std::function<StatusOr<Value>()>& else_fn) {
    auto op = mlir::scf::IfOp::create(b_, loc_, mlir::TypeRange{type}, cond, /*withElseRegion=*/true);
    mlir::OpBuilder::InsertionGuard guard(b_);
    b_.setInsertionPointToStart(op.thenBlock());
    KILN_ASSIGN_OR_RETURN(Value t, then_fn());
    mlir::scf::YieldOp::create(b_, loc_, t);
    b_.setInsertionPointToStart(op.elseBlock());
    KILN_ASSIGN_OR_RETURN(Value e, else_fn());
    mlir::scf::YieldOp::create(b_, loc_, e);
    return Value(op.getResult(0));
  }
  // scf.parallel over [0, count) (one dimension) around `body`.
  mlir::scf::ParallelOp Parallel(int64_t count, const std::function<Status(Value)>& body, Status& status) {
    return mlir::scf::ParallelOp::create(
        b_, loc_, mlir::ValueRange{m_.Const(0)}, mlir::ValueRange{m_.Const(count)}, mlir::ValueRange{m_.Const(1)},
        [&](mlir::OpBuilder& nested, mlir::Location, mlir::ValueRange ivs) {
          mlir::OpBuilder::InsertionGuard guard(b_);
          b_.setInsertionPoint(nested.getInsertionBlock(), nested.getInsertionPoint());
          status = body(ivs[0]);
        });
  }

  // The comparator on the elements `lhs` and `rhs` (one value per operand).
  StatusOr<Value> Less(const Values& lhs, const Values& rhs) {
    Values args;
    for (size_t k = 0; k < lhs.size(); ++k)
      args.insert(args.end(), {ToValue(lhs[k], types_[k]), ToValue(rhs[k], types_[k])});
    ElementalEmitter scalar(b_, loc_, pool_, args, /*scalar_params=*/true);
    return scalar.Emit(less_->root(), Index{});
  }

  // Element j of one sequence: in the [O, N, I] views at (o, j, i), in
  // the [N] scratch buffers at j, or in the CUDA tile, a [operands, N]
  // buffer of the widest element bits, at (operand, j).
  enum class Where { kView, kScratch, kTile };
  struct Sequence {
    Values buffers;
    Where where = Where::kView;
  };
  Values LoadAll(const Sequence& s, Value o, Value j, Value i) {
    Values v;
    for (size_t k = 0; k < types_.size(); ++k) {
      if (s.where == Where::kTile) {
        Value wide = Load(s.buffers[0], types_[k], {m_.Const(static_cast<int64_t>(k)), j});
        mlir::Type bits = BitsType(types_[k]);
        v.push_back(bits == wide.getType() ? wide : mlir::arith::TruncIOp::create(b_, loc_, bits, wide).getResult());
      } else {
        v.push_back(s.where == Where::kScratch ? Load(s.buffers[k], types_[k], j)
                                               : Load(s.buffers[k], types_[k], {o, j, i}));
      }
    }
    return v;
  }
  void StoreAll(const Values& v, const Sequence& s, Value o, Value j, Value i) {
    for (size_t k = 0; k < types_.size(); ++k) {
      if (s.where == Where::kTile) {
        mlir::Type wide = mlir::cast<mlir::MemRefType>(s.buffers[0].getType()).getElementType();
        Value bits = v[k].getType() == wide ? v[k] : mlir::arith::ExtUIOp::create(b_, loc_, wide, v[k]).getResult();
        Store(bits, types_[k], s.buffers[0], {m_.Const(static_cast<int64_t>(k)), j});
      } else if (s.where == Where::kScratch) {
        Store(v[k], types_[k], s.buffers[k], j);
      } else {
        Store(v[k], types_[k], s.buffers[k], {o, j, i});
      }
    }
  }

  // ---- host: merge sort per sequence ----
  StatusOr<KernelInfo> EmitMergeSort(int num_args) {
    std::vector<Value> scratch;
    for (ElementType t : types_) {
      auto type = mlir::MemRefType::get({n_}, BitsType(t));
      scratch.push_back(mlir::memref::AllocOp::create(b_, loc_, type));
    }
    const int64_t sequences = outer_ * inner_;
    Status status = Status::Ok();
    Parallel(sequences, [&](Value s) -> Status {
      Value o = m_.Div(s, inner_), i = m_.Rem(s, inner_);
      Sequence in{ins_}, out{outs_}, tmp{scratch, Where::kScratch};
      KILN_RETURN_IF_ERROR(For(m_.Const(0), m_.Const(n_), m_.Const(1), {}, [&](Value j, const Values&) -> StatusOr<Values> {
        StoreAll(LoadAll(in, o, j, i), out, o, j, i);
        return Values{};
      }).status());
      bool in_scratch = false;
      for (int64_t width = 1; width < n_; width *= 2) {
        KILN_RETURN_IF_ERROR(MergePass(width, in_scratch ? tmp : out, in_scratch ? out : tmp, o, i));
        in_scratch = !in_scratch;
      }
      if (!in_scratch) return Status::Ok();
      return For(m_.Const(0), m_.Const(n_), m_.Const(1), {}, [&](Value j, const Values&) -> StatusOr<Values> {
        StoreAll(LoadAll(tmp, o, j, i), out, o, j, i);
        return Values{};
      }).status();
    }, status);
    KILN_RETURN_IF_ERROR(status);
    for (Value v : scratch) mlir::memref::DeallocOp::create(b_, loc_, v);
    KernelInfo info(spec_.name, num_args, elements_);
    info.host_split_dim = sequences > 1 ? 0 : -1;
    info.host_units = sequences;
    int64_t passes = 0;
    for (int64_t w = 1; w < n_; w *= 2) ++passes;
    info.host_work = elements_ * std::max<int64_t>(1, passes);
    return info;
  }

  // Merges the sorted runs of `width` of `src` pairwise into `dst`.
  Status MergePass(int64_t width, const Sequence& src, const Sequence& dst, Value o, Value i) {
    return For(m_.Const(0), m_.Const(n_), m_.Const(2 * width), {}, [&](Value lo, const Values&) -> StatusOr<Values> {
      Value n = m_.Const(n_);
      Value mid = MinU(m_.Add(lo, m_.Const(width)), n);
      Value hi = MinU(m_.Add(lo, m_.Const(2 * width)), n);
      KILN_RETURN_IF_ERROR(For(lo, hi, m_.Const(1), {lo, mid}, [&](Value at, const Values& ij) -> StatusOr<Values> {
        Value left = ij[0], right = ij[1];
        Value left_ok = Cmp(Pi::ult, left, mid), right_ok = Cmp(Pi::ult, right, hi);
        Value both = mlir::arith::AndIOp::create(b_, loc_, left_ok, right_ok);
        KILN_ASSIGN_OR_RETURN(
            Value take_right,
            IfValue(both, b_.getI1Type(),
                    [&]() -> StatusOr<Value> { return Less(LoadAll(src, o, right, i), LoadAll(src, o, left, i)); },
                    [&]() -> StatusOr<Value> { return right_ok; }));
        StoreAll(LoadAll(src, o, Sel(take_right, right, left), i), dst, o, at, i);
        Value one = m_.Const(1);
        return Values{Sel(take_right, left, m_.Add(left, one)), Sel(take_right, m_.Add(right, one), right)};
      }).status());
      return Values{};
    }).status();
  }

  // ---- CUDA: bitonic network, one block per sequence ----
  StatusOr<KernelInfo> EmitBitonic(int num_args) {
    const int64_t padded = PowerOfTwoAtLeast(n_);
    const int64_t pairs = std::max<int64_t>(1, padded / 2);
    const int64_t threads = std::min(kMaxBlockThreads, pairs);
    const int64_t sequences = outer_ * inner_;
    // The tile is dynamic shared memory (an extern array of unknown size):
    // LLVM then never speculates a guarded load of it out of its branch,
    // which for a static array it may (a load of another pair's element,
    // a race in the memory model even when unused).
    unsigned tile_bits = 8;
    for (ElementType t : types_) tile_bits = std::max<unsigned>(tile_bits, BitsType(t).getIntOrFloatBitWidth());
    const int64_t bytes = static_cast<int64_t>(types_.size()) * n_ * (tile_bits / 8);
    const bool in_shared = bytes <= kMaxSharedBytes;
    Status status = Status::Ok();
    auto blocks = Parallel(sequences, [&](Value s) -> Status {
      Value o = m_.Div(s, inner_), i = m_.Rem(s, inner_);
      Sequence in{ins_}, out{outs_}, data = out;
      if (in_shared) {
        auto type = mlir::MemRefType::get({static_cast<int64_t>(types_.size()), n_}, b_.getIntegerType(tile_bits));
        auto alloca = mlir::memref::AllocaOp::create(b_, loc_, type);
        alloca->setAttr(kTileBufferAttr, b_.getUnitAttr());
        data = Sequence{{alloca}, Where::kTile};
      }
      // Each thread moves the elements j = tid, tid + T, ... of the
      // sequence (consecutive threads, consecutive elements).
      auto move = [&](const Sequence& from, const Sequence& to) {
        return ThreadLoop(threads, [&](Value tid) -> Status {
          return For(tid, m_.Const(n_), m_.Const(threads), {}, [&](Value j, const Values&) -> StatusOr<Values> {
            StoreAll(LoadAll(from, o, j, i), to, o, j, i);
            return Values{};
          }).status();
        });
      };
      KILN_RETURN_IF_ERROR(move(in, data));
      for (int64_t k = 2; k <= padded; k *= 2) {
        for (int64_t j = k / 2; j >= 1; j /= 2) {
          mlir::func::CallOp::create(b_, loc_, BarrierFunc(module_), mlir::ValueRange{});
          KILN_RETURN_IF_ERROR(ThreadLoop(threads, [&](Value tid) -> Status {
            return For(tid, m_.Const(pairs), m_.Const(threads), {}, [&](Value p, const Values&) -> StatusOr<Values> {
              Value base = m_.Mul(m_.Div(p, j), 2 * j), offset = m_.Rem(p, j);
              Value lo = m_.Add(base, offset);
              Value hi = j == k / 2 ? Sub(m_.Add(base, m_.Const(2 * j - 1)), offset) : m_.Add(lo, m_.Const(j));
              KILN_RETURN_IF_ERROR(If(m_.Less(hi, n_), [&]() -> Status {
                Values a = LoadAll(data, o, lo, i), c = LoadAll(data, o, hi, i);
                KILN_ASSIGN_OR_RETURN(Value swap, Less(c, a));
                return If(swap, [&]() -> Status {
                  StoreAll(c, data, o, lo, i);
                  StoreAll(a, data, o, hi, i);
                  return Status::Ok();
                });
              }));
              return Values{};
            }).status();
          }));
        }
      }
      if (!in_shared) return Status::Ok();
      mlir::func::CallOp::create(b_, loc_, BarrierFunc(module_), mlir::ValueRange{});
      return move(data, out);
    }, status);
    blocks->setAttr(kTilesAttr, b_.getUnitAttr());
    KILN_RETURN_IF_ERROR(status);
    LaunchDims launch{{sequences, 1, 1}, {threads, 1, 1}, in_shared ? bytes : 0};
    return KernelInfo(spec_.name, num_args, elements_, launch);
  }

  // scf.parallel (%y, %x) {kiln.threads} over one row of `threads`.
  Status ThreadLoop(int64_t threads, const std::function<Status(Value)>& body) {
    Status status = Status::Ok();
    auto loop = mlir::scf::ParallelOp::create(
        b_, loc_, mlir::ValueRange{m_.Const(0), m_.Const(0)}, mlir::ValueRange{m_.Const(1), m_.Const(threads)},
        mlir::ValueRange{m_.Const(1), m_.Const(1)}, [&](mlir::OpBuilder& nested, mlir::Location, mlir::ValueRange ids) {
          mlir::OpBuilder::InsertionGuard guard(b_);
          b_.setInsertionPoint(nested.getInsertionBlock(), nested.getInsertionPoint());
          status = body(ids[1]);
        });
    loop->setAttr(kThreadsAttr, b_.getUnitAttr());
    return status;
  }

  // ---- topk ----
  // x better than y (their storage bits, see Load): strictly greater
  // (largest) or less, floats in total order (the sign-magnitude bits as a
  // two's complement key).
  Value Better(Value x, Value y) {
    ElementType t = types_[0];
    Value a = largest_ ? x : y, c = largest_ ? y : x;
    if (IsFloat(t)) {
      unsigned bits = static_cast<unsigned>(BitWidth(t));
      mlir::Type it = b_.getIntegerType(bits);
      auto key = [&](Value raw) -> Value {
        Value shift = mlir::arith::ConstantIntOp::create(b_, loc_, it, bits - 1);
        Value sign = mlir::arith::ShRSIOp::create(b_, loc_, raw, shift);
        Value one = mlir::arith::ConstantIntOp::create(b_, loc_, it, 1);
        Value flip = mlir::arith::ShRUIOp::create(b_, loc_, sign, one);
        return mlir::arith::XOrIOp::create(b_, loc_, raw, flip);
      };
      return Cmp(Pi::sgt, key(a), key(c));
    }
    return Cmp(IsSignedInteger(t) ? Pi::sgt : Pi::ugt, a, c);
  }

  StatusOr<KernelInfo> EmitTopK(int num_args) {
    const ElementType t = types_[0];
    const ElementType it = ElementType::kS32;
    Value in = ins_[0], values = outs_[0], indices = outs_[1];
    Status status = Status::Ok();
    Parallel(outer_, [&](Value r) -> Status {
      Value zero = m_.Const(0), one = m_.Const(1), kk = m_.Const(k_);
      return For(zero, m_.Const(n_), one, {zero}, [&](Value j, const Values& iter) -> StatusOr<Values> {
        Value count = iter[0];
        Value x = Load(in, t, {r, j, zero});
        KILN_ASSIGN_OR_RETURN(Value qualifies,
                              IfValue(Cmp(Pi::ult, count, kk), b_.getI1Type(),
                                      [&]() -> StatusOr<Value> { return Bool(true); },
                                      [&]() -> StatusOr<Value> { return Better(x, Load(values, t, {r, m_.Const(k_ - 1), zero})); }));
        KILN_RETURN_IF_ERROR(If(qualifies, [&]() -> Status {
          Value start = MinU(count, m_.Const(k_ - 1));
          // Shift the worse elements down while x beats the one above.
          Status inner = Status::Ok();
          auto loop = mlir::scf::WhileOp::create(
              b_, loc_, mlir::TypeRange{b_.getIndexType()}, mlir::ValueRange{start},
              [&](mlir::OpBuilder& nested, mlir::Location, mlir::ValueRange ps) {
                mlir::OpBuilder::InsertionGuard guard(b_);
                b_.setInsertionPoint(nested.getInsertionBlock(), nested.getInsertionPoint());
                Value p = ps[0];
                StatusOr<Value> go = IfValue(
                    Cmp(Pi::ugt, p, zero), b_.getI1Type(),
                    [&]() -> StatusOr<Value> { return Better(x, Load(values, t, {r, Sub(p, one), zero})); },
                    [&]() -> StatusOr<Value> { return Bool(false); });
                if (!go.ok()) inner = go.status();
                mlir::scf::ConditionOp::create(b_, loc_, go.ok() ? *go : Bool(false), mlir::ValueRange{p});
              },
              [&](mlir::OpBuilder& nested, mlir::Location, mlir::ValueRange qs) {
                mlir::OpBuilder::InsertionGuard guard(b_);
                b_.setInsertionPoint(nested.getInsertionBlock(), nested.getInsertionPoint());
                Value q = qs[0], above = Sub(q, one);
                Store(Load(values, t, {r, above, zero}), t, values, {r, q, zero});
                Store(Load(indices, it, {r, above, zero}), it, indices, {r, q, zero});
                mlir::scf::YieldOp::create(b_, loc_, mlir::ValueRange{above});
              });
          KILN_RETURN_IF_ERROR(inner);
          b_.setInsertionPointAfter(loop);
          Value at = loop.getResult(0);
          Store(x, t, values, {r, at, zero});
          Value position = mlir::arith::IndexCastOp::create(b_, loc_, b_.getI32Type(), j);
          Store(position, it, indices, {r, at, zero});
          return Status::Ok();
        }));
        return Values{MinU(m_.Add(count, one), kk)};
      }).status();
    }, status);
    KILN_RETURN_IF_ERROR(status);
    KernelInfo info(spec_.name, num_args, outer_);
    info.host_split_dim = outer_ > 1 ? 0 : -1;
    info.host_units = outer_;
    info.host_work = outer_ * n_;
    return info;
  }

  mlir::ModuleOp module_;
  const KernelSpec& spec_;
  const hlo::HloComputation& comp_;
  const HloInstruction& root_;
  KernelTarget target_;
  mlir::OpBuilder b_;
  mlir::Location loc_;
  ConstantPool pool_;
  IndexMath m_;
  ScalarOps ops_;
  std::vector<ElementType> types_;  // per operand
  std::vector<Shape> out_shapes_;
  std::vector<int64_t> in_dims_;
  std::vector<std::vector<int64_t>> out_dims_;
  int64_t elements_ = 0, outer_ = 1, inner_ = 1, n_ = 1;
  int64_t k_ = 0;
  bool largest_ = true;
  const hlo::HloComputation* less_ = nullptr;
  Values ins_, outs_;
};

}  // namespace

bool IsSortKernel(const hlo::HloComputation& comp) {
  const HloInstruction* root = comp.root();
  return root && (root->opcode() == HloOpcode::kSort || root->opcode() == HloOpcode::kTopK);
}

StatusOr<KernelInfo> EmitSortKernel(mlir::ModuleOp module, const KernelSpec& spec, KernelTarget target) {
  if (!IsSortKernel(*spec.computation)) return Error("kernel " + spec.name + " is not a sort kernel");
  return SortEmitter(module, spec, target).Emit();
}

}  // namespace kiln::codegen::internal
