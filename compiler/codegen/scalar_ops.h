// ScalarOps: emits the per-element arithmetic of HLO ops as MLIR arith/math
// operations with XLA's semantics, for the kernel emitter.
//
// Value representation: an HLO element of type T is an SSA value of
// ValueType(T): pred is i1, sN/uN are signless iN, f16/bf16/f32/f64 are the
// MLIR float types. f16 and bf16 values are always already rounded: every op
// on them extends to f32, computes there and truncates the result (as XLA's
// float normalization does). Integer ops wrap modulo 2^N; the cases LLVM
// leaves undefined (x/0, INT_MIN/-1, shifts >= N, float->int overflow and
// NaN) are given XLA's results with explicit selects.
#pragma once

#include "common/element_type.h"
#include "common/literal.h"
#include "common/status.h"
#include "compiler/hlo/instruction.h"
#include <vector>

#include "mlir/Dialect/Arith/IR/Arith.h"
#include "mlir/IR/Builders.h"

namespace kiln::codegen::internal {

// pred, s8..s64, u8..u64, f16, bf16, f32, f64.
bool IsSupportedElementType(ElementType type);
// i1 for pred, else the type the element has in memory.
mlir::Type ValueType(mlir::MLIRContext* context, ElementType type);
// The memref element type: like ValueType, but pred is stored as i8.
mlir::Type StorageType(mlir::MLIRContext* context, ElementType type);

class ScalarOps {
 public:
  ScalarOps(mlir::OpBuilder& builder, mlir::Location loc) : b_(builder), loc_(loc) {}

  // Element `index` of array literal `literal` as a constant of ValueType.
  mlir::Value Constant(const Literal& literal, int64_t index);
  mlir::Value IndexConstant(int64_t value);
  // Storage <-> value representation (only pred differs).
  mlir::Value FromStorage(mlir::Value stored, ElementType type);
  mlir::Value ToStorage(mlir::Value value, ElementType type);

  // Unary elementwise ops (including is-finite, whose result is pred).
  StatusOr<mlir::Value> Unary(const hlo::HloInstruction& inst, mlir::Value x);
  // Binary elementwise ops other than compare.
  StatusOr<mlir::Value> Binary(const hlo::HloInstruction& inst, mlir::Value a, mlir::Value b);
  StatusOr<mlir::Value> Compare(const hlo::HloInstruction& inst, mlir::Value a, mlir::Value b);
  // Complex values (complex_ops.cc).
  mlir::Value ComplexConstant(mlir::Type type, double re, double im);
  StatusOr<mlir::Value> ComplexUnary(const hlo::HloInstruction& inst, mlir::Value x);
  StatusOr<mlir::Value> ComplexBinary(const hlo::HloInstruction& inst, mlir::Value a, mlir::Value b);
  StatusOr<mlir::Value> MakeComplex(const hlo::HloInstruction& inst, mlir::Value re, mlir::Value im);
  StatusOr<mlir::Value> ConvertToComplex(const hlo::HloInstruction& inst, mlir::Value v, ElementType from,
                                         ElementType to);
  // reduce-precision, bit for bit as the evaluator (common/float_formats.h).
  StatusOr<mlir::Value> ReducePrecision(const hlo::HloInstruction& inst, mlir::Value x);
  // stochastic-convert(x, random bits) -> integer.
  StatusOr<mlir::Value> StochasticConvert(const hlo::HloInstruction& inst, mlir::Value x, mlir::Value random);
  // bitcast-convert between element types of one bit width (the emitter
  // handles width changes, ElementalEmitter::EmitBitcastConvert).
  StatusOr<mlir::Value> BitcastConvert(const hlo::HloInstruction& inst, mlir::Value x);
  // convert: XLA's value conversion (see element_conversion.h).
  StatusOr<mlir::Value> Convert(const hlo::HloInstruction& inst, mlir::Value v, ElementType from,
                                ElementType to);
  mlir::Value Clamp(ElementType type, mlir::Value lo, mlir::Value x, mlir::Value hi);
  mlir::Value Select(mlir::Value pred, mlir::Value on_true, mlir::Value on_false);

  // Index arithmetic of the indexing ops (dynamic-slice, gather, scatter).
  // An integer element as an index: signed types sign-extend, unsigned ones
  // zero-extend, and a u64 above INT64_MAX saturates (as the evaluator reads
  // start indices).
  mlir::Value IndexFromInteger(mlir::Value v, ElementType type);
  // min(max(v, lo), hi) on signed index values.
  mlir::Value ClampIndex(mlir::Value v, int64_t lo, int64_t hi);
  // Signed comparison of index values, and the conjunction of predicates
  // (true when `preds` is empty).
  mlir::Value IndexCompare(mlir::arith::CmpIPredicate pred, mlir::Value a, mlir::Value b);
  mlir::Value AllOf(const std::vector<mlir::Value>& preds);
  // The multi-index of row-major position `linear` in an array of `dims`.
  std::vector<mlir::Value> Delinearize(mlir::Value linear, const std::vector<int64_t>& dims);

  // Floats narrower than f32 (f16, bf16, f8) -> f32; other values unchanged.
  mlir::Value Widen(mlir::Value v);
  // Rounds an f32/f64 compute value to `type`'s representation.
  mlir::Value Narrow(mlir::Value v, ElementType type);

  // HLO's maximum (is_max) or minimum of two floats of one type: NaN if
  // either is NaN.
  mlir::Value FloatMax(mlir::Value a, mlir::Value b, bool is_max);

 private:
  mlir::Value FloatConst(mlir::Type type, double value);
  mlir::Value IntConst(mlir::Type type, int64_t value);
  mlir::Value IsNan(mlir::Value v);
  // Rounds f64 to f32 with round-to-odd, so that a following f32 -> f16/bf16
  // rounding gives the correctly rounded f64 -> f16/bf16 result.
  mlir::Value F64ToF32RoundToOdd(mlir::Value v);
  mlir::Value FloatToInt(mlir::Value v, ElementType to);
  StatusOr<mlir::Value> FloatUnary(const hlo::HloInstruction& inst, mlir::Value x);
  StatusOr<mlir::Value> IntUnary(const hlo::HloInstruction& inst, mlir::Value x, ElementType t);
  StatusOr<mlir::Value> FloatBinary(const hlo::HloInstruction& inst, mlir::Value a, mlir::Value b);
  StatusOr<mlir::Value> IntBinary(const hlo::HloInstruction& inst, mlir::Value a, mlir::Value b,
                                  ElementType t);
  mlir::Value IntDivide(mlir::Value a, mlir::Value b, bool is_signed, bool remainder);
  mlir::Value Shift(hlo::HloOpcode op, mlir::Value a, mlir::Value b);
  mlir::Value IntPower(mlir::Value a, mlir::Value b, bool is_signed);

  mlir::OpBuilder& b_;
  mlir::Location loc_;
};

}  // namespace kiln::codegen::internal
