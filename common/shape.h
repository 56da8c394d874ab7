// Shape: the type of an HLO value — an array (element type, dimensions,
// optional layout), a tuple of shapes, or a token.
//
// Layouts are kept exactly as written (minor_to_major plus tiling,
// element-size and memory-space suffixes) so printed modules round-trip.
// Dynamic dimensions are kept as a bound plus a flag ("<=N" / "?").
#pragma once

#include <cstdint>
#include <optional>
#include <string>
#include <vector>

#include "common/element_type.h"

namespace kiln {

// One tile of a tiled layout, e.g. T(8,128); kCombined marks a '*' entry.
struct Tile {
  static constexpr int64_t kCombined = -1;
  std::vector<int64_t> dims;
  bool operator==(const Tile&) const = default;
};

struct Layout {
  std::vector<int64_t> minor_to_major;
  std::vector<Tile> tiles;
  int64_t element_size_in_bits = 0;  // E(n); 0 = natural size
  int64_t memory_space = 0;          // S(n)
  // Remaining suffix items kiln does not interpret (e.g. "#(s32)", "L(4)"),
  // kept verbatim in the order written so they print back unchanged.
  std::string other_suffix;

  bool operator==(const Layout&) const = default;
  // "{1,0:T(8,128)S(1)}"
  std::string ToString() const;
};

class Shape {
 public:
  Shape() = default;
  // Array shape with no layout.
  Shape(ElementType type, std::vector<int64_t> dims);
  static Shape Tuple(std::vector<Shape> elements);
  static Shape Token() { return Shape(ElementType::kToken, {}); }
  static Shape Scalar(ElementType type) { return Shape(type, {}); }

  ElementType element_type() const { return element_type_; }
  void set_element_type(ElementType t) { element_type_ = t; }

  bool IsTuple() const { return element_type_ == ElementType::kTuple; }
  bool IsToken() const { return element_type_ == ElementType::kToken; }
  bool IsArray() const { return IsArrayType(element_type_); }
  bool IsScalar() const { return IsArray() && dims_.empty(); }

  int64_t rank() const { return static_cast<int64_t>(dims_.size()); }
  const std::vector<int64_t>& dims() const { return dims_; }
  int64_t dim(int64_t i) const { return dims_[i]; }
  void set_dims(std::vector<int64_t> dims);
  // Dynamic dimensions: dims()[i] is the bound; the flag says it is dynamic.
  bool is_dynamic_dim(int64_t i) const { return dynamic_[i]; }
  void set_dynamic_dim(int64_t i, bool dynamic) { dynamic_[i] = dynamic; }
  bool is_dynamic() const;

  const std::vector<Shape>& tuple_shapes() const { return tuple_; }
  std::vector<Shape>& mutable_tuple_shapes() { return tuple_; }
  const Shape& tuple_shape(int64_t i) const { return tuple_[i]; }
  int64_t tuple_size() const { return static_cast<int64_t>(tuple_.size()); }

  bool has_layout() const { return layout_.has_value(); }
  const std::optional<Layout>& layout() const { return layout_; }
  void set_layout(Layout layout) { layout_ = std::move(layout); }
  void clear_layout();  // recursively
  // The layout's minor_to_major, or the default {rank-1, ..., 0}.
  std::vector<int64_t> MinorToMajor() const;

  // Number of elements of an array shape (1 for scalars).
  int64_t ElementCount() const;
  // Bytes of an array's storage in a kiln Literal (sub-byte types use 1 byte
  // per element); for tuples, the sum over elements.
  int64_t ByteSize() const;

  // "f32[2,3]{1,0}", "(f32[4], s32[])", "bf16[<=8]"; layouts optional.
  std::string ToString(bool print_layout = true) const;

  // Exact equality, including layouts and dynamic flags.
  bool operator==(const Shape& other) const;
  bool operator!=(const Shape& other) const { return !(*this == other); }
  // Equality of element types, dimensions and tuple structure; ignores
  // layouts (what the verifier compares).
  bool Compatible(const Shape& other) const;
  // Compatible() and also ignores the element type.
  bool SameDimensions(const Shape& other) const;

 private:
  ElementType element_type_ = ElementType::kInvalid;
  std::vector<int64_t> dims_;
  std::vector<bool> dynamic_;
  std::optional<Layout> layout_;
  std::vector<Shape> tuple_;
};

// Whether an array of shape `value` may stand for the array shape
// `declared`: the same element type and rank, each bounded dynamic (`<=N`)
// dimension at most N, every other dimension equal. Layouts are ignored.
bool FitsDeclaredShape(const Shape& value, const Shape& declared);

// A shape index addresses a sub-shape of a (nested) tuple; {} is the whole.
using ShapeIndex = std::vector<int64_t>;
std::string ShapeIndexToString(const ShapeIndex& index);  // "{0,1}"
// The sub-shape at `index`, or nullptr if the index does not exist.
const Shape* SubShape(const Shape& shape, const ShapeIndex& index);

// Row-major (logical) strides of dims: the last dimension varies fastest.
std::vector<int64_t> RowMajorStrides(const std::vector<int64_t>& dims);
// Linear row-major position of a multi-index.
int64_t LinearIndex(const std::vector<int64_t>& dims, const std::vector<int64_t>& index);
// Advances a multi-index in row-major order; returns false after the last.
bool NextIndex(const std::vector<int64_t>& dims, std::vector<int64_t>& index);

}  // namespace kiln
