// Differential sweep of the per-element arithmetic of kiln_codegen against
// the reference evaluator: every supported elementwise op, compare
// direction and convert pair, on every supported element type, over the
// cross product of special values (zeros of both signs, +-inf, NaNs of both
// signs, subnormals, the type's extremes, integer overflow and division
// corner cases, shift amounts around the bit width).
//
// Correctly rounded ops must agree bit for bit (for f16/bf16 too: computing
// in f32 and rounding once more is exact for + - * / sqrt because f32 has
// more than 2p+2 significand bits); transcendental functions (libm in the
// compute type vs the evaluator's f64) within a few ulps of the result type.
// The same kernels are compiled for CUDA and must pass ptxas.
#include <unistd.h>

#include <cmath>
#include <limits>

#include "common/float_formats.h"
#include "tests/codegen/codegen_test_util.h"

namespace kiln::codegen::testing {
namespace {

constexpr ElementType kFloats[] = {ElementType::kF16, ElementType::kBF16, ElementType::kF32,
                                   ElementType::kF64};
constexpr ElementType kInts[] = {ElementType::kS8,  ElementType::kS16, ElementType::kS32,
                                 ElementType::kS64, ElementType::kU8,  ElementType::kU16,
                                 ElementType::kU32, ElementType::kU64};

std::string Name(ElementType t) { return std::string(ElementTypeName(t)); }

// Special values of a type, stored (rounded or wrapped) into a literal.
Literal Specials(ElementType t) {
  if (IsPred(t)) return Literal::Vector(t, {0, 1});
  if (IsFloat(t)) {
    double nan = std::numeric_limits<double>::quiet_NaN();
    double inf = std::numeric_limits<double>::infinity();
    std::vector<double> v = {0,    -0.0, 1,    -1,   0.5,   -2.5,          2.5,          3,
                             -7,   0.1,  1e-3, 100,  -100,  MaxFinite(t),  -MaxFinite(t),
                             inf,  -inf, nan,  -nan, 1.5,   MinPositive(t), -MinNormal(t),
                             4e9,  -1e-30, 65519, 11.5};
    return Literal::Vector(t, v);
  }
  int bits = BitWidth(t);
  uint64_t mask = bits == 64 ? ~uint64_t{0} : (uint64_t{1} << bits) - 1;
  uint64_t top = uint64_t{1} << (bits - 1);
  std::vector<uint64_t> v = {0, 1, ~uint64_t{0}, 2, 3, 5, 7, uint64_t(-7), uint64_t(-8),
                             uint64_t(bits - 1), uint64_t(bits), uint64_t(bits + 1), 100,
                             uint64_t(-100), top, top - 1, top + 1, mask, mask - 1};
  Literal lit{Shape(t, {static_cast<int64_t>(v.size())})};
  for (size_t i = 0; i < v.size(); ++i) lit.SetU64(i, v[i] & mask);
  return lit;
}

// All pairs (a[i], b[j]) as two vectors of n*n elements.
std::pair<Literal, Literal> Pairs(const Literal& s) {
  int64_t n = s.element_count();
  Literal a{Shape(s.element_type(), {n * n})}, b{Shape(s.element_type(), {n * n})};
  for (int64_t i = 0; i < n * n; ++i) {
    a.CopyElementFrom(i, s, i / n);
    b.CopyElementFrom(i, s, i % n);
  }
  return {std::move(a), std::move(b)};
}

struct SweepKernel {
  std::string text;
  std::vector<Literal> args;
  bool exact = true;
  std::unique_ptr<hlo::HloModule> module;
};

class Sweep {
 public:
  void Unary(const std::string& op, ElementType in, ElementType out, bool exact,
             const std::string& attrs = "") {
    Literal s = Specials(in);
    int64_t n = s.element_count();
    Add("HloModule u\nENTRY e {\n  a = " + Name(in) + "[" + std::to_string(n) +
            "] parameter(0)\n  ROOT r = " + Name(out) + "[" + std::to_string(n) + "] " + op +
            "(a)" + attrs + "\n}\n",
        {std::move(s)}, exact);
  }

