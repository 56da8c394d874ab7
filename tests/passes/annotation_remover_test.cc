// AnnotationRemover: identity annotation custom-calls are bypassed; other
// custom-calls and shape-changing annotations stay. Checked against
// hand-written expected modules and the reference evaluator.
#include "compiler/passes/annotation_remover.h"

#include "tests/passes/simplification_test_util.h"

namespace kiln::passes {
namespace {

using test_support::CheckPass;

TEST(AnnotationRemover, RemovesShardingAndPlacementChains) {
  AnnotationRemover pass;
  CheckPass(pass, R"(HloModule m

ENTRY e {
  p = f32[4,2] parameter(0)
  s = f32[4,2] custom-call(p), custom_call_target="Sharding", sharding={replicated}
  e = f32[4,2] exponential(s)
  h = f32[4,2] custom-call(e), custom_call_target="MoveToHost"
  d = f32[4,2] custom-call(h), custom_call_target="MoveToDevice"
  a = f32[4,2] custom-call(d), custom_call_target="annotate_device_placement", frontend_attributes={_xla_buffer_placement="device"}
  n = f32[4,2] negate(a)
  ROOT r = f32[4,2] custom-call(n), custom_call_target="xla.sdy.FuncResultSharding"
}
)",
            true, R"(HloModule m

ENTRY e {
  p = f32[4,2] parameter(0)
  e = f32[4,2] exponential(p)
  ROOT n = f32[4,2] negate(e)
}
)");
}

// torch-neuronx's transfer between NeuronCores keeps the value; its operand
// layout may differ from the result's (kiln's buffers are row-major).
TEST(AnnotationRemover, NeuronStaticRingTransfer) {
  AnnotationRemover pass;
  CheckPass(pass, R"(HloModule m

ENTRY e {
  p = f32[10,784]{0,1} parameter(0)
  t = f32[10,784]{1,0} custom-call(p), custom_call_target="AwsNeuronTransferWithStaticRing"
  ROOT n = f32[10,784] negate(t)
}
)",
            true, R"(HloModule m

ENTRY e {
  p = f32[10,784]{0,1} parameter(0)
  ROOT n = f32[10,784] negate(p)
}
)",
            /*evaluate=*/false);  // the evaluator has no Neuron custom-calls
}

TEST(AnnotationRemover, TupleShapedAnnotation) {
  AnnotationRemover pass;
  CheckPass(pass, R"(HloModule m

ENTRY e {
  p = (f32[2], s32[]) parameter(0)
  s = (f32[2], s32[]) custom-call(p), custom_call_target="Sharding", sharding={{replicated}, {replicated}}
  ROOT g = f32[2] get-tuple-element(s), index=0
}
)",
            true, R"(HloModule m

ENTRY e {
  p = (f32[2], s32[]) parameter(0)
  ROOT g = f32[2] get-tuple-element(p), index=0
}
)");
}

TEST(AnnotationRemover, OtherCustomCallsAndShapeChangesStay) {
  AnnotationRemover pass;
  CheckPass(pass, R"(HloModule m

ENTRY e {
  p = f32[8] parameter(0)
  shard = f32[4] custom-call(p), custom_call_target="SPMDFullToShardShape", sharding={manual}
  other = f32[8] custom-call(p), custom_call_target="my_kernel"
  two = f32[8] custom-call(p, p), custom_call_target="Sharding"
  ROOT t = (f32[4], f32[8], f32[8]) tuple(shard, other, two)
}
)",
            false, "", /*evaluate=*/false);
}

TEST(AnnotationRemover, Corpus) {
  test_support::CheckPassOnCorpus([] { return std::make_unique<AnnotationRemover>(); });
}

}  // namespace
}  // namespace kiln::passes
