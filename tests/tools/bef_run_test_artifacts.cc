// Writes the .bef files bef_run_test.sh runs, built by hand with
// tests/support/sample_artifact.h rather than by the compiler, so bef-run's
// tests need neither LLVM nor bef-compile:
//
//   bef_run_test_artifacts OUTDIR KERNELS.so
//
//   gemm.bef       (f32[2,3] a, f32[3,2] b) -> (a x b via a GemmThunk,
//                  constant f32[2,2] {10 20 30 40} copied out), with a temp
//                  zeroed by a memset: every allocation kind, no kernels.
//   kernels.bef    (f32[4] a, f32[4] b, s32[] sel) -> (a + b by the kernel
//                  add_f32x4; 3a by a while loop of trip count 3 around
//                  accumulate_f32x4 on a zeroed output; 1.0 splat when
//                  sel == 0 else 2.0 splat, by a conditional of memsets).
//                  The kernels come from KERNELS.so
//                  (bef_run_test_kernels.cc).
//   layout.bef     f32[2,3]{0,1} (column-major) parameter copied byte for
//                  byte into an f32[6] result: the result lists the input
//                  in memory order, i.e. transposed.
//   cuda_only.bef  launches a kernel but has only a CUDA kernel image.
//
// Sizes are written out by hand from the shapes (f32[2,3] = 6 x 4 = 24
// bytes).
#include <fstream>
#include <iostream>
#include <iterator>

#include "tests/support/sample_artifact.h"

