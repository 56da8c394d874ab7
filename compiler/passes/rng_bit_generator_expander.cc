// RngBitGeneratorExpander: see rng_bit_generator_expander.h.
//
// Every generator runs on flat u32 vectors with one element per counter (the
// counter being state + iota), and the outputs are then interleaved into the
// result's row-major order by reshape/concatenate/slice, which is exactly the
// placement XLA uses:
//  - ThreeFry, 64-bit elements: element i comes from counter + i, its two u32
//    outputs forming the low and high halves.
//  - ThreeFry, 32 bits and narrower: the shape is halved along its first even
//    dimension (else its largest); element 2h+j of that dimension is output j
//    of the counter at the element's row-major position in the halved shape.
//  - Philox: counter c (a 128-bit add of c to the state's counter) gives
//    elements 4c..4c+3 (u32) or 2c, 2c+1 (u64 from output pairs).
// Narrow elements are the low bits of the u32 draw; signed and float types
// take the unsigned result's bits (bitcast-convert), as XLA's do.
#include "compiler/passes/rng_bit_generator_expander.h"

#include <array>
#include <string>
#include <vector>

#include "compiler/passes/hlo_builder.h"

namespace kiln::passes {
namespace {

using hlo::HloComputation;
using hlo::HloInstruction;
using hlo::HloOpcode;

constexpr ElementType kU32 = ElementType::kU32;
constexpr ElementType kU64 = ElementType::kU64;

ElementType UnsignedOfWidth(int width) {
  switch (width) {
    case 8: return ElementType::kU8;
    case 16: return ElementType::kU16;
    case 32: return kU32;
    default: return kU64;
  }
}

int64_t Product(const std::vector<int64_t>& dims) {
  int64_t n = 1;
  for (int64_t d : dims) n *= d;
  return n;
}

// Builds the expansion of one rng-bit-generator in its computation.
class Expansion {
 public:
  Expansion(HloInstruction* rng, NameUniquer& names) : rng_(rng), comp_(*rng->parent()), names_(names) {}

  StatusOr<HloInstruction*> Run() {
    const Shape& shape = rng_->shape();
    HloInstruction* state = rng_->operand(0);
    const Shape& state_shape = state->shape();
    if (!shape.IsTuple() || shape.tuple_size() != 2 || !shape.tuple_shape(1).IsArray() ||
        !state_shape.IsArray() || state_shape.element_type() != kU64 || state_shape.rank() != 1)
      return Fail("needs a u64[S] state and a (state, bits) result");
    dims_ = shape.tuple_shape(1).dims();
    type_ = shape.tuple_shape(1).element_type();
    width_ = (IsInteger(type_) || IsFloat(type_)) ? BitWidth(type_) : 0;
    if (width_ != 8 && width_ != 16 && width_ != 32 && width_ != 64)
      return Fail("cannot produce element type " + std::string(ElementTypeName(type_)));
    count_ = Product(dims_);
    state_size_ = state_shape.dim(0);
    std::string algorithm = rng_->GetString("algorithm");
    if (algorithm.empty() || algorithm == "rng_default") algorithm = "rng_philox";  // as XLA CPU/GPU
    key_ = Word(state, 0);
    k0_ = Low32(key_);
    k1_ = High32(key_);
    HloInstruction* bits = nullptr;
    std::vector<HloInstruction*> new_state;
    if (algorithm == "rng_three_fry") {
      if (state_size_ != 2) return Fail("three-fry needs a u64[2] state");
      KILN_ASSIGN_OR_RETURN(bits, ThreeFryBits(Word(state, 1), new_state));
    } else if (algorithm == "rng_philox") {
      if (state_size_ != 2 && state_size_ != 3) return Fail("philox needs a u64[2] or u64[3] state");
      KILN_ASSIGN_OR_RETURN(bits, PhiloxBits(state, new_state));
    } else {
      return Fail("unknown algorithm '" + algorithm + "'");
    }
    std::vector<HloInstruction*> words;
    for (HloInstruction* w : new_state) words.push_back(Reshape(w, {1}));
    HloInstruction* out_state = Concat(words, 0);
    return Op(HloOpcode::kTuple, shape, {out_state, Finish(bits)});
  }

 private:
  Status Fail(const std::string& why) { return Error(rng_->DebugName() + ": rng-bit-generator " + why); }

