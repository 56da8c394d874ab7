// Shared pieces of the evaluator's contraction ops (dot, convolution, fft):
// reading operands into flat accumulator-typed buffers and writing results.
//
// Why one accumulator type per value class: XLA's HloEvaluator converts both
// operands of a dot/convolution to the result element type and accumulates
// products in that type's "elementwise" type (f32 for bf16/f16). kiln follows
// the conversion to the result type exactly but accumulates in the widest type
// of the class (double, complex<double>, or uint64 with 2^64 wrap-around) and
// rounds once when storing. For integers this is bit-exact with XLA (modular
// arithmetic commutes with the final wrap); for floats it is the exactly
// rounded result of a double-precision sum, which differs from XLA only by
// XLA's own f32 accumulation error (bf16 results: XLA CPU accumulates in f32
// and rounds to bf16 at the end; kiln accumulates in double and rounds to
// bf16 at the end).
#pragma once

#include <complex>
#include <cstdint>
#include <vector>

#include "common/literal.h"
#include "common/status.h"
#include "compiler/hlo/instruction.h"
#include "compiler/evaluator/op_evaluators.h"

namespace kiln::hlo {

// How a result element type accumulates.
enum class AccumKind { kReal, kInteger, kComplex };
AccumKind AccumKindFor(ElementType result_type);

// Every element of the array `lit`, converted to `result_type` as XLA's
// Convert would (floats rounded to nearest even, integers wrapped, floats to
// integers truncated and saturated, NaN to 0), returned in the accumulator
// type of `result_type`'s class. Integers are returned as their two's
// complement bits so that uint64 arithmetic wraps like the result type.
std::vector<double> ReadAsReal(const Literal& lit, ElementType result_type);
std::vector<uint64_t> ReadAsInteger(const Literal& lit, ElementType result_type);
std::vector<std::complex<double>> ReadAsComplex(const Literal& lit, ElementType result_type);

// Stores accumulated values into a new array literal of `shape` (rounding or
// wrapping once per element; pred results are "any product was non-zero",
// what XLA's bool accumulation gives).
Literal StoreReal(const Shape& shape, const std::vector<double>& values);
Literal StoreInteger(const Shape& shape, const std::vector<uint64_t>& values);
Literal StoreComplex(const Shape& shape, const std::vector<std::complex<double>>& values);

// Copies `src` (row-major over `dims`) into a new buffer laid out row-major
// over the dimensions taken in `order` (new dimension i is old dimension
// order[i]). `order` must be a permutation of 0..rank-1.
template <typename T>
std::vector<T> PermuteDims(const std::vector<T>& src, const std::vector<int64_t>& dims,
                           const std::vector<int64_t>& order) {
  const int64_t rank = static_cast<int64_t>(dims.size());
  bool identity = true;
  for (int64_t i = 0; i < rank; ++i) identity = identity && order[i] == i;
  if (identity) return src;
  std::vector<int64_t> src_strides = RowMajorStrides(dims);
  std::vector<int64_t> new_dims(rank), strides(rank);
  int64_t count = 1;
  for (int64_t i = 0; i < rank; ++i) {
    new_dims[i] = dims[order[i]];
    strides[i] = src_strides[order[i]];
    count *= new_dims[i];
  }
  std::vector<T> dst(count);
  if (count == 0) return dst;
  // Odometer over all but the innermost new dimension; the innermost one is
  // a strided copy.
  const int64_t inner = new_dims[rank - 1], inner_stride = strides[rank - 1];
  std::vector<int64_t> index(rank, 0);
  int64_t src_offset = 0;
  for (int64_t out = 0; out < count; out += inner) {
    for (int64_t j = 0; j < inner; ++j) dst[out + j] = src[src_offset + j * inner_stride];
    for (int64_t d = rank - 2; d >= 0; --d) {
      src_offset += strides[d];
      if (++index[d] < new_dims[d]) break;
      src_offset -= strides[d] * new_dims[d];
      index[d] = 0;
    }
  }
  return dst;
}

// The per-opcode evaluators behind EvalContractionOp.
StatusOr<Literal> EvalDot(const HloInstruction& inst, const Operands& operands);
StatusOr<Literal> EvalConvolution(const HloInstruction& inst, const Operands& operands);
StatusOr<Literal> EvalFft(const HloInstruction& inst, const Operands& operands);

}  // namespace kiln::hlo
