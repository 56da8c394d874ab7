// The pass order of kiln's middle-end.
#include "compiler/passes/optimization_pipeline.h"

#include "compiler/passes/activation_custom_call_rewriter.h"
#include "compiler/passes/algebraic_simplifier.h"
#include "compiler/passes/annotation_remover.h"
#include "compiler/passes/async_to_sync.h"
#include "compiler/passes/batch_norm_expander.h"
#include "compiler/passes/cholesky_rewriter.h"
#include "compiler/passes/constant_folding.h"
#include "compiler/passes/complex_reduce_splitter.h"
#include "compiler/passes/cpu_custom_call_rewriter.h"
#include "compiler/passes/cse.h"
#include "compiler/passes/cudnn_conv_custom_call_rewriter.h"
#include "compiler/passes/dot_merger.h"
#include "compiler/passes/dynamic_padder.h"
#include "compiler/passes/fp8_scale_hoisting.h"
#include "compiler/passes/gemm_custom_call_rewriter.h"
#include "compiler/passes/gpu_solver_custom_call_rewriter.h"
#include "compiler/passes/input_dilation_to_pad.h"
#include "compiler/passes/integer_dot_expander.h"
#include "compiler/passes/map_inliner.h"
#include "compiler/passes/passes.h"
#include "compiler/passes/radix_sort_rewriter.h"
#include "compiler/passes/ragged_all_to_all_decomposer.h"
#include "compiler/passes/ragged_dot_expander.h"
#include "compiler/passes/rng_bit_generator_expander.h"
#include "compiler/passes/row_normalization_fusion.h"
#include "compiler/passes/scatter_chain_combiner.h"
#include "compiler/passes/send_recv_to_permute.h"
#include "compiler/passes/topk_custom_call_rewriter.h"
#include "compiler/passes/triangular_solve_upcast.h"
#include "compiler/passes/tuple_simplifier.h"
#include "compiler/passes/while_loop_invariant_code_motion.h"
#include "compiler/passes/while_loop_kernel_fusion.h"
#include "compiler/passes/while_loop_trip_count.h"

namespace kiln::passes {
namespace {

// Simplification to a fixed point of what the passes expose to each other.
void AddSimplification(HloPassPipeline& pipeline) {
  pipeline.AddPass<AlgebraicSimplifier>();
  pipeline.AddPass<TupleSimplifier>();
  pipeline.AddPass<ConstantFolding>();
  pipeline.AddPass<Cse>();
  pipeline.AddPass<DeadCodeElimination>();
}

}  // namespace

Status RunOptimizationPipeline(hlo::HloModule& module, const PipelineOptions& options,
                               std::vector<PassRecord>* records) {
  HloPassPipeline pipeline("kiln-optimizations");
  pipeline.set_after_changed_pass(options.after_changed_pass);
  pipeline.set_before_pass(options.before_pass);
  if (options.verify_each_pass) pipeline.set_verify_each_pass(*options.verify_each_pass);
  // The whole dataflow in one computation per loop body, in logical shapes.
  // Send/recv pairs become collective-permutes, ragged-all-to-all dense
  // all-to-alls and a scatter; async wrappers become
  // calls, which CallInliner inlines (those of a collective stay async).
  pipeline.AddPass<SendRecvToPermute>();
  pipeline.AddPass<RaggedAllToAllDecomposer>();  // as dense all-to-alls
  pipeline.AddPass<AsyncToSync>();
  pipeline.AddPass<MapInliner>();
  pipeline.AddPass<BatchNormExpander>();
  pipeline.AddPass<GemmCustomCallRewriter>();
  pipeline.AddPass<CudnnConvCustomCallRewriter>();  // __cudnn$conv*: convolutions
  pipeline.AddPass<GpuSolverCustomCallRewriter>();  // cusolver_*_ffi: lapack_*_ffi calls
  pipeline.AddPass<ActivationCustomCallRewriter>();
  pipeline.AddPass<TopKCustomCallRewriter>();
  pipeline.AddPass<CpuCustomCallRewriter>();  // GetRngSeed, __onednn$layernorm
  pipeline.AddPass<ComplexReduceSplitter>();  // reduction kernels reduce reals; before CallInliner
  pipeline.AddPass<CallInliner>();
  pipeline.AddPass<AnnotationRemover>();
  pipeline.AddPass<BitcastToReshape>();
  pipeline.AddPass<DynamicPadder>();  // static shapes at the bounds from here on
  pipeline.AddPass<LayoutNormalization>();
  if (options.radix_sort) pipeline.AddPass<RadixSortRewriter>();  // before ties get an iota
  pipeline.AddPass<StableSortExpander>();  // sort kernels need not be stable
  pipeline.AddPass<RngBitGeneratorExpander>();  // into plain elementwise ops, as XLA does
  AddSimplification(pipeline);
  // Loops: trip counts first (they match the loop before hoisting widens
  // its state), then invariant work out of the bodies.
  pipeline.AddPass<WhileLoopTripCount>();
  pipeline.AddPass<WhileLoopInvariantCodeMotion>();
  // Library-call forms; their reshapes and transposes simplify again.
  pipeline.AddPass<InputDilationToPad>();  // what cuDNN cannot dilate itself
  pipeline.AddPass<ConvolutionCanonicalization>();  // 1x1 convolutions become dots
  pipeline.AddPass<RaggedDotExpander>();  // dense dots of masked operands
  pipeline.AddPass<CholeskyRewriter>();  // potrf and XLA's zero / NaN fill-in
  pipeline.AddPass<TriangularSolveUpcast>();  // trsm takes f32 and wider
  pipeline.AddPass<IntegerDotExpander>(options.int8_gemms);  // the GEMM libraries take floats, complex (and int8 on CUDA)
  pipeline.AddPass<SmallDotExpander>();  // a few multiply-adds are no library call
  if (options.fp8_gemms) pipeline.AddPass<Fp8ScaleHoisting>();  // scaled f8 dots: FP8 GEMMs
  pipeline.AddPass<DotCanonicalization>(
      DotCanonicalization::Options{options.bf16_gemm_operands, options.int8_gemms, options.fp8_gemms});
  AddSimplification(pipeline);
  // Small GEMMs sharing an operand become one that fills the GPU.
  if (options.dot_merger) {
    DotMergerOptions merger;
    merger.tf32 = options.tf32;
    pipeline.AddPass<DotMerger>(merger);
  }
  // Matrices built element by element: one scatter, not one per element.
  pipeline.AddPass<ScatterChainCombiner>();
  // Reductions too long or too narrow for one kernel become two.
  pipeline.AddPass<ReductionSplitter>();
  // Kernels around the library calls; row normalizations first, whole.
  if (options.row_normalization) pipeline.AddPass<RowNormalizationFusion>();
  pipeline.AddPass<KernelFusion>();
  pipeline.AddPass<MultiOutputFusion>();
  pipeline.AddPass<SiblingFusion>();
  pipeline.AddPass<SortFusion>();  // sort and topk kernels, apart from the others
  if (options.loop_kernels) {
    // Loops of small scalar iterations become kernels that contain them.
    pipeline.AddPass<WhileLoopKernelFusion>();
    pipeline.AddPass<TupleSimplifier>();
  }
  pipeline.AddPass<DeadCodeElimination>();
  StatusOr<bool> changed = pipeline.Run(module);
  if (records) *records = pipeline.records();
  return changed.status();
}

}  // namespace kiln::passes