  HloInstruction* Op(HloOpcode op, const Shape& shape, std::vector<HloInstruction*> operands) {
    return AddInstruction(comp_, op, shape, operands,
                          names_.Get(rng_->name() + "." + std::string(hlo::OpcodeName(op))));
  }
  HloInstruction* Const(ElementType type, uint64_t value) {
    HloInstruction* c = Op(HloOpcode::kConstant, Shape(type, {}), {});
    c->set_literal(Literal::Scalar(type, value));
    return c;
  }
  // A scalar broadcast to `dims` (the scalar itself when dims is empty).
  HloInstruction* Splat(HloInstruction* scalar, const std::vector<int64_t>& dims) {
    if (dims.empty()) return scalar;
    HloInstruction* b = Op(HloOpcode::kBroadcast, Shape(scalar->shape().element_type(), dims), {scalar});
    b->SetAttribute("dimensions", std::vector<int64_t>{});
    return b;
  }
  HloInstruction* Bin(HloOpcode op, HloInstruction* a, HloInstruction* b) {
    if (b->shape().rank() == 0 && a->shape().rank() != 0) b = Splat(b, a->shape().dims());
    return Op(op, Shape(a->shape().element_type(), a->shape().dims()), {a, b});
  }
  // `a` op the constant `value` (of a's type).
  HloInstruction* BinC(HloOpcode op, HloInstruction* a, uint64_t value) {
    return Bin(op, a, Const(a->shape().element_type(), value));
  }
  HloInstruction* Convert(HloInstruction* x, ElementType type) {
    return Op(HloOpcode::kConvert, Shape(type, x->shape().dims()), {x});
  }
  HloInstruction* Reshape(HloInstruction* x, const std::vector<int64_t>& dims) {
    return Op(HloOpcode::kReshape, Shape(x->shape().element_type(), dims), {x});
  }
  HloInstruction* Concat(const std::vector<HloInstruction*>& xs, int64_t dim) {
    std::vector<int64_t> dims = xs[0]->shape().dims();
    dims[dim] = 0;
    for (HloInstruction* x : xs) dims[dim] += x->shape().dim(dim);
    HloInstruction* c = Op(HloOpcode::kConcatenate, Shape(xs[0]->shape().element_type(), dims), xs);
    c->SetAttribute("dimensions", std::vector<int64_t>{dim});
    return c;
  }
  // The first `n` elements of the vector `x`.
  HloInstruction* Prefix(HloInstruction* x, int64_t n) {
    if (x->shape().dim(0) == n) return x;
    HloInstruction* s = Op(HloOpcode::kSlice, Shape(x->shape().element_type(), {n}), {x});
    s->SetAttribute("slice", std::vector<hlo::SliceDim>{{0, n, 1}});
    return s;
  }
  HloInstruction* Iota(int64_t n) {
    HloInstruction* i = Op(HloOpcode::kIota, Shape(kU64, {n}), {});
    i->SetAttribute("iota_dimension", int64_t{0});
    return i;
  }
  // Word `i` of the u64[S] state, as a scalar.
  HloInstruction* Word(HloInstruction* state, int64_t i) {
    HloInstruction* s = Op(HloOpcode::kSlice, Shape(kU64, {1}), {state});
    s->SetAttribute("slice", std::vector<hlo::SliceDim>{{i, i + 1, 1}});
    return Reshape(s, {});
  }
  HloInstruction* Low32(HloInstruction* x) { return Convert(x, kU32); }
  HloInstruction* High32(HloInstruction* x) { return Convert(BinC(HloOpcode::kShiftRightLogical, x, 32), kU32); }
  HloInstruction* Join64(HloInstruction* lo, HloInstruction* hi) {
    return Bin(HloOpcode::kOr, Convert(lo, kU64), BinC(HloOpcode::kShiftLeft, Convert(hi, kU64), 32));
  }
  HloInstruction* Less(HloInstruction* a, HloInstruction* b) {
    HloInstruction* c = Op(HloOpcode::kCompare, Shape(ElementType::kPred, a->shape().dims()), {a, b});
    c->SetAttribute("direction", hlo::EnumAttr{"LT"});
    return c;
  }
  // Vectors `xs` (each of length m) interleaved: x0[0], x1[0], ..., x0[1], ...
  HloInstruction* Interleave(const std::vector<HloInstruction*>& xs) {
    const int64_t m = xs[0]->shape().dim(0);
    std::vector<HloInstruction*> columns;
    for (HloInstruction* x : xs) columns.push_back(Reshape(x, {m, 1}));
    return Reshape(Concat(columns, 1), {m * static_cast<int64_t>(xs.size())});
  }