  void Binary(const std::string& op, ElementType in, ElementType out, bool exact,
              const std::string& attrs = "") {
    auto [a, b] = Pairs(Specials(in));
    std::string n = std::to_string(a.element_count());
    Add("HloModule b\nENTRY e {\n  a = " + Name(in) + "[" + n + "] parameter(0)\n  b = " +
            Name(in) + "[" + n + "] parameter(1)\n  ROOT r = " + Name(out) + "[" + n + "] " + op +
            "(a, b)" + attrs + "\n}\n",
        {std::move(a), std::move(b)}, exact);
  }

  void Select(ElementType t) {
    auto [a, b] = Pairs(Specials(t));
    int64_t n = a.element_count();
    Literal p{Shape(ElementType::kPred, {n})};
    for (int64_t i = 0; i < n; ++i) p.SetPred(i, (i * 5) % 3 == 0);
    std::string ns = std::to_string(n);
    Add("HloModule s\nENTRY e {\n  p = pred[" + ns + "] parameter(0)\n  a = " + Name(t) + "[" + ns +
            "] parameter(1)\n  b = " + Name(t) + "[" + ns + "] parameter(2)\n  ROOT r = " + Name(t) +
            "[" + ns + "] select(p, a, b)\n}\n",
        {std::move(p), std::move(a), std::move(b)}, true);
  }

  // Compiles everything for the host in one shared object, runs each kernel
  // and compares it with the evaluator; then compiles it all for CUDA.
  void Run() {
    std::vector<KernelSpec> specs;
    for (size_t i = 0; i < kernels_.size(); ++i) {
      kernels_[i].module = MustParse(kernels_[i].text);
      ASSERT_TRUE(kernels_[i].module) << kernels_[i].text;
      specs.push_back({"k" + std::to_string(i), kernels_[i].module->entry()});
    }
    StatusOr<CodegenResult> compiled = CompileKernels(specs, {});
    ASSERT_TRUE(compiled.ok()) << compiled.status().message();
    auto lib = LoadedLibrary::Load(compiled->host->shared_object);
    ASSERT_TRUE(lib.ok()) << lib.status().message();
    for (size_t i = 0; i < kernels_.size(); ++i) {
      SweepKernel& k = kernels_[i];
      SCOPED_TRACE(k.text);
      StatusOr<Literal> want = hlo::Evaluator().Evaluate(*k.module, k.args);
      ASSERT_TRUE(want.ok()) << want.status().message();
      KernelFn fn = FindKernel(**lib, *compiled->host, specs[i].name);
      ASSERT_NE(fn, nullptr);
      Literal got = RunKernel(fn, k.args, k.module->entry()->root()->shape());
      Compare(k, got, *want);
    }

    CodegenOptions cuda;
    cuda.host = false;
    cuda.cuda = true;
    StatusOr<CodegenResult> ptx = CompileKernels(specs, cuda);
    ASSERT_TRUE(ptx.ok()) << ptx.status().message();
    if (access("/usr/local/cuda/bin/ptxas", X_OK) == 0) {
      EXPECT_FALSE(ptx->cuda->cubin.empty());
    }
  }

 private:
  void Add(std::string text, std::vector<Literal> args, bool exact) {
    SweepKernel k;
    k.text = std::move(text);
    k.args = std::move(args);
    k.exact = exact;
    kernels_.push_back(std::move(k));
  }

  static std::string Inputs(const SweepKernel& k, int64_t i) {
    std::string s;
    for (const Literal& a : k.args) s += " " + std::to_string(a.GetF64(i));
    return s;
  }

