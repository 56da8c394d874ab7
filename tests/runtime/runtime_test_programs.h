// Hand-built thunk programs shared by the runtime tests, so the host, CUDA
// and fake-driver tests run the very same programs (and a fix to one reaches
// all): every size is written out by hand from the shapes, and the comment
// above each builder says what the program computes. Also the HLO of the
// kernels the fusion and while programs launch.
#pragma once

#include <cstdint>
#include <cstring>
#include <optional>
#include <string>
#include <utility>
#include <vector>

#include "tests/runtime/runtime_test_util.h"

namespace kiln::runtime::testing {

// fused(p0, p1) = (p0 + p1) * p0 over f32[2,3]: FusionProgram's kernel.
inline constexpr char kFusionModule[] = R"(
HloModule fusion_test

fused {
  p0 = f32[2,3] parameter(0)
  p1 = f32[2,3] parameter(1)
  a = f32[2,3] add(p0, p1)
  ROOT m = f32[2,3] multiply(a, p0)
}

ENTRY main {
  x = f32[2,3] parameter(0)
  y = f32[2,3] parameter(1)
  ROOT f = f32[2,3] fusion(x, y), kind=kLoop, calls=fused
}
)";

// body adds 1 to an s32[], cond is "< 10": WhileProgram's kernels.
inline constexpr char kWhileModule[] = R"(
HloModule while_test

body {
  p = s32[] parameter(0)
  one = s32[] constant(1)
  ROOT add = s32[] add(p, one)
}

cond {
  p = s32[] parameter(0)
  ten = s32[] constant(10)
  ROOT lt = pred[] compare(p, ten), direction=LT
}

ENTRY main {
  init = s32[] parameter(0)
  ROOT w = s32[] while(init), condition=cond, body=body
}
)";

// a0, a1: parameters f32[2,3] (24 B); a2: output. One kernel thunk
// "fusion.1" launching `kernel` with `launch`.
inline th::ThunkProgram FusionProgram(const std::string& kernel, th::LaunchDims launch = {}) {
  th::ThunkProgram p;
  p.allocations = {ParamAlloc(24, 0), ParamAlloc(24, 1), OutputAlloc(24, {})};
  Shape s(ElementType::kF32, {2, 3});
  p.signature.parameters = {s, s};
  p.signature.result = s;
  p.signature.parameter_leaves = {{0, {}, S(0, 0, 24)}, {1, {}, S(1, 0, 24)}};
  p.signature.result_leaves = {{{}, S(2, 0, 24)}};
  th::KernelThunk k{
      kernel, {{S(0, 0, 24), false}, {S(1, 0, 24), false}, {S(2, 0, 24), true}}, launch};
  p.root.thunks = {T("fusion.1", k)};
  return p;
}

// a0 param s32[]; a1 output s32[] (the loop state); a2 temp: [0:4] the
// body's result, [4:5] the predicate.
//   copy.in a0 -> a1
//   while.1 { lt: cond_lt(a1) -> pred } { add: body_add(a1) -> tmp;
//                                         copy.back tmp -> a1 }
inline th::ThunkProgram WhileProgram(std::optional<int64_t> trip_count,
                                     th::LaunchDims cond_launch = {},
                                     th::LaunchDims body_launch = {}) {
  th::ThunkProgram p;
  p.allocations = {ParamAlloc(4, 0), OutputAlloc(4, {}), TempAlloc(8)};
  p.signature.parameters = {Shape::Scalar(ElementType::kS32)};
  p.signature.result = Shape::Scalar(ElementType::kS32);
  p.signature.parameter_leaves = {{0, {}, S(0, 0, 4)}};
  p.signature.result_leaves = {{{}, S(1, 0, 4)}};
  th::WhileThunk w;
  w.condition.thunks = {
      T("lt", th::KernelThunk{"cond_lt", {{S(1, 0, 4), false}, {S(2, 4, 1), true}}, cond_launch})};
  w.predicate = S(2, 4, 1);
  w.body.thunks = {
      T("add", th::KernelThunk{"body_add", {{S(1, 0, 4), false}, {S(2, 0, 4), true}}, body_launch}),
      T("copy.back", th::CopyThunk{S(2, 0, 4), S(1, 0, 4)})};
  w.trip_count = trip_count;
  p.root.thunks = {T("copy.in", th::CopyThunk{S(0, 0, 4), S(1, 0, 4)}), T("while.1", w)};
  return p;
}

