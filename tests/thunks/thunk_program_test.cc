// Tests of the thunk model: validation (positive and each class of
// rejection), the text form, and the generic walkers. Expected strings and
// sizes are written by hand from the sample program in
// tests/support/sample_artifact.h.
#include <gtest/gtest.h>

#include <limits>

#include "tests/support/sample_artifact.h"
#include "thunks/program_text.h"
#include "thunks/validate.h"

namespace kiln::thunks {
namespace {

using ::kiln::testing::MakeThunk;
using ::kiln::testing::S;
using ::kiln::testing::SampleProgram;

// The error of ValidateProgram, or "OK".
std::string ValidationError(const ThunkProgram& p) {
  Status s = ValidateProgram(p);
  return s.ok() ? "OK" : s.message();
}

template <typename T>
T& RootBody(ThunkProgram& p, size_t i) {
  return *p.root.thunks.at(i).As<T>();
}

TEST(ValidateProgram, SampleIsValid) { EXPECT_EQ(ValidationError(SampleProgram()), "OK"); }

TEST(ValidateProgram, SliceOutOfBounds) {
  ThunkProgram p = SampleProgram();
  // a5 has 4096 bytes; [4090, 4154) runs 58 bytes past its end.
  RootBody<KernelThunk>(p, 0).args[2].slice = S(5, 4090, 64);
  const std::string error = ValidationError(p);
  EXPECT_NE(error.find("kernel thunk 'fusion.3'"), std::string::npos) << error;
  EXPECT_NE(error.find("out of bounds of allocation 5 (size 4096)"), std::string::npos) << error;
}

TEST(ValidateProgram, SliceOffsetOverflowIsRejected) {
  ThunkProgram p = SampleProgram();
  // offset + size would overflow int64; a naive "offset + size <= 4096"
  // check would wrap around and accept it.
  RootBody<CopyThunk>(p, 4).destination = S(5, std::numeric_limits<int64_t>::max() - 8, 64);
  RootBody<CopyThunk>(p, 4).source.size = 64;
  EXPECT_NE(ValidationError(p).find("out of bounds"), std::string::npos);
  RootBody<CopyThunk>(p, 4).destination = S(5, -8, 64);
  EXPECT_NE(ValidationError(p).find("out of bounds"), std::string::npos);
}

TEST(ValidateProgram, UnknownAllocation) {
  ThunkProgram p = SampleProgram();
  RootBody<CopyThunk>(p, 4).source = S(6, 0, 64);
  EXPECT_NE(ValidationError(p).find("refers to allocation 6 but the program has 6"),
            std::string::npos)
      << ValidationError(p);
}

TEST(ValidateProgram, ConstantSizeMustMatchAllocation) {
  ThunkProgram p = SampleProgram();
  p.constants[0].bytes.resize(12);
  EXPECT_EQ(ValidationError(p),
            "allocation 4 has size 16 but constant 0 ('constant.1') has 12 bytes");
}

TEST(ValidateProgram, GemmOperandsMustFitTheirStrides) {
  ThunkProgram p = SampleProgram();
  // out is 4x4 f32 with leading dim 4: 16 elements = 64 bytes are needed.
  RootBody<GemmThunk>(p, 1).out.size = 60;
  EXPECT_NE(ValidationError(p).find("holds 60 bytes but needs 64"), std::string::npos)
      << ValidationError(p);

  p = SampleProgram();
  // With batch 2 and batch stride 16 the lhs spans 32 elements = 128 bytes,
  // twice the 64-byte slice.
  GemmThunk& g = RootBody<GemmThunk>(p, 1);
  g.batch = 2;
  g.lhs_batch_stride = 16;
  EXPECT_NE(ValidationError(p).find("lhs slice a0[0:64] holds 64 bytes but needs 128"),
            std::string::npos)
      << ValidationError(p);

  p = SampleProgram();
  RootBody<GemmThunk>(p, 1).lhs_leading_dim = 3;  // rows of 4 cannot be 3 apart
  EXPECT_NE(ValidationError(p).find("lhs size overflows"), std::string::npos)
      << ValidationError(p);

  // TF32 rounds f32 operands; a bf16 GEMM has none.
  p = SampleProgram();
  RootBody<GemmThunk>(p, 1).lhs_type = RootBody<GemmThunk>(p, 1).rhs_type = ElementType::kBF16;
  EXPECT_EQ(ValidationError(p), "gemm thunk 'dot.4': tf32 on a gemm that is not f32 x f32 -> f32");
}

// f8 operands only in an FP8 GEMM (a type pair cuBLASLt multiplies) of
// the TN form: lhs [m,k], rhs [n,k], k and n multiples of 16.
TEST(ValidateProgram, Fp8GemmsMustBeInCublasLtsForm) {
  auto fp8 = [](ElementType lhs, ElementType rhs, int64_t k) {
    ThunkProgram p = SampleProgram();
    GemmThunk& g = RootBody<GemmThunk>(p, 1);
    g.lhs_type = lhs;
    g.rhs_type = rhs;
    g.out_type = ElementType::kBF16;
    g.tf32 = false;
    g.m = 2, g.n = 16, g.k = k;  // lhs 2 x k f8, rhs 16 x k f8, out 2 x 16 bf16 (64 bytes)
    g.rhs = S(5, 0, 256);
    g.lhs_leading_dim = g.rhs_leading_dim = k, g.out_leading_dim = 16;
    g.rhs_transposed = true;
    return p;
  };
  EXPECT_EQ(ValidationError(fp8(ElementType::kF8E4M3FN, ElementType::kF8E5M2, 16)), "OK");
  EXPECT_EQ(ValidationError(fp8(ElementType::kF8E5M2, ElementType::kF8E5M2, 16)),
            "gemm thunk 'dot.4': fp8 gemm of f8e5m2 x f8e5m2 -> bf16 (FP8 GEMMs take f8e4m3fn x f8e4m3fn, f8e4m3fn x "
            "f8e5m2 or f8e5m2 x f8e4m3fn -> f32, bf16 or f16)");
  EXPECT_EQ(ValidationError(fp8(ElementType::kF8E4M3FN, ElementType::kF8E4M3FN, 8)),
            "gemm thunk 'dot.4': fp8 gemm of f8e4m3fn x f8e4m3fn -> bf16 not in the TN form (lhs [m,k], rhs [n,k], k "
            "and n multiples of 16)");
  ThunkProgram nn = fp8(ElementType::kF8E4M3FN, ElementType::kF8E4M3FN, 16);
  RootBody<GemmThunk>(nn, 1).rhs_transposed = false;
  EXPECT_NE(ValidationError(nn).find("not in the TN form"), std::string::npos) << ValidationError(nn);
}

TEST(ValidateProgram, SignatureMustCoverEveryLeaf) {
  ThunkProgram p = SampleProgram();
  p.signature.parameter_leaves.pop_back();
  EXPECT_EQ(ValidationError(p), "signature: 2 parameter leaves listed, 3 expected");

  p = SampleProgram();
  p.signature.result_leaves[0].slice = S(3, 0, 32);  // f32[4,4] needs 64 bytes
  EXPECT_EQ(ValidationError(p),
            "signature: result leaf {0} (f32[4,4]{1,0}, 64 bytes) has a slice of 32 bytes");

  p = SampleProgram();
  p.signature.result_leaves[0].slice = S(5, 0, 64);  // a5 is a temporary
  EXPECT_EQ(ValidationError(p), "signature: result leaf {0} lives in allocation 5, a temporary");

  p = SampleProgram();
  p.signature.parameter_leaves[0].slice = S(3, 0, 64);  // a3 is an output, not parameter 0
  EXPECT_NE(ValidationError(p).find("which is not that parameter's allocation"),
            std::string::npos);
}

// negate(f32[<=4]) as DynamicPadder lays it out: parameter 1 carries the
// argument's size, the root (result, size) returns it. No thunks: the
// validator only reads the signature here.
ThunkProgram DynamicProgram() {
  ThunkProgram p;
  Shape bounded(ElementType::kF32, {4});
  bounded.set_dynamic_dim(0, true);
  const Shape size = Shape::Scalar(ElementType::kS32);
  p.allocations = {Allocation{16, 64, ParameterRef{0, {}}, ShapeIndex{0}, std::nullopt},
                   Allocation{4, 64, ParameterRef{1, {}}, ShapeIndex{1}, std::nullopt}};
  p.signature.parameters = {bounded, size};
  p.signature.result = Shape::Tuple({bounded, size});
  p.signature.parameter_leaves = {{0, {}, S(0, 0, 16)}, {1, {}, S(1, 0, 4)}};
  p.signature.result_leaves = {{{0}, S(0, 0, 16)}, {{1}, S(1, 0, 4)}};
  p.signature.dynamic_dimensions = {{false, 0, 0, 1}, {true, 0, 0, 1}};
  return p;
}

TEST(ValidateProgram, DynamicDimensionsNeedTheirOwnSizeLeaves) {
  EXPECT_EQ(ValidationError(DynamicProgram()), "OK");
  EXPECT_EQ(CallerParameterLeafCount(DynamicProgram().signature), 1);
  EXPECT_EQ(CallerResultShape(DynamicProgram().signature).ToString(false), "f32[<=4]");
  ThunkProgram p = DynamicProgram();
  p.signature.dynamic_dimensions.pop_back();
  EXPECT_EQ(ValidationError(p), "signature: dynamic dimension 0 of result leaf 0 has no size leaf");
  p = DynamicProgram();
  p.signature.dynamic_dimensions[0].dimension = 1;
  EXPECT_EQ(ValidationError(p),
            "signature: dynamic dimension 1 of parameter leaf 0: f32[<=4] has no such dynamic dimension");
  p = DynamicProgram();
  p.signature.dynamic_dimensions[0].size_leaf = 0;
  EXPECT_EQ(ValidationError(p), "signature: dynamic dimension 0 of parameter leaf 0: size leaf 0 is not a trailing leaf");
  p = DynamicProgram();
  p.signature.dynamic_dimensions.push_back({false, 0, 0, 1});  // leaf 0 counts as a size leaf now
  EXPECT_EQ(ValidationError(p), "signature: dynamic dimension 0 of parameter leaf 0: no such caller leaf");
  p = DynamicProgram();
  p.signature.result = Shape::Tuple({p.signature.result});
  p.signature.result_leaves = {{{0, 0}, S(0, 0, 16)}, {{0, 1}, S(1, 0, 4)}};
  p.allocations[0].output = ShapeIndex{0, 0};
  p.allocations[1].output = ShapeIndex{0, 1};
  EXPECT_EQ(ValidationError(p), "signature: a result with dynamic sizes must be (caller result, sizes...)");
  p = DynamicProgram();
  p.signature.parameters[1] = Shape::Scalar(ElementType::kF32);
  EXPECT_EQ(ValidationError(p), "signature: dynamic dimension 0 of parameter leaf 0: its size leaf is not s32[]");
  p = DynamicProgram();
  p.signature.parameters[0].set_dynamic_dim(0, false);
  EXPECT_EQ(ValidationError(p),
            "signature: dynamic dimension 0 of parameter leaf 0: f32[4] has no such dynamic dimension");
  p = DynamicProgram();
  p.signature.dynamic_dimensions.erase(p.signature.dynamic_dimensions.begin());
  p.signature.parameters.pop_back();
  p.signature.parameter_leaves.pop_back();
  p.allocations[1].parameter.reset();
  EXPECT_EQ(ValidationError(p), "signature: dynamic dimension 0 of parameter leaf 0 has no size leaf");
}

TEST(ValidateProgram, AliasShapesMustAgree) {
  ThunkProgram p = SampleProgram();
  p.signature.aliases[0].parameter_index = {1};  // s32[] cannot alias f32[8]
  EXPECT_EQ(ValidationError(p),
            "signature: alias of output {1} to parameter 1 {1}: shapes f32[8] and s32[] differ");
}

TEST(ValidateProgram, ThunkTreeDepthIsBounded) {
  // n nested sequence thunks put the innermost sequence at level n + 1
  // (the root sequence is level 1); the limit is kMaxThunkDepth levels.
  auto nested = [](int n) {
    ThunkProgram p = SampleProgram();
    SequenceThunk inner;
    inner.thunks.push_back(MakeThunk("leaf", CopyThunk{S(5, 0, 4), S(5, 4, 4)}));
    for (int i = 0; i < n; ++i) {
      SequenceThunk outer;
      outer.thunks.push_back(MakeThunk("seq", inner));
      inner = std::move(outer);
    }
    p.root = std::move(inner);
    return p;
  };
  EXPECT_EQ(ValidationError(nested(kMaxThunkDepth - 1)), "OK");
  EXPECT_EQ(ValidationError(nested(kMaxThunkDepth)), "the thunk tree is deeper than 64 levels");
}

TEST(ValidateProgram, PerKindRules) {
  ThunkProgram p = SampleProgram();
  RootBody<CopyThunk>(p, 4).destination.size = 32;
  EXPECT_NE(ValidationError(p).find("sizes differ (64 vs 32)"), std::string::npos);

  p = SampleProgram();
  RootBody<MemsetThunk>(p, 5).destination.size = 6;  // pattern 0x3f800000 needs 4-byte units
  EXPECT_NE(ValidationError(p).find("multiple of 4"), std::string::npos);

  p = SampleProgram();
  RootBody<ConditionalThunk>(p, 8).is_pred = true;  // 3 branches, PRED needs 2
  EXPECT_NE(ValidationError(p).find("exactly 2 branches"), std::string::npos);

  p = SampleProgram();
  RootBody<AllReduceThunk>(p, 9).config.replica_groups = {{0, 1}, {1, 2}};
  EXPECT_NE(ValidationError(p).find("replica id 1 is negative or repeated"), std::string::npos);

  // Resolved device groups must partition the grid's 4 devices.
  p = SampleProgram();
  RootBody<AllGatherThunk>(p, 10).config.device_groups = {{0, 1}, {2}};
  EXPECT_NE(ValidationError(p).find("cover 3 of 4 devices"), std::string::npos);
  p = SampleProgram();
  RootBody<AllGatherThunk>(p, 10).config.device_groups = {{0, 1}, {2, 4}};
  EXPECT_NE(ValidationError(p).find("device 4 is outside the 4 devices"), std::string::npos);
  // An all-gather over groups of 2 writes twice its source.
  p = SampleProgram();
  RootBody<AllGatherThunk>(p, 10).buffers[0].destination.size = 16;
  EXPECT_NE(ValidationError(p).find("does not match its source and group size"), std::string::npos);
  // and/or have no meaning for floats.
  p = SampleProgram();
  RootBody<AllReduceThunk>(p, 9).reduction = ReductionKind::kAnd;
  EXPECT_NE(ValidationError(p).find("and reduction of f32 is not defined"), std::string::npos);
  // An async start without its done.
  p = SampleProgram();
  p.root.thunks.erase(p.root.thunks.end() - 2);
  EXPECT_NE(ValidationError(p).find("async collective 0 has 1 start(s) and 0 done(s)"), std::string::npos);

  p = SampleProgram();
  RootBody<KernelThunk>(p, 0).launch.block.x = 0;
  EXPECT_NE(ValidationError(p).find("invalid launch dimensions (0,1,1)"), std::string::npos);

  p = SampleProgram();
  RootBody<ConvolutionThunk>(p, 2).window.pop_back();  // 2 spatial dims, 1 window dim
  EXPECT_NE(ValidationError(p).find("dimension numbers do not match"), std::string::npos);

  p = SampleProgram();
  RootBody<FftThunk>(p, 3).output.size = 32;  // c64[8] is 64 bytes
  EXPECT_NE(ValidationError(p).find("holds 32 bytes but needs 64"), std::string::npos);

  p = SampleProgram();
  RootBody<RngGetAndUpdateStateThunk>(p, 15).state.size = 8;  // u64[2] is 16 bytes
  EXPECT_NE(ValidationError(p).find("state slice"), std::string::npos);
  EXPECT_NE(ValidationError(p).find("holds 8 bytes but needs 16"), std::string::npos);

  p = SampleProgram();
  RootBody<CholeskyThunk>(p, 16).batch = 2;  // two f32[4,4] are 128 bytes, 2 statuses 8
  EXPECT_NE(ValidationError(p).find("a slice a5[3200:3264] holds 64 bytes but needs 128"), std::string::npos);

  p = SampleProgram();
  RootBody<CholeskyThunk>(p, 16).info = S(5, 3260, 4);  // the last matrix element
  EXPECT_NE(ValidationError(p).find("a and info overlap"), std::string::npos);

  p = SampleProgram();
  RootBody<CholeskyThunk>(p, 16).type = ElementType::kF16;
  EXPECT_NE(ValidationError(p).find("element type f16 (cholesky takes f32, f64, c64 and c128)"), std::string::npos);

  p = SampleProgram();
  RootBody<TriangularSolveThunk>(p, 17).left_side = false;  // a is then 3x3 per batch: 144 bytes
  EXPECT_NE(ValidationError(p).find("a slice a5[3328:3392] holds 64 bytes but needs 144"), std::string::npos);

  p = SampleProgram();
  RootBody<TriangularSolveThunk>(p, 17).b = S(5, 3384, 96);  // starts in a's last element
  EXPECT_NE(ValidationError(p).find("a and b overlap"), std::string::npos);

  p = SampleProgram();
  RootBody<TriangularSolveThunk>(p, 17).transpose_a = static_cast<TriangularSolveTranspose>(3);
  EXPECT_NE(ValidationError(p).find("invalid transpose_a"), std::string::npos);

  p = SampleProgram();
  RootBody<RadixSortThunk>(p, 19).rows = 3;  // 24 bf16 keys are 48 bytes
  EXPECT_NE(ValidationError(p).find("keys slice a5[3712:3744] holds 32 bytes but needs 48"), std::string::npos);

  p = SampleProgram();
  RootBody<RadixSortThunk>(p, 19).key_type = ElementType::kS16;  // s16 keys are not floats
  EXPECT_NE(ValidationError(p).find("key type s16 cannot be sorted in float-numpy order"), std::string::npos);

  p = SampleProgram();
  RootBody<RadixSortThunk>(p, 19).values_out = S(5, 3724, 64);  // gathered from the keys it overlaps
  EXPECT_NE(ValidationError(p).find("an output overlaps an input"), std::string::npos);

  p = SampleProgram();
  RootBody<RadixSortThunk>(p, 19).values_out.reset();
  EXPECT_NE(ValidationError(p).find("values without values_out"), std::string::npos);
}

TEST(ThunkText, KernelLineMatchesTheDocumentedForm) {
  ThunkProgram p = SampleProgram();
  EXPECT_EQ(ThunkLine(p.root.thunks[0]),
            "kernel fusion.3 fn=fusion_3 grid=(1,1,1) block=(64,1,1) "
            "args=[a0[0:64], a4[0:16], a5[0:64] (written)]  ; hlo: add.1, multiply.2");
  // Same name for kernel and thunk: no fn=.
  RootBody<KernelThunk>(p, 0).kernel_name = "fusion.3";
  EXPECT_EQ(ThunkLine(p.root.thunks[0]).substr(0, 37), "kernel fusion.3 grid=(1,1,1) block=(6");
}

TEST(ThunkText, LibraryAndDataMovementLines) {
  const ThunkProgram p = SampleProgram();
  EXPECT_EQ(ThunkLine(p.root.thunks[1]),
            "gemm dot.4 lhs=a0[0:64] rhs=a5[0:64]^T out=a3[0:64] types=f32,f32->f32 m=4 n=4 k=4 "
            "batch=1 ld=(4,4,4) alpha=1 beta=0.5 tf32 workspace=a5[1024:2048]  ; hlo: dot.4");
  EXPECT_EQ(ThunkLine(p.root.thunks[3]),
            "fft fft.6 type=FFT length=[8] in=a5[256:320] c64[8] out=a5[320:384] c64[8]");
  EXPECT_EQ(ThunkLine(p.root.thunks[4]), "copy copy.7 a0[0:64] -> a5[512:576]");
  EXPECT_EQ(ThunkLine(p.root.thunks[5]), "memset memset.8 a5[576:640] pattern=0x3f800000");
  EXPECT_EQ(ThunkLine(p.root.thunks[9]),
            "all-reduce all-reduce.11 reduction=max groups={{0,1},{2,3}} channel=1 devices={{0,1},{2,3}} "
            "async=0 buffers=[f32x16 a3[0:64] -> a5[1024:1088]]");
  EXPECT_EQ(ThunkLine(p.root.thunks[13]),
            "collective-permute collective-permute.17 pairs={{0,1},{1,0}} channel=2 "
            "buffers=[bf16x32 a5[0:64] -> a5[2300:2364]] device_pairs={{0,1},{1,0},{2,3},{3,2}}");
  EXPECT_EQ(ThunkLine(p.root.thunks[21]), "collective-done all-reduce-done.26 async=0");
  EXPECT_EQ(ThunkLine(p.root.thunks[22]), "device-id replica-id.27 partition -> a5[3936:3940]");
  EXPECT_EQ(ThunkLine(p.root.thunks[14]),
            "custom-call custom-call.18 target=\"my_target\" operands=[a0[0:64]] "
            "results=[a5[3000:3064]] config=\"{\\\"k\\\": 1}\\x00\\x01\\xff\" api_version=2");
  EXPECT_EQ(ThunkLine(p.root.thunks[15]),
            "rng-get-and-update-state rng-get-and-update-state.19 a5[3100:3116] delta=-131072");
  EXPECT_EQ(ThunkLine(p.root.thunks[16]),
            "cholesky cholesky.19 lower a=a5[3200:3264] info=a5[3264:3268] type=f32 n=4 batch=1");
  EXPECT_EQ(ThunkLine(p.root.thunks[17]),
            "triangular-solve triangular-solve.22 left upper ADJOINT unit_diagonal a=a5[3328:3392] "
            "b=a5[3392:3488] type=f64 m=2 n=3 batch=2");
  EXPECT_EQ(ThunkLine(p.root.thunks[18]),
            "linalg svd.23 gesdd a=a5[3584:3608] a5[3616:3624] a5[3632:3656] a5[3664:3680] a5[3680:3684] "
            "mode=S type=f32 m=3 n=2 batch=1");
  EXPECT_EQ(ThunkLine(p.root.thunks[19]),
            "radix-sort sort.24 descending float-numpy keys=a5[3712:3744] -> a5[3744:3776] key_type=bf16 "
            "values=a5[3776:3840] -> a5[3840:3904] value_type=s32 rows=2 row_length=8");
}

TEST(ThunkText, ControlFlowIsIndented) {
  ThunkProgram p = SampleProgram();
  SequenceThunk only_loop;
  only_loop.thunks.push_back(p.root.thunks[7]);
  EXPECT_EQ(ThunkTreeToText(only_loop),
            "  while while.9 pred=a5[700:701] trip_count=10\n"
            "    condition:\n"
            "      kernel compare.20 fn=compare_20 grid=(1,1,1) block=(1,1,1) "
            "args=[a2[0:4], a5[700:701] (written)]\n"
            "    body:\n"
            "      kernel add.21 fn=add_21 grid=(1,1,1) block=(1,1,1) smem=16 "
            "args=[a5[704:708] (written)]\n");
  SequenceThunk only_call;
  only_call.thunks.push_back(p.root.thunks[6]);
  EXPECT_EQ(ThunkTreeToText(only_call, 0),
            "sequence call.12 (1 thunks)\n  copy copy.13 a5[0:16] -> a5[16:32]\n");
}

TEST(ThunkText, SignatureAllocationsConstants) {
  const ThunkProgram p = SampleProgram();
  EXPECT_EQ(SignatureToText(p),
            "  parameter 0: f32[4,4]{1,0}\n"
            "    {} -> a0[0:64]\n"
            "  parameter 1: (f32[8], s32[])\n"
            "    {0} -> a1[0:32]\n"
            "    {1} -> a2[0:4]\n"
            "  result: (f32[4,4]{1,0}, f32[8])\n"
            "    {0} -> a3[0:64]\n"
            "    {1} -> a1[0:32]\n"
            "  alias: output {1} <- parameter 1 {0} (may-alias)\n");
  EXPECT_EQ(AllocationsToText(p),
            "  a0 size=64 align=64 parameter 0 {}\n"
            "  a1 size=32 align=64 parameter 1 {0} output {1}\n"
            "  a2 size=4 align=64 parameter 1 {1}\n"
            "  a3 size=64 align=64 output {0}\n"
            "  a4 size=16 align=64 constant 0\n"
            "  a5 size=4096 align=64 temp\n");
  // 1.0f, 2.0f, 3.0f, 4.0f little-endian: 0x3f800000, 0x40000000,
  // 0x40400000, 0x40800000.
  EXPECT_EQ(ConstantsToText(p),
            "  c0 constant.1 16 bytes: 00 00 80 3f 00 00 00 40 00 00 40 40 00 00 80 40\n");
  const std::string text = ProgramToText(p);
  EXPECT_EQ(text.rfind("signature:\n", 0), 0u);
  EXPECT_NE(text.find("\nprogram:\n  kernel fusion.3"), std::string::npos);
}

TEST(ThunkModel, KindsFollowTheVariantOrder) {
  const ThunkProgram p = SampleProgram();
  const ThunkKind expected[] = {
      ThunkKind::kKernel,    ThunkKind::kGemm,          ThunkKind::kConvolution,
      ThunkKind::kFft,       ThunkKind::kCopy,          ThunkKind::kMemset,
      ThunkKind::kSequence,  ThunkKind::kWhile,         ThunkKind::kConditional,
      ThunkKind::kAllReduce, ThunkKind::kAllGather,     ThunkKind::kReduceScatter,
      ThunkKind::kAllToAll,  ThunkKind::kCollectivePermute, ThunkKind::kCustomCall,
      ThunkKind::kRngGetAndUpdateState, ThunkKind::kCholesky, ThunkKind::kTriangularSolve,
      ThunkKind::kLinalg, ThunkKind::kRadixSort, ThunkKind::kCollectiveBroadcast, ThunkKind::kCollectiveDone,
      ThunkKind::kDeviceId};
  ASSERT_EQ(p.root.thunks.size(), std::size(expected));
  for (size_t i = 0; i < std::size(expected); ++i) {
    EXPECT_EQ(p.root.thunks[i].kind(), expected[i]) << i;
  }
  EXPECT_EQ(ThunkKindName(ThunkKind::kCollectivePermute), "collective-permute");
  EXPECT_EQ(ThunkKindName(ThunkKind::kTriangularSolve), "triangular-solve");
  EXPECT_EQ(ThunkKindName(ThunkKind::kLinalg), "linalg");
  EXPECT_EQ(ThunkKindName(ThunkKind::kRadixSort), "radix-sort");
}

TEST(ThunkModel, Walkers) {
  const ThunkProgram p = SampleProgram();
  // 23 root thunks + copy.13 in call.12 + one thunk in each of the while's
  // condition and body + one memset in each of 3 branches = 29.
  int count = 0, max_depth = 0;
  ForEachThunk(p.root, [&](const Thunk&, int depth) {
    ++count;
    max_depth = std::max(max_depth, depth);
  });
  EXPECT_EQ(count, 29);
  EXPECT_EQ(max_depth, 2);

  EXPECT_EQ(DirectSlices(p.root.thunks[1]),
            (std::vector<BufferSlice>{S(0, 0, 64), S(5, 0, 64), S(3, 0, 64), S(5, 1024, 1024)}));
  EXPECT_EQ(DirectSlices(p.root.thunks[16]), (std::vector<BufferSlice>{S(5, 3200, 64), S(5, 3264, 4)}));
  EXPECT_EQ(DirectSlices(p.root.thunks[17]), (std::vector<BufferSlice>{S(5, 3328, 64), S(5, 3392, 96)}));
  EXPECT_EQ(DirectSlices(p.root.thunks[18]), (std::vector<BufferSlice>{S(5, 3584, 24), S(5, 3616, 8), S(5, 3632, 24),
                                                                      S(5, 3664, 16), S(5, 3680, 4)}));
  EXPECT_EQ(ChildSequences(p.root.thunks[7]).size(), 2u);
  EXPECT_EQ(ChildSequences(p.root.thunks[8]).size(), 3u);
  EXPECT_TRUE(ChildSequences(p.root.thunks[0]).empty());

  const Shape nested = Shape::Tuple(
      {Shape(ElementType::kF32, {2}),
       Shape::Tuple({Shape::Scalar(ElementType::kS32), Shape::Token()}),
       Shape::Scalar(ElementType::kF32)});
  EXPECT_EQ(ArrayLeafIndices(nested), (std::vector<ShapeIndex>{{0}, {1, 0}, {2}}));
}

TEST(ThunkModel, AllocationRoles) {
  const ThunkProgram p = SampleProgram();
  EXPECT_EQ(p.allocations[1].kind(), AllocationKind::kParameter);
  EXPECT_TRUE(p.allocations[1].is_output());  // aliased: both roles
  EXPECT_EQ(p.allocations[3].kind(), AllocationKind::kOutput);
  EXPECT_EQ(p.allocations[4].kind(), AllocationKind::kConstant);
  EXPECT_TRUE(p.allocations[5].is_temp());
  EXPECT_EQ(S(2, 128, 512).ToString(), "a2[128:640]");
}

TEST(CheckedByteSize, OverflowAndNegativeDims) {
  EXPECT_EQ(CheckedByteSize(Shape(ElementType::kF64, {3, 5})), 120);  // 15 x 8
  EXPECT_EQ(CheckedByteSize(Shape(ElementType::kF32, {-1})), std::nullopt);
  EXPECT_EQ(CheckedByteSize(Shape(ElementType::kF32, {1LL << 40, 1LL << 40})), std::nullopt);
}

}  // namespace
}  // namespace kiln::thunks
