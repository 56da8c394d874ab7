// Text forms of slices and allocations (see buffer.h).
#include "thunks/buffer.h"

namespace kiln::thunks {

std::string BufferSlice::ToString() const {
  // Python-style [begin:end) so the size is end - begin at a glance.
  return "a" + std::to_string(allocation) + "[" + std::to_string(offset) + ":" +
         std::to_string(offset + size) + "]";
}

std::string_view AllocationKindName(AllocationKind kind) {
  switch (kind) {
    case AllocationKind::kParameter: return "parameter";
    case AllocationKind::kOutput: return "output";
    case AllocationKind::kConstant: return "constant";
    case AllocationKind::kTemp: return "temp";
  }
  return "?";
}

AllocationKind Allocation::kind() const {
  if (is_parameter()) return AllocationKind::kParameter;
  if (is_constant()) return AllocationKind::kConstant;
  if (is_output()) return AllocationKind::kOutput;
  return AllocationKind::kTemp;
}

std::string Allocation::ToString() const {
  std::string s = "size=" + std::to_string(size) + " align=" + std::to_string(alignment);
  if (parameter) {
    s += " parameter " + std::to_string(parameter->number) + " " +
         ShapeIndexToString(parameter->index);
  }
  if (constant) s += " constant " + std::to_string(*constant);
  if (output) s += " output " + ShapeIndexToString(*output);
  if (is_temp()) s += " temp";
  if (color != 0) s += " color " + std::to_string(color);
  if (!zero_initialize) s += " unzeroed";
  return s;
}

}  // namespace kiln::thunks