namespace kiln::testing {
namespace {

th::Allocation Param(int64_t size, int64_t number) {
  return {size, 64, th::ParameterRef{number, {}}, std::nullopt, std::nullopt};
}
th::Allocation Output(int64_t size, ShapeIndex index) {
  return {size, 64, std::nullopt, std::move(index), std::nullopt};
}
th::Allocation Temp(int64_t size) { return {size, 64, std::nullopt, std::nullopt, std::nullopt}; }

bef::Artifact Gemm() {
  th::ThunkProgram p;
  p.allocations = {Param(24, 0), Param(24, 1), Output(16, {0}), Output(16, {1}),
                   {16, 64, std::nullopt, std::nullopt, 0}, Temp(64)};
  p.constants = {{"constant.3", FloatBytes({10, 20, 30, 40})}};
  Shape a(ElementType::kF32, {2, 3}), b(ElementType::kF32, {3, 2}), c(ElementType::kF32, {2, 2});
  p.signature.parameters = {a, b};
  p.signature.result = Shape::Tuple({c, c});
  p.signature.parameter_leaves = {{0, {}, S(0, 0, 24)}, {1, {}, S(1, 0, 24)}};
  p.signature.result_leaves = {{{0}, S(2, 0, 16)}, {{1}, S(3, 0, 16)}};

  p.root.thunks.push_back(MakeThunk("memset.5", th::MemsetThunk{S(5, 0, 64), 0}));
  th::GemmThunk gemm;
  gemm.lhs = S(0, 0, 24);
  gemm.rhs = S(1, 0, 24);
  gemm.out = S(2, 0, 16);
  gemm.m = 2, gemm.n = 2, gemm.k = 3;
  gemm.lhs_leading_dim = 3, gemm.rhs_leading_dim = 2, gemm.out_leading_dim = 2;
  th::Thunk dot = MakeThunk("dot.2", gemm, {{"dot.2", "dot", "jit(f)/dot_general"}});
  // 2 x 2 outputs x 3 multiply-adds = 24 flops; 48 bytes in, 16 out.
  dot.info.cost = {24, 0, 48, 16};
  p.root.thunks.push_back(dot);
  th::Thunk copy = MakeThunk("copy.4", th::CopyThunk{S(4, 0, 16), S(3, 0, 16)},
                             {{"copy.4", "copy", ""}});
  copy.info.cost = {0, 0, 16, 16};
  p.root.thunks.push_back(copy);
  return HostArtifact(std::move(p));
}

bef::Artifact Kernels(std::vector<uint8_t> so) {
  th::ThunkProgram p;
  p.allocations = {Param(16, 0),       Param(16, 1),      Param(4, 2),   Output(16, {0}),
                   Output(16, {1}),    Output(16, {2}),   Temp(64)};
  Shape f4(ElementType::kF32, {4});
  p.signature.parameters = {f4, f4, Shape::Scalar(ElementType::kS32)};
  p.signature.result = Shape::Tuple({f4, f4, f4});
  p.signature.parameter_leaves = {{0, {}, S(0, 0, 16)}, {1, {}, S(1, 0, 16)}, {2, {}, S(2, 0, 4)}};
  p.signature.result_leaves = {{{0}, S(3, 0, 16)}, {{1}, S(4, 0, 16)}, {{2}, S(5, 0, 16)}};

  th::Thunk add = MakeThunk(
      "add.1",
      th::KernelThunk{"add_f32x4", {{S(0, 0, 16), false}, {S(1, 0, 16), false}, {S(3, 0, 16), true}},
                      {}},
      {{"add.1", "add", "jit(f)/add"}});
  add.info.cost = {4, 0, 32, 16};
  p.root.thunks.push_back(add);

  p.root.thunks.push_back(MakeThunk("memset.2", th::MemsetThunk{S(4, 0, 16), 0}));
  th::WhileThunk loop;
  loop.predicate = S(6, 0, 1);
  loop.trip_count = 3;
  th::Thunk body = MakeThunk(
      "fusion.3",
      th::KernelThunk{"accumulate_f32x4", {{S(4, 0, 16), true}, {S(0, 0, 16), false}}, {}},
      {{"add.3", "add", ""}, {"get-tuple-element.4", "get-tuple-element", ""}, {"acc", "parameter", ""}});
  body.info.cost = {4, 0, 32, 16};
  loop.body.thunks.push_back(body);
  p.root.thunks.push_back(MakeThunk("while.5", loop, {{"while.5", "while", ""}}));

  th::ConditionalThunk cond;
  cond.branch_index = S(2, 0, 4);
  for (uint32_t pattern : {0x3f800000u, 0x40000000u}) {  // 1.0f, 2.0f
    th::SequenceThunk branch;
    branch.thunks.push_back(MakeThunk(pattern == 0x3f800000u ? "broadcast.6" : "broadcast.7",
                                      th::MemsetThunk{S(5, 0, 16), pattern}));
    cond.branches.push_back(branch);
  }
  p.root.thunks.push_back(MakeThunk("conditional.8", cond));
  return HostArtifact(std::move(p), {"add_f32x4", "accumulate_f32x4"}, std::move(so));
}

bef::Artifact Layout() {
  th::ThunkProgram p;
  p.allocations = {Param(24, 0), Output(24, {})};
  Shape col_major(ElementType::kF32, {2, 3});
  col_major.set_layout(::kiln::Layout{{0, 1}, {}, 0, 0, ""});
  p.signature.parameters = {col_major};
  p.signature.result = Shape(ElementType::kF32, {6});
  p.signature.parameter_leaves = {{0, {}, S(0, 0, 24)}};
  p.signature.result_leaves = {{{}, S(1, 0, 24)}};
  p.root.thunks.push_back(MakeThunk("copy.1", th::CopyThunk{S(0, 0, 24), S(1, 0, 24)}));
  return HostArtifact(std::move(p));
}

bef::Artifact CudaOnly() {
  bef::Artifact a = SmallArtifact();
  a.targets = {"cuda"};
  a.kernel_images[0].target = "cuda";
  a.kernel_images[0].kind = bef::TargetKind::kCuda;
  a.kernel_images[0].shared_object.clear();
  a.kernel_images[0].ptx = ".version 8.0\n.target sm_90\n";
  return a;
}

int Main(int argc, char** argv) {
  if (argc != 3) {
    std::cerr << "usage: bef_run_test_artifacts OUTDIR KERNELS.so\n";
    return 1;
  }
  std::string dir = argv[1];
  std::ifstream so_file(argv[2], std::ios::binary);
  std::vector<uint8_t> so((std::istreambuf_iterator<char>(so_file)), {});
  if (!so_file || so.empty()) {
    std::cerr << "cannot read " << argv[2] << "\n";
    return 1;
  }
  std::pair<const char*, bef::Artifact> files[] = {
      {"gemm.bef", Gemm()}, {"kernels.bef", Kernels(std::move(so))},
      {"layout.bef", Layout()}, {"cuda_only.bef", CudaOnly()}};
  for (auto& [name, artifact] : files) {
    Status s = bef::WriteArtifactFile(artifact, dir + "/" + name);
    if (!s.ok()) {
      std::cerr << name << ": " << s.message() << "\n";
      return 1;
    }
  }
  return 0;
}

}  // namespace
}  // namespace kiln::testing

int main(int argc, char** argv) { return kiln::testing::Main(argc, argv); }
