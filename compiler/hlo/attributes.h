// Typed attributes of HLO instructions.
//
// An instruction's attributes are an ordered list of (name, value) pairs,
// named as in HLO text ("dimensions", "window", "lhs_contracting_dims").
// Attributes kiln understands are parsed into typed values; any other
// attribute (metadata, sharding, frontend_attributes, backend_config, ...)
// is kept as verbatim text so that printing reproduces it. Structured views
// such as DotDimensionNumbers are assembled from the named attributes by
// accessors on HloInstruction.
#pragma once

#include <cstdint>
#include <string>
#include <variant>
#include <vector>

namespace kiln::hlo {

class HloComputation;

// slice={[start:limit:stride], ...}
struct SliceDim {
  int64_t start = 0, limit = 0, stride = 1;
  bool operator==(const SliceDim&) const = default;
};

// window={size=3x3 stride=2x2 pad=1_1x1_1 lhs_dilate=1x1 rhs_dilate=1x1 rhs_reversal=0x0}
struct WindowDim {
  int64_t size = 1, stride = 1, pad_low = 0, pad_high = 0;
  int64_t lhs_dilation = 1, rhs_dilation = 1;
  bool reversal = false;
  bool operator==(const WindowDim&) const = default;
};
struct Window {
  std::vector<WindowDim> dims;
  bool operator==(const Window&) const = default;
};

// dim_labels=b01f_01io->b01f
struct ConvDimensionNumbers {
  int64_t input_batch = 0, input_feature = 0;
  std::vector<int64_t> input_spatial;
  int64_t kernel_input_feature = 0, kernel_output_feature = 0;
  std::vector<int64_t> kernel_spatial;
  int64_t output_batch = 0, output_feature = 0;
  std::vector<int64_t> output_spatial;
  bool operator==(const ConvDimensionNumbers&) const = default;
};

// padding=low_high_interior x ...
struct PadDim {
  int64_t low = 0, high = 0, interior = 0;
  bool operator==(const PadDim&) const = default;
};
struct PaddingConfig {
  std::vector<PadDim> dims;
  bool operator==(const PaddingConfig&) const = default;
};

// replica_groups={{0,1},{2,3}} or the iota form [2,2]<=[4] / [2,2]<=[2,2]T(1,0).
struct ReplicaGroups {
  std::vector<std::vector<int64_t>> groups;  // always materialized
  // Iota form as written, to print it back; empty when written explicitly.
  std::vector<int64_t> iota_group_shape;     // [num_groups, group_size]
  std::vector<int64_t> iota_reshape_dims;    // <=[...]
  std::vector<int64_t> iota_transpose_perm;  // T(...), may be empty
  bool operator==(const ReplicaGroups&) const = default;
};

// Computations named by an attribute (to_apply=, branch_computations={...}).
struct ComputationRefs {
  std::vector<HloComputation*> computations;
  bool operator==(const ComputationRefs&) const = default;
};

// Verbatim text of an attribute kiln does not interpret.
struct RawAttr {
  std::string text;
  bool operator==(const RawAttr&) const = default;
};
// A quoted string ("..."), unescaped.
struct StringAttr {
  std::string value;
  bool operator==(const StringAttr&) const = default;
};
// A bare word (direction=LT, kind=kLoop, type=TOTALORDER).
struct EnumAttr {
  std::string value;
  bool operator==(const EnumAttr&) const = default;
};
// {{0,1},{1,2}}: source_target_pairs and other nested integer lists.
struct IntListList {
  std::vector<std::vector<int64_t>> lists;
  bool operator==(const IntListList&) const = default;
};

using AttrValue = std::variant<int64_t, double, bool, std::vector<int64_t>, std::vector<SliceDim>,
                               Window, ConvDimensionNumbers, PaddingConfig, ReplicaGroups,
                               ComputationRefs, RawAttr, StringAttr, EnumAttr, IntListList>;

struct Attribute {
  std::string name;
  AttrValue value;
};

// Structured views assembled from named attributes.
struct DotDimensionNumbers {
  std::vector<int64_t> lhs_batch, rhs_batch, lhs_contracting, rhs_contracting;
};
struct GatherDimensionNumbers {
  std::vector<int64_t> offset_dims, collapsed_slice_dims, start_index_map;
  std::vector<int64_t> operand_batching_dims, start_indices_batching_dims;
  int64_t index_vector_dim = 0;
};
struct ScatterDimensionNumbers {
  std::vector<int64_t> update_window_dims, inserted_window_dims, scatter_dims_to_operand_dims;
  std::vector<int64_t> input_batching_dims, scatter_indices_batching_dims;
  int64_t index_vector_dim = 0;
};

enum class ComparisonDirection { kEq, kNe, kGe, kGt, kLe, kLt };
// Comparison type; kDefault means "derived from the element type".
enum class ComparisonType { kDefault, kFloat, kTotalOrder, kSigned, kUnsigned, kPartialOrder };

// Text forms used by the parser and printer.
std::string WindowToString(const Window& window);
std::string ConvDimensionNumbersToString(const ConvDimensionNumbers& dnums);
std::string PaddingConfigToString(const PaddingConfig& padding);
std::string SliceToString(const std::vector<SliceDim>& slice);
std::string ReplicaGroupsToString(const ReplicaGroups& groups);
std::string IntListToString(const std::vector<int64_t>& ints);  // "{1,2}"

}  // namespace kiln::hlo