  static void Compare(const SweepKernel& k, const Literal& got, const Literal& want) {
    ElementType t = want.element_type();
    int failures = 0;
    for (int64_t i = 0; i < want.element_count() && failures < 5; ++i) {
      bool ok;
      if (IsFloat(t)) {
        double g = got.GetF64(i), w = want.GetF64(i);
        if (std::isnan(w)) {
          ok = std::isnan(g);
        } else if (k.exact || std::isinf(w)) {
          ok = g == w && std::signbit(g) == std::signbit(w);
        } else {
          // A few ulps of the result type (f16 and bf16 results were
          // computed in f32 and rounded once more).
          const FloatFormat* f = FindFloatFormat(t);
          double ulps = t == ElementType::kF16 || t == ElementType::kBF16 ? 1 : 4;
          double tol = std::max(ulps * std::ldexp(std::fabs(w), -f->mantissa_bits), MinNormal(t));
          ok = std::fabs(g - w) <= tol;
        }
      } else {
        ok = got.GetU64(i) == want.GetU64(i);
      }
      if (!ok) {
        ++failures;
        ADD_FAILURE() << "element " << i << " (inputs" << Inputs(k, i) << "): got "
                      << got.GetF64(i) << ", want " << want.GetF64(i);
      }
    }
  }

  std::vector<SweepKernel> kernels_;
};

TEST(ElementwiseSweepTest, FloatOps) {
  Sweep sweep;
  for (ElementType t : kFloats) {
    for (const char* op : {"add", "subtract", "multiply", "divide", "remainder", "maximum",
                           "minimum"})
      sweep.Binary(op, t, t, true);
    for (const char* op : {"power", "atan2"}) sweep.Binary(op, t, t, false);
    for (const char* op : {"negate", "abs", "sign", "floor", "ceil", "round-nearest-afz",
                           "round-nearest-even", "sqrt", "copy"})
      sweep.Unary(op, t, t, true);
    sweep.Unary("is-finite", t, ElementType::kPred, true);
    for (const char* op : {"exponential", "exponential-minus-one", "log", "log-plus-one", "tanh",
                           "logistic", "sine", "cosine", "tan", "erf", "cbrt", "rsqrt"})
      sweep.Unary(op, t, t, false);
    sweep.Select(t);
  }
  sweep.Run();
}

TEST(ElementwiseSweepTest, IntegerAndPredOps) {
  Sweep sweep;
  for (ElementType t : kInts) {
    for (const char* op : {"add", "subtract", "multiply", "divide", "remainder", "maximum",
                           "minimum", "and", "or", "xor", "shift-left", "shift-right-logical",
                           "shift-right-arithmetic"})
      sweep.Binary(op, t, t, true);
    for (const char* op : {"negate", "abs", "sign", "not", "popcnt", "count-leading-zeros"})
      sweep.Unary(op, t, t, true);
    sweep.Select(t);
  }
  for (const char* op : {"and", "or", "xor", "maximum", "minimum"})
    sweep.Binary(op, ElementType::kPred, ElementType::kPred, true);
  sweep.Unary("not", ElementType::kPred, ElementType::kPred, true);
  sweep.Select(ElementType::kPred);
  sweep.Run();
}

TEST(ElementwiseSweepTest, Compares) {
  Sweep sweep;
  std::vector<ElementType> types(std::begin(kFloats), std::end(kFloats));
  types.insert(types.end(), std::begin(kInts), std::end(kInts));
  types.push_back(ElementType::kPred);
  for (ElementType t : types) {
    for (const char* dir : {"EQ", "NE", "LT", "LE", "GT", "GE"}) {
      sweep.Binary("compare", t, ElementType::kPred, true, std::string(", direction=") + dir);
      if (IsFloat(t))
        sweep.Binary("compare", t, ElementType::kPred, true,
                     std::string(", direction=") + dir + ", type=TOTALORDER");
    }
  }
  sweep.Run();
}

TEST(ElementwiseSweepTest, Converts) {
  Sweep sweep;
  std::vector<ElementType> types(std::begin(kFloats), std::end(kFloats));
  types.insert(types.end(), std::begin(kInts), std::end(kInts));
  types.push_back(ElementType::kPred);
  for (ElementType from : types)
    for (ElementType to : types)
      if (from != to) sweep.Unary("convert", from, to, true);
  sweep.Run();
}

}  // namespace
}  // namespace kiln::codegen::testing
