// Literal: a host-resident value of any Shape — the data of HLO constants,
// evaluator inputs/outputs and tool arguments.
//
// Array data is dense in row-major *logical* order (last dimension fastest),
// independent of the shape's layout; layout only matters to ops that
// reinterpret memory (bitcast), which linearize explicitly. Each element uses
// StorageBytes(type) bytes: pred is one byte (0/1), f16/bf16 and the f8/f4
// types hold their raw bit patterns, sub-byte integers one per byte,
// sign-extended. Element accessors are grouped by the four value classes
// (pred, signed/unsigned integer, real float, complex) so that arithmetic in
// the evaluator happens in one widest type per class and rounds on store.
#pragma once

#include <complex>
#include <cstdint>
#include <cstring>
#include <string>
#include <vector>

#include "common/shape.h"
#include "common/status.h"

namespace kiln {

class Literal {
 public:
  Literal() : Literal(Shape::Tuple({})) {}
  // Zero-initialised value of `shape` (tuples get zeroed elements).
  explicit Literal(const Shape& shape);

  template <typename T>
  static Literal Scalar(ElementType type, T value);
  // Rank-1 array of `type` with the given values (converted per class).
  static Literal Vector(ElementType type, const std::vector<double>& values);
  static Literal MakeTuple(std::vector<Literal> elements);

  const Shape& shape() const { return shape_; }
  ElementType element_type() const { return shape_.element_type(); }
  int64_t element_count() const { return shape_.IsArray() ? shape_.ElementCount() : 0; }

  // Tuple elements (empty for arrays).
  const std::vector<Literal>& elements() const { return elements_; }
  std::vector<Literal>& mutable_elements() { return elements_; }
  const Literal& element(int64_t i) const { return elements_[i]; }

  // Raw array storage.
  uint8_t* raw() { return data_.data(); }
  const uint8_t* raw() const { return data_.data(); }
  size_t raw_size() const { return data_.size(); }
  template <typename T>
  T* data() { return reinterpret_cast<T*>(data_.data()); }
  template <typename T>
  const T* data() const { return reinterpret_cast<const T*>(data_.data()); }

  // Element access by row-major linear index, one pair per value class.
  // Getters of one class on another class's type convert as C++ would
  // (GetF64 on s32 gives the integer value); setters round or wrap to the
  // element type: integers wrap modulo 2^bits, floats round to nearest even.
  bool GetPred(int64_t i) const;
  int64_t GetS64(int64_t i) const;    // signed view (unsigned types reinterpret)
  uint64_t GetU64(int64_t i) const;   // unsigned view, the raw integer bits
  double GetF64(int64_t i) const;     // real value; complex gives real part
  std::complex<double> GetC128(int64_t i) const;
  void SetPred(int64_t i, bool v);
  void SetS64(int64_t i, int64_t v);
  void SetU64(int64_t i, uint64_t v);
  void SetF64(int64_t i, double v);
  void SetC128(int64_t i, std::complex<double> v);
  // Copies element `src_index` of `src` (same element type) to `i`.
  void CopyElementFrom(int64_t i, const Literal& src, int64_t src_index);

  // Multi-index convenience.
  int64_t Linear(const std::vector<int64_t>& index) const {
    return LinearIndex(shape_.dims(), index);
  }

  // HLO constant syntax: "{ {1, 2}, {3, 4} }", "1.5", "(1, {2, 3})". Every
  // value parses back to the same bits ("-nan", "nan(0x1)" for payloads).
  std::string ToString() const;
  // ToString() of up to `max_elements` elements, eliding the rest with "...".
  std::string ToStringTruncated(int64_t max_elements) const;

  // Same shape (ignoring layout) and identical bytes.
  bool operator==(const Literal& other) const;
  bool operator!=(const Literal& other) const { return !(*this == other); }

  // Re-interprets this array literal with another shape of the same element
  // type and element count (row-major order is kept).
  StatusOr<Literal> Reshape(const std::vector<int64_t>& dims) const;

 private:
  Shape shape_;
  std::vector<uint8_t> data_;
  std::vector<Literal> elements_;
};

// Formats a real value as HLO text does: shortest round-trip decimal for the
// type, "inf", "-inf", "nan".
std::string FormatFloat(ElementType type, double value);

template <typename T>
Literal Literal::Scalar(ElementType type, T value) {
  Literal lit{Shape(type, {})};
  if constexpr (std::is_same_v<T, bool>) {
    lit.SetPred(0, value);
  } else if constexpr (std::is_same_v<T, std::complex<double>> ||
                       std::is_same_v<T, std::complex<float>>) {
    lit.SetC128(0, std::complex<double>(value));
  } else {
    if (IsPred(type)) lit.SetPred(0, value != T(0));
    else if (IsSignedInteger(type)) lit.SetS64(0, static_cast<int64_t>(value));
    else if (IsUnsignedInteger(type)) lit.SetU64(0, static_cast<uint64_t>(value));
    else if (IsComplex(type)) lit.SetC128(0, static_cast<double>(value));
    else lit.SetF64(0, static_cast<double>(value));
  }
  return lit;
}

}  // namespace kiln