  // Threefry-2x32, 20 rounds, on u32 vectors (x0, x1) with the state's key.
  std::array<HloInstruction*, 2> ThreeFry(HloInstruction* x0, HloInstruction* x1) {
    static constexpr int kRot[8] = {13, 15, 26, 6, 17, 29, 16, 24};
    HloInstruction* ks[3] = {k0_, k1_, Bin(HloOpcode::kXor, BinC(HloOpcode::kXor, k0_, 0x1BD11BDAu), k1_)};
    x0 = Bin(HloOpcode::kAdd, x0, ks[0]);
    x1 = Bin(HloOpcode::kAdd, x1, ks[1]);
    for (int group = 0; group < 5; ++group) {
      for (int r = 0; r < 4; ++r) {
        const int rot = kRot[(group % 2) * 4 + r];
        x0 = Bin(HloOpcode::kAdd, x0, x1);
        HloInstruction* rotated =
            Bin(HloOpcode::kOr, BinC(HloOpcode::kShiftLeft, x1, rot), BinC(HloOpcode::kShiftRightLogical, x1, 32 - rot));
        x1 = Bin(HloOpcode::kXor, x0, rotated);
      }
      // Key injection: the sum with the round number is the same mod 2^32.
      x0 = Bin(HloOpcode::kAdd, x0, ks[(group + 1) % 3]);
      x1 = Bin(HloOpcode::kAdd, x1, BinC(HloOpcode::kAdd, ks[(group + 2) % 3], group + 1));
    }
    return {x0, x1};
  }

  // Flat u32 (or u64) bits of the result, row-major; `new_state` gets the
  // state words after the draw.
  StatusOr<HloInstruction*> ThreeFryBits(HloInstruction* counter, std::vector<HloInstruction*>& new_state) {
    const int64_t rank = static_cast<int64_t>(dims_.size());
    int64_t split = -1;  // the halved dimension of the 32-bit form
    if (width_ < 64) {
      for (int64_t d = 0; d < rank && split < 0; ++d)
        if (dims_[d] % 2 == 0) split = d;
      if (split < 0)
        for (int64_t d = 0; d < rank; ++d)
          if (split < 0 || dims_[d] > dims_[split]) split = d;
    }
    std::vector<int64_t> gen_dims = dims_;  // one counter per element of this shape
    if (split >= 0) gen_dims[split] = (dims_[split] + 1) / 2;
    const int64_t n = width_ < 64 && rank == 0 ? 1 : Product(gen_dims);
    new_state = {key_, BinC(HloOpcode::kAdd, counter, static_cast<uint64_t>(n))};
    if (count_ == 0) return nullptr;
    HloInstruction* counters = Bin(HloOpcode::kAdd, Splat(counter, {n}), Iota(n));
    auto [x0, x1] = ThreeFry(Low32(counters), High32(counters));
    if (width_ == 64) return Join64(x0, x1);
    if (rank == 0) return x0;
    // [.., half, 1, ..] x2 along the new unit dimension, then back to the
    // (rounded-up) result shape: element 2h+j of the split dimension is xj.
    std::vector<int64_t> half = gen_dims;
    half.insert(half.begin() + split + 1, 1);
    HloInstruction* pair = Concat({Reshape(x0, half), Reshape(x1, half)}, split + 1);
    std::vector<int64_t> rounded = gen_dims;
    rounded[split] *= 2;
    HloInstruction* full = Reshape(pair, rounded);
    if (rounded[split] != dims_[split]) {
      HloInstruction* s = Op(HloOpcode::kSlice, Shape(kU32, dims_), {full});
      std::vector<hlo::SliceDim> slice;
      for (int64_t d : dims_) slice.push_back({0, d, 1});
      s->SetAttribute("slice", slice);
      full = s;
    }
    return Reshape(full, {count_});
  }

