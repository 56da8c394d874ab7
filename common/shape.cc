#include "common/shape.h"

#include <numeric>

namespace kiln {

std::string Layout::ToString() const {
  std::string s = "{";
  for (size_t i = 0; i < minor_to_major.size(); ++i) {
    if (i) s += ",";
    s += std::to_string(minor_to_major[i]);
  }
  bool has_suffix = !tiles.empty() || element_size_in_bits != 0 || memory_space != 0 ||
                    !other_suffix.empty();
  if (has_suffix) {
    s += ":";
    if (!tiles.empty()) s += "T";
    for (const Tile& tile : tiles) {
      s += "(";
      for (size_t i = 0; i < tile.dims.size(); ++i) {
        if (i) s += ",";
        s += tile.dims[i] == Tile::kCombined ? std::string("*") : std::to_string(tile.dims[i]);
      }
      s += ")";
    }
    s += other_suffix;
    if (element_size_in_bits != 0) s += "E(" + std::to_string(element_size_in_bits) + ")";
    if (memory_space != 0) s += "S(" + std::to_string(memory_space) + ")";
  }
  return s + "}";
}

Shape::Shape(ElementType type, std::vector<int64_t> dims)
    : element_type_(type), dims_(std::move(dims)), dynamic_(dims_.size(), false) {}

Shape Shape::Tuple(std::vector<Shape> elements) {
  Shape s;
  s.element_type_ = ElementType::kTuple;
  s.tuple_ = std::move(elements);
  return s;
}

void Shape::set_dims(std::vector<int64_t> dims) {
  dims_ = std::move(dims);
  dynamic_.assign(dims_.size(), false);
}

bool Shape::is_dynamic() const {
  for (bool d : dynamic_)
    if (d) return true;
  for (const Shape& s : tuple_)
    if (s.is_dynamic()) return true;
  return false;
}

void Shape::clear_layout() {
  layout_.reset();
  for (Shape& s : tuple_) s.clear_layout();
}

std::vector<int64_t> Shape::MinorToMajor() const {
  if (layout_ && layout_->minor_to_major.size() == dims_.size()) return layout_->minor_to_major;
  std::vector<int64_t> m(dims_.size());
  for (size_t i = 0; i < m.size(); ++i) m[i] = static_cast<int64_t>(m.size() - 1 - i);
  return m;
}

int64_t Shape::ElementCount() const {
  int64_t n = 1;
  for (int64_t d : dims_) n *= d;
  return n;
}

int64_t Shape::ByteSize() const {
  if (IsTuple()) {
    int64_t total = 0;
    for (const Shape& s : tuple_) total += s.ByteSize();
    return total;
  }
  if (!IsArray()) return 0;
  return ElementCount() * StorageBytes(element_type_);
}

std::string Shape::ToString(bool print_layout) const {
  if (IsTuple()) {
    std::string s = "(";
    for (size_t i = 0; i < tuple_.size(); ++i) {
      if (i) s += ", ";
      s += tuple_[i].ToString(print_layout);
    }
    return s + ")";
  }
  std::string s(ElementTypeName(element_type_));
  s += "[";
  for (size_t i = 0; i < dims_.size(); ++i) {
    if (i) s += ",";
    if (dynamic_[i]) s += dims_[i] < 0 ? std::string("?") : "<=" + std::to_string(dims_[i]);
    else s += std::to_string(dims_[i]);
  }
  s += "]";
  if (print_layout && layout_ && IsArray()) s += layout_->ToString();
  return s;
}

bool Shape::operator==(const Shape& o) const {
  return element_type_ == o.element_type_ && dims_ == o.dims_ && dynamic_ == o.dynamic_ &&
         layout_ == o.layout_ && tuple_ == o.tuple_;
}

bool Shape::SameDimensions(const Shape& o) const {
  if (IsTuple() != o.IsTuple()) return false;
  if (IsTuple()) {
    if (tuple_.size() != o.tuple_.size()) return false;
    for (size_t i = 0; i < tuple_.size(); ++i)
      if (!tuple_[i].SameDimensions(o.tuple_[i])) return false;
    return true;
  }
  return dims_ == o.dims_;
}

bool Shape::Compatible(const Shape& o) const {
  if (element_type_ != o.element_type_) return false;
  if (IsTuple()) {
    if (tuple_.size() != o.tuple_.size()) return false;
    for (size_t i = 0; i < tuple_.size(); ++i)
      if (!tuple_[i].Compatible(o.tuple_[i])) return false;
    return true;
  }
  return dims_ == o.dims_;
}

std::string ShapeIndexToString(const ShapeIndex& index) {
  std::string s = "{";
  for (size_t i = 0; i < index.size(); ++i) {
    if (i) s += ",";
    s += std::to_string(index[i]);
  }
  return s + "}";
}

const Shape* SubShape(const Shape& shape, const ShapeIndex& index) {
  const Shape* s = &shape;
  for (int64_t i : index) {
    if (!s->IsTuple() || i < 0 || i >= s->tuple_size()) return nullptr;
    s = &s->tuple_shape(i);
  }
  return s;
}

std::vector<int64_t> RowMajorStrides(const std::vector<int64_t>& dims) {
  std::vector<int64_t> strides(dims.size(), 1);
  for (int64_t i = static_cast<int64_t>(dims.size()) - 2; i >= 0; --i)
    strides[i] = strides[i + 1] * dims[i + 1];
  return strides;
}

int64_t LinearIndex(const std::vector<int64_t>& dims, const std::vector<int64_t>& index) {
  int64_t linear = 0;
  for (size_t i = 0; i < dims.size(); ++i) linear = linear * dims[i] + index[i];
  return linear;
}

bool NextIndex(const std::vector<int64_t>& dims, std::vector<int64_t>& index) {
  for (int64_t i = static_cast<int64_t>(dims.size()) - 1; i >= 0; --i) {
    if (++index[i] < dims[i]) return true;
    index[i] = 0;
  }
  return false;
}

bool FitsDeclaredShape(const Shape& value, const Shape& declared) {
  if (!value.IsArray() || !declared.IsArray() || value.element_type() != declared.element_type() ||
      value.rank() != declared.rank())
    return false;
  for (int64_t d = 0; d < declared.rank(); ++d) {
    if (declared.is_dynamic_dim(d) ? value.dim(d) > declared.dim(d) : value.dim(d) != declared.dim(d))
      return false;
  }
  return true;
}

}  // namespace kiln
