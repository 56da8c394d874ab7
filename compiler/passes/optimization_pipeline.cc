// The pass order of kiln's middle-end.
#include "compiler/passes/optimization_pipeline.h"

#include "compiler/passes/passes.h"
#include "compiler/passes/while_loop_trip_count.h"

namespace kiln::passes {

Status RunOptimizationPipeline(hlo::HloModule& module, const PipelineOptions& options,
                               std::vector<PassRecord>* records) {
  HloPassPipeline pipeline("kiln-optimizations");
  pipeline.set_after_changed_pass(options.after_changed_pass);
  // Simplification: expose the whole dataflow of the entry computation.
  pipeline.AddPass<CallInliner>();
  pipeline.AddPass<BitcastToReshape>();
  pipeline.AddPass<LayoutNormalization>();
  pipeline.AddPass<DeadCodeElimination>();
  pipeline.AddPass<WhileLoopTripCount>();
  // Library-call forms, then kernels around them.
  pipeline.AddPass<DotCanonicalization>();
  pipeline.AddPass<DeadCodeElimination>();
  pipeline.AddPass<KernelFusion>();
  pipeline.AddPass<DeadCodeElimination>();
  StatusOr<bool> changed = pipeline.Run(module);
  if (records) *records = pipeline.records();
  return changed.status();
}

}  // namespace kiln::passes