// a0 param f32[4] (16 B); a1 output {0} f32[4]; a2 output {1} f32[4]; a3 temp.
// copy a0->a3, copy a3->a1, memset a2 with 2.0f, memset a2[8:16] with 0:
// outputs (x, {2, 2, 0, 0}).
inline th::ThunkProgram CopyMemsetProgram() {
  th::ThunkProgram p;
  p.allocations = {ParamAlloc(16, 0), OutputAlloc(16, {0}), OutputAlloc(16, {1}), TempAlloc(16)};
  Shape f4(ElementType::kF32, {4});
  p.signature.parameters = {f4};
  p.signature.result = Shape::Tuple({f4, f4});
  p.signature.parameter_leaves = {{0, {}, S(0, 0, 16)}};
  p.signature.result_leaves = {{{0}, S(1, 0, 16)}, {{1}, S(2, 0, 16)}};
  p.root.thunks = {T("copy.1", th::CopyThunk{S(0, 0, 16), S(3, 0, 16)}),
                   T("copy.2", th::CopyThunk{S(3, 0, 16), S(1, 0, 16)}),
                   T("memset.3", th::MemsetThunk{S(2, 0, 16), 0x40000000u}),  // 2.0f
                   T("memset.4", th::MemsetThunk{S(2, 8, 8), 0})};
  return p;
}

// bf16 bits of a float that bf16 holds exactly (the top half of its bits).
inline uint16_t ExactBf16(float f) {
  uint32_t bits = 0;
  std::memcpy(&bits, &f, 4);
  return static_cast<uint16_t>(bits >> 16);
}

// "dot.1": lhs param [2,3], rhs constant [3,2] = [[7,8],[9,10],[11,12]],
// out [2,2]. Operands of `operands` (f32, f64, or bf16: the form
// DotCanonicalization gives bf16 dots compiled for CUDA), the result of
// `result` (the operands' type unless bf16, whose result is f32).
inline th::ThunkProgram GemmProgram(ElementType operands, ElementType result) {
  const int64_t in = operands == ElementType::kF64 ? 8 : operands == ElementType::kBF16 ? 2 : 4;
  const int64_t out = result == ElementType::kF64 ? 8 : 4;
  th::ThunkProgram p;
  th::Allocation rhs = TempAlloc(6 * in);
  rhs.constant = 0;
  p.allocations = {ParamAlloc(6 * in, 0), rhs, OutputAlloc(4 * out, {})};
  th::Constant c{"constant.rhs", {}};
  c.bytes.resize(6 * in);
  for (int i = 0; i < 6; ++i) {
    double d = 7 + i;
    float f = static_cast<float>(d);
    uint16_t b = ExactBf16(f);
    uint8_t* dst = c.bytes.data() + in * i;
    if (in == 8) std::memcpy(dst, &d, 8);
    else if (in == 2) std::memcpy(dst, &b, 2);
    else std::memcpy(dst, &f, 4);
  }
  p.constants = {c};
  p.signature.parameters = {Shape(operands, {2, 3})};
  p.signature.result = Shape(result, {2, 2});
  p.signature.parameter_leaves = {{0, {}, S(0, 0, 6 * in)}};
  p.signature.result_leaves = {{{}, S(2, 0, 4 * out)}};
  th::GemmThunk g;
  g.lhs = S(0, 0, 6 * in), g.rhs = S(1, 0, 6 * in), g.out = S(2, 0, 4 * out);
  g.lhs_type = g.rhs_type = operands;
  g.out_type = result;
  g.m = 2, g.n = 2, g.k = 3;
  g.lhs_leading_dim = 3, g.rhs_leading_dim = 2, g.out_leading_dim = 2;
  p.root.thunks = {T("dot.1", g)};
  return p;
}

// GemmProgram(kBF16, kF32)'s lhs: bf16[2,3] [[1,2,3],[4,5,6]]; its product is
// [[58,64],[139,154]].
inline Buffer GemmBf16Lhs() {
  std::vector<uint16_t> lhs;
  for (float f : {1, 2, 3, 4, 5, 6}) lhs.push_back(ExactBf16(f));
  return MakeBuffer<uint16_t>(ElementType::kBF16, {2, 3}, lhs);
}

// "dot.2": two f64[2,2,2] params, batch 2, rhs stored transposed,
// alpha = 2, beta = 0.5 (out starts zeroed, so beta has no visible effect).
inline th::ThunkProgram GemmBatchedTransposedF64Program() {
  th::ThunkProgram p;
  p.allocations = {ParamAlloc(64, 0), ParamAlloc(64, 1), OutputAlloc(64, {})};
  Shape s(ElementType::kF64, {2, 2, 2});
  p.signature.parameters = {s, s};
  p.signature.result = s;
  p.signature.parameter_leaves = {{0, {}, S(0, 0, 64)}, {1, {}, S(1, 0, 64)}};
  p.signature.result_leaves = {{{}, S(2, 0, 64)}};
  th::GemmThunk g;
  g.lhs = S(0, 0, 64), g.rhs = S(1, 0, 64), g.out = S(2, 0, 64);
  g.lhs_type = g.rhs_type = g.out_type = ElementType::kF64;
  g.m = g.n = g.k = 2;
  g.batch = 2;
  g.rhs_transposed = true;
  g.lhs_leading_dim = g.rhs_leading_dim = g.out_leading_dim = 2;
  g.lhs_batch_stride = g.rhs_batch_stride = g.out_batch_stride = 4;
  g.alpha_real = 2.0;
  g.beta = 0.5;
  p.root.thunks = {T("dot.2", g)};
  return p;
}

