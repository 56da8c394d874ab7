// Text forms of structured HLO attribute values, exactly as XLA writes them
// (window_util::ToString, ConvolutionDimensionNumbersToString,
// PaddingConfigToString, HloSliceInstruction's slice={...}, replica groups).
//
// Each function returns the full text that follows "name=" so the printer can
// use it directly and the parser can read it back to an equal value. Values
// that XLA would never produce (out-of-range dimension numbers) still print
// something readable instead of crashing.
#include "compiler/hlo/attributes.h"

#include <functional>
#include <string>

namespace kiln::hlo {
namespace {

std::string JoinInts(const std::vector<int64_t>& ints, const char* separator) {
  std::string s;
  for (size_t i = 0; i < ints.size(); ++i) {
    if (i) s += separator;
    s += std::to_string(ints[i]);
  }
  return s;
}

// Appends " heading=v0xv1x..." (no leading space for the first field).
void AppendWindowField(const Window& window, const char* heading,
                       const std::function<std::string(const WindowDim&)>& format,
                       std::string* out) {
  if (!out->empty()) *out += " ";
  *out += heading;
  *out += "=";
  for (size_t i = 0; i < window.dims.size(); ++i) {
    if (i) *out += "x";
    *out += format(window.dims[i]);
  }
}

bool AnyDim(const Window& window, const std::function<bool(const WindowDim&)>& pred) {
  for (const WindowDim& d : window.dims)
    if (pred(d)) return true;
  return false;
}

// Places `label` at position `dim` of `labels`; out-of-range positions
// (malformed IR) are appended so nothing is lost and nothing crashes.
void PlaceLabel(std::vector<std::string>& labels, int64_t dim, std::string label) {
  if (dim >= 0 && dim < static_cast<int64_t>(labels.size()) && labels[dim].empty())
    labels[dim] = std::move(label);
  else
    labels.push_back("?" + label);
}

std::string JoinLabels(const std::vector<std::string>& labels) {
  std::string s;
  for (const std::string& l : labels) s += l.empty() ? "?" : l;
  return s;
}

// One operand's labels: batch-like and feature-like letters plus spatial
// indices, e.g. "b01f".
std::string ConvOperandLabels(int64_t first, char first_label, int64_t second, char second_label,
                              const std::vector<int64_t>& spatial) {
  std::vector<std::string> labels(2 + spatial.size());
  PlaceLabel(labels, first, std::string(1, first_label));
  PlaceLabel(labels, second, std::string(1, second_label));
  for (size_t i = 0; i < spatial.size(); ++i) PlaceLabel(labels, spatial[i], std::to_string(i));
  return JoinLabels(labels);
}

}  // namespace

// XLA omits every field whose values are all at their defaults except size
// (and prints size only when there are dimensions): {size=3x3 pad=1_1x1_1}.
std::string WindowToString(const Window& window) {
  std::string s;
  if (!window.dims.empty())
    AppendWindowField(window, "size", [](const WindowDim& d) { return std::to_string(d.size); }, &s);
  if (AnyDim(window, [](const WindowDim& d) { return d.stride != 1; }))
    AppendWindowField(window, "stride", [](const WindowDim& d) { return std::to_string(d.stride); },
                      &s);
  if (AnyDim(window, [](const WindowDim& d) { return d.pad_low != 0 || d.pad_high != 0; }))
    AppendWindowField(
        window, "pad",
        [](const WindowDim& d) { return std::to_string(d.pad_low) + "_" + std::to_string(d.pad_high); },
        &s);
  if (AnyDim(window, [](const WindowDim& d) { return d.lhs_dilation != 1; }))
    AppendWindowField(window, "lhs_dilate",
                      [](const WindowDim& d) { return std::to_string(d.lhs_dilation); }, &s);
  if (AnyDim(window, [](const WindowDim& d) { return d.rhs_dilation != 1; }))
    AppendWindowField(window, "rhs_dilate",
                      [](const WindowDim& d) { return std::to_string(d.rhs_dilation); }, &s);
  if (AnyDim(window, [](const WindowDim& d) { return d.reversal; }))
    AppendWindowField(window, "rhs_reversal",
                      [](const WindowDim& d) { return std::string(d.reversal ? "1" : "0"); }, &s);
  return "{" + s + "}";
}

// b01f_01io->b01f: position i of each group names logical dimension i.
std::string ConvDimensionNumbersToString(const ConvDimensionNumbers& d) {
  return ConvOperandLabels(d.input_batch, 'b', d.input_feature, 'f', d.input_spatial) + "_" +
         ConvOperandLabels(d.kernel_input_feature, 'i', d.kernel_output_feature, 'o',
                           d.kernel_spatial) +
         "->" + ConvOperandLabels(d.output_batch, 'b', d.output_feature, 'f', d.output_spatial);
}

// low_high per dimension joined by 'x'; the interior amount is written for
// every dimension as soon as one dimension has interior padding, as XLA does.
std::string PaddingConfigToString(const PaddingConfig& padding) {
  bool has_interior = false;
  for (const PadDim& d : padding.dims) has_interior |= d.interior != 0;
  std::string s;
  for (size_t i = 0; i < padding.dims.size(); ++i) {
    const PadDim& d = padding.dims[i];
    if (i) s += "x";
    s += std::to_string(d.low) + "_" + std::to_string(d.high);
    if (has_interior) s += "_" + std::to_string(d.interior);
  }
  return s;
}

// {[0:4], [1:3]}; strides are written for every dimension as soon as one
// stride differs from 1 ({[0:4:2], [1:3:1]}), as XLA does.
std::string SliceToString(const std::vector<SliceDim>& slice) {
  bool unit_strides = true;
  for (const SliceDim& d : slice) unit_strides &= d.stride == 1;
  std::string s = "{";
  for (size_t i = 0; i < slice.size(); ++i) {
    const SliceDim& d = slice[i];
    if (i) s += ", ";
    s += "[" + std::to_string(d.start) + ":" + std::to_string(d.limit);
    if (!unit_strides) s += ":" + std::to_string(d.stride);
    s += "]";
  }
  return s + "}";
}

// The iota form when it was written that way ([2,2]<=[4], [2,2]<=[2,2]T(1,0)),
// else the explicit list {{0,1},{2,3}}.
std::string ReplicaGroupsToString(const ReplicaGroups& groups) {
  if (!groups.iota_group_shape.empty()) {
    std::string s = "[" + JoinInts(groups.iota_group_shape, ",") + "]<=[" +
                    JoinInts(groups.iota_reshape_dims, ",") + "]";
    if (!groups.iota_transpose_perm.empty())
      s += "T(" + JoinInts(groups.iota_transpose_perm, ",") + ")";
    return s;
  }
  std::string s = "{";
  for (size_t i = 0; i < groups.groups.size(); ++i) {
    if (i) s += ",";
    s += IntListToString(groups.groups[i]);
  }
  return s + "}";
}

std::string IntListToString(const std::vector<int64_t>& ints) {
  return "{" + JoinInts(ints, ",") + "}";
}

}  // namespace kiln::hlo