  // Philox-4x32, 10 rounds, on u32 vectors.
  std::array<HloInstruction*, 4> Philox(std::array<HloInstruction*, 4> x) {
    for (uint32_t round = 0; round < 10; ++round) {
      HloInstruction* key0 = round == 0 ? k0_ : BinC(HloOpcode::kAdd, k0_, round * 0x9E3779B9u);
      HloInstruction* key1 = round == 0 ? k1_ : BinC(HloOpcode::kAdd, k1_, round * 0xBB67AE85u);
      HloInstruction* p0 = BinC(HloOpcode::kMultiply, Convert(x[0], kU64), 0xD2511F53u);
      HloInstruction* p1 = BinC(HloOpcode::kMultiply, Convert(x[2], kU64), 0xCD9E8D57u);
      x = {Bin(HloOpcode::kXor, Bin(HloOpcode::kXor, High32(p1), x[1]), key0), Low32(p1),
           Bin(HloOpcode::kXor, Bin(HloOpcode::kXor, High32(p0), x[3]), key1), Low32(p0)};
    }
    return x;
  }

  // 128-bit (lo, hi) + step, step a u64 scalar or vector.
  std::array<HloInstruction*, 2> Add128(HloInstruction* lo, HloInstruction* hi, HloInstruction* step) {
    const std::vector<int64_t>& dims = step->shape().dims();
    HloInstruction* lo_splat = Splat(lo, dims);
    HloInstruction* sum = Bin(HloOpcode::kAdd, lo_splat, step);
    HloInstruction* carried = Op(HloOpcode::kSelect, Shape(kU64, dims),
                                 {Less(sum, lo_splat), Splat(BinC(HloOpcode::kAdd, hi, 1), dims), Splat(hi, dims)});
    return {sum, carried};
  }

  StatusOr<HloInstruction*> PhiloxBits(HloInstruction* state, std::vector<HloInstruction*>& new_state) {
    HloInstruction* lo = Word(state, 1);
    HloInstruction* hi = state_size_ == 3 ? Word(state, 2) : key_;
    const int64_t per_counter = width_ == 64 ? 2 : 4;
    const int64_t m = (count_ + per_counter - 1) / per_counter;
    auto [next_lo, next_hi] = Add128(lo, hi, Const(kU64, static_cast<uint64_t>(m)));
    new_state = {key_, next_lo};
    if (state_size_ == 3) new_state.push_back(next_hi);
    if (count_ == 0) return nullptr;
    auto [clo, chi] = Add128(lo, hi, Iota(m));
    std::array<HloInstruction*, 4> x = Philox({Low32(clo), High32(clo), Low32(chi), High32(chi)});
    if (width_ == 64) return Prefix(Interleave({Join64(x[0], x[1]), Join64(x[2], x[3])}), count_);
    return Prefix(Interleave({x[0], x[1], x[2], x[3]}), count_);
  }

  // The flat generator bits as the declared result: shape, width, type.
  HloInstruction* Finish(HloInstruction* flat) {
    const ElementType unsigned_type = UnsignedOfWidth(width_);
    if (!flat) {  // no elements
      HloInstruction* c = Op(HloOpcode::kConstant, Shape(type_, dims_), {});
      c->set_literal(Literal(Shape(type_, dims_)));
      return c;
    }
    if (width_ < 32) flat = Convert(flat, unsigned_type);  // the low bits
    HloInstruction* bits = Reshape(flat, dims_);
    if (type_ != unsigned_type) bits = Op(HloOpcode::kBitcastConvert, Shape(type_, dims_), {bits});
    return bits;
  }

  HloInstruction* rng_;
  HloComputation& comp_;
  NameUniquer& names_;
  std::vector<int64_t> dims_;
  ElementType type_ = kU32;
  int width_ = 0;
  int64_t count_ = 0;
  int64_t state_size_ = 0;
  HloInstruction* key_ = nullptr;
  HloInstruction* k0_ = nullptr;  // low and high u32 halves of the key
  HloInstruction* k1_ = nullptr;
};

}  // namespace

StatusOr<bool> RngBitGeneratorExpander::Run(hlo::HloModule& module) {
  return ExpandInstructions(
      module, [](const HloInstruction& inst) { return inst.opcode() == HloOpcode::kRngBitGenerator; },
      [](HloInstruction* rng, NameUniquer& names) { return Expansion(rng, names).Run(); });
}

}  // namespace kiln::passes