// "dot.3": s8[2,4] param x s8[2,4] param stored transposed ([n,k], cuBLAS'
// int8 form) -> s32[2,2], with an integer `alpha`.
inline th::ThunkProgram GemmInt8Program(double alpha) {
  th::ThunkProgram p;
  p.allocations = {ParamAlloc(8, 0), ParamAlloc(8, 1), OutputAlloc(16, {})};
  p.signature.parameters = {Shape(ElementType::kS8, {2, 4}), Shape(ElementType::kS8, {2, 4})};
  p.signature.result = Shape(ElementType::kS32, {2, 2});
  p.signature.parameter_leaves = {{0, {}, S(0, 0, 8)}, {1, {}, S(1, 0, 8)}};
  p.signature.result_leaves = {{{}, S(2, 0, 16)}};
  th::GemmThunk g;
  g.lhs = S(0, 0, 8), g.rhs = S(1, 0, 8), g.out = S(2, 0, 16);
  g.lhs_type = g.rhs_type = ElementType::kS8;
  g.out_type = ElementType::kS32;
  g.m = g.n = 2, g.k = 4;
  g.rhs_transposed = true;
  g.lhs_leading_dim = g.rhs_leading_dim = 4, g.out_leading_dim = 2;
  g.alpha_real = alpha;
  p.root.thunks = {T("dot.3", g)};
  return p;
}

// GemmInt8Program's operands: lhs [[-128 x4], [1,2,3,4]], rhs rows (the
// columns of the product) [-128 x4] and [127,-1,0,5]; the product is
// [[4*16384, -128*131], [-128*10, 127-2+20]] = [[65536, -16768], [-1280, 145]].
inline std::vector<Buffer> GemmInt8Operands() {
  return {MakeBuffer<int8_t>(ElementType::kS8, {2, 4}, {-128, -128, -128, -128, 1, 2, 3, 4}),
          MakeBuffer<int8_t>(ElementType::kS8, {2, 4}, {-128, -128, -128, -128, 127, -1, 0, 5})};
}

// Runs GemmInt8Program with alpha 1 and 2^15 (loaded by `load`) on
// GemmInt8Operands: the product above, then 2^15 times it, where 65536 *
// 2^15 = 2^31 wraps to -2^31 and the others stay in range.
template <typename Load>
void ExpectGemmInt8WrapsInS32(Load load) {
  const std::vector<std::pair<double, std::vector<int32_t>>> cases = {
      {1, {65536, -16768, -1280, 145}}, {32768, {INT32_MIN, -549453824, -41943040, 4751360}}};
  for (const auto& [alpha, want] : cases) {
    auto exe = load(GemmInt8Program(alpha));
    ASSERT_NE(exe, nullptr);
    StatusOr<ExecutionResult> r = exe->ExecuteSync(GemmInt8Operands());
    ASSERT_TRUE(r.ok()) << r.status().message();
    EXPECT_EQ(Read<int32_t>(r->outputs[0]), want) << "alpha " << alpha;
  }
}

// a0 param index (s32[] or pred[]), a1 output s32[]; "conditional.1" with
// branch b ("memset.b<b>") memsetting 10*(b+1).
inline th::ThunkProgram ConditionalProgram(bool is_pred) {
  th::ThunkProgram p;
  p.allocations = {ParamAlloc(is_pred ? 1 : 4, 0), OutputAlloc(4, {})};
  p.signature.parameters = {Shape::Scalar(is_pred ? ElementType::kPred : ElementType::kS32)};
  p.signature.result = Shape::Scalar(ElementType::kS32);
  p.signature.parameter_leaves = {{0, {}, S(0, 0, is_pred ? 1 : 4)}};
  p.signature.result_leaves = {{{}, S(1, 0, 4)}};
  th::ConditionalThunk c;
  c.branch_index = S(0, 0, is_pred ? 1 : 4);
  c.is_pred = is_pred;
  for (uint32_t b = 0; b < (is_pred ? 2u : 3u); ++b) {
    th::SequenceThunk seq;
    seq.thunks.push_back(
        T("memset.b" + std::to_string(b), th::MemsetThunk{S(1, 0, 4), 10 * (b + 1)}));
    c.branches.push_back(seq);
  }
  p.root.thunks = {T("conditional.1", c)};
  return p;
}

// a0 output f32[4], a1 temp. "while.1" with trip count 3 whose body shifts
// the output right by one element (an overlapping copy, "shift") and then
// sets element 0 to 1.0f ("set"); the condition ("cond") would memset the
// predicate to 0 and must not run. Result [1, 1, 1, 0].
inline th::ThunkProgram ShiftWhileProgram() {
  th::ThunkProgram p;
  p.allocations = {OutputAlloc(16, {}), TempAlloc(16)};
  p.signature.result = Shape(ElementType::kF32, {4});
  p.signature.result_leaves = {{{}, S(0, 0, 16)}};
  th::WhileThunk w;
  w.predicate = S(1, 0, 1);
  w.trip_count = 3;
  w.condition.thunks.push_back(T("cond", th::MemsetThunk{S(1, 0, 4), 0}));
  // out = [1, out[0], out[1], out[2]]: shift right then set element 0.
  w.body.thunks.push_back(T("shift", th::CopyThunk{S(0, 0, 12), S(0, 4, 12)}));
  w.body.thunks.push_back(T("set", th::MemsetThunk{S(0, 0, 4), 0x3f800000u}));
  p.root.thunks = {T("while.1", w)};
  return p;
}

// a0: parameter 0 f32[4] that is also the output (aliased, must_alias as
// given); "memset.1" sets a0[0:4] to 1.0f.
inline th::ThunkProgram AliasProgram(bool must_alias) {
  th::ThunkProgram p;
  th::Allocation a = ParamAlloc(16, 0);
  a.output = ShapeIndex{};
  p.allocations = {a};
  Shape f4(ElementType::kF32, {4});
  p.signature.parameters = {f4};
  p.signature.result = f4;
  p.signature.aliases = {{{}, 0, {}, must_alias}};
  p.signature.parameter_leaves = {{0, {}, S(0, 0, 16)}};
  p.signature.result_leaves = {{{}, S(0, 0, 16)}};
  p.root.thunks = {T("memset.1", th::MemsetThunk{S(0, 0, 4), 0x3f800000u})};
  return p;
}

// One "custom-call.1" thunk (target "kiln_test_target", no buffers) over an
// f32[4] output: a kind no backend runs yet.
inline th::ThunkProgram UnsupportedProgram() {
  th::ThunkProgram p;
  p.allocations = {OutputAlloc(16, {})};
  p.signature.result = Shape(ElementType::kF32, {4});
  p.signature.result_leaves = {{{}, S(0, 0, 16)}};
  th::CustomCallThunk c;
  c.target = "kiln_test_target";
  p.root.thunks = {T("custom-call.1", c)};
  return p;
}

// a0 param c64[8] (64 B), a1 output c64[8]. "fft.1" of `type` (kFft or
// kIfft, fft_length {8}) from a0 to a1; with `in_place`, "copy.in" a0 -> a1
// first and the transform reads and writes a1 (input slice == output
// slice, as a hand-made program may have). FFT of eight ones is
// {8, 0, ..., 0}; IFFT of {8, 0, ..., 0} is eight ones (normalized by 1/8).
inline th::ThunkProgram FftProgram(th::FftType type, bool in_place = false) {
  th::ThunkProgram p;
  p.allocations = {ParamAlloc(64, 0), OutputAlloc(64, {})};
  Shape c8(ElementType::kC64, {8});
  p.signature.parameters = {c8};
  p.signature.result = c8;
  p.signature.parameter_leaves = {{0, {}, S(0, 0, 64)}};
  p.signature.result_leaves = {{{}, S(1, 0, 64)}};
  th::FftThunk f{type, {8}, in_place ? S(1, 0, 64) : S(0, 0, 64), S(1, 0, 64), c8, c8};
  if (in_place) p.root.thunks.push_back(T("copy.in", th::CopyThunk{S(0, 0, 64), S(1, 0, 64)}));
  p.root.thunks.push_back(T("fft.1", f));
  return p;
}

// c64[8] buffers (interleaved real, imaginary) for FftProgram.
inline Buffer ComplexBuffer(const std::vector<float>& interleaved) {
  return MakeBuffer<float>(ElementType::kC64, {8}, interleaved);
}
inline std::vector<float> EightOnes() { return {1, 0, 1, 0, 1, 0, 1, 0, 1, 0, 1, 0, 1, 0, 1, 0}; }
inline std::vector<float> EightAtZero() { return {8, 0, 0, 0, 0, 0, 0, 0, 0, 0, 0, 0, 0, 0, 0, 0}; }
// Element-wise within 1e-5: the libraries' twiddles are not exact.
inline void ExpectNear(const std::vector<float>& actual, const std::vector<float>& expected) {
  ASSERT_EQ(actual.size(), expected.size());
  for (size_t i = 0; i < actual.size(); ++i) EXPECT_NEAR(actual[i], expected[i], 1e-5) << "at " << i;
}

}  // namespace kiln::runtime::testing
