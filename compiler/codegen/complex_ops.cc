// Complex (c64, c128) scalar ops of the kernel IR: values are MLIR
// complex<f32> / complex<f64>, stored as (re, im) pairs, exactly kiln's
// Literal storage. Arithmetic lowers through the complex dialect
// (ComplexToStandard for division, exp and abs, then ComplexToLLVM), so
// both targets compute it the same way.
#include "compiler/codegen/scalar_ops.h"

#include <cstring>

#include "llvm/Support/raw_ostream.h"
#include "mlir/Dialect/Complex/IR/Complex.h"

namespace kiln::codegen::internal {

using hlo::HloOpcode;
using mlir::Value;

namespace {

Status ComplexUnsupported(const hlo::HloInstruction& inst) {
  return Error(inst.DebugName() + ": codegen does not support " + std::string(hlo::OpcodeName(inst.opcode())) +
               " on complex values");
}

}  // namespace

Value ScalarOps::ComplexConstant(mlir::Type type, double re, double im) {
  auto ct = mlir::cast<mlir::ComplexType>(type);
  auto ft = mlir::cast<mlir::FloatType>(ct.getElementType());
  mlir::ArrayAttr parts = b_.getArrayAttr({b_.getFloatAttr(ft, re), b_.getFloatAttr(ft, im)});
  return mlir::complex::ConstantOp::create(b_, loc_, ct, parts);
}

// Result types are given explicitly: the builders that infer them go
// through the ops' InferTypeOpInterface, which these calls do not need.
StatusOr<Value> ScalarOps::ComplexUnary(const hlo::HloInstruction& inst, Value x) {
  namespace complex = mlir::complex;
  mlir::Type type = x.getType();
  auto complex_type = mlir::dyn_cast<mlir::ComplexType>(type);
  if (!complex_type) {
    std::string text;
    llvm::raw_string_ostream os(text);
    os << type;
    return Error(inst.DebugName() + ": internal error: complex op on a value of type " + text);
  }
  mlir::Type part = complex_type.getElementType();
  switch (inst.opcode()) {
    case HloOpcode::kReal: return Value(complex::ReOp::create(b_, loc_, part, x));
    case HloOpcode::kImag: return Value(complex::ImOp::create(b_, loc_, part, x));
    case HloOpcode::kNegate: return Value(complex::NegOp::create(b_, loc_, type, x));
    case HloOpcode::kAbs: return Value(complex::AbsOp::create(b_, loc_, part, x));
    case HloOpcode::kExp: return Value(complex::ExpOp::create(b_, loc_, type, x));
    default: return ComplexUnsupported(inst);
  }
}

StatusOr<Value> ScalarOps::ComplexBinary(const hlo::HloInstruction& inst, Value a, Value b) {
  namespace complex = mlir::complex;
  mlir::Type type = a.getType();
  switch (inst.opcode()) {
    case HloOpcode::kAdd: return Value(complex::AddOp::create(b_, loc_, type, a, b));
    case HloOpcode::kSubtract: return Value(complex::SubOp::create(b_, loc_, type, a, b));
    case HloOpcode::kMultiply: return Value(complex::MulOp::create(b_, loc_, type, a, b));
    case HloOpcode::kDivide: return Value(complex::DivOp::create(b_, loc_, type, a, b));
    default: return ComplexUnsupported(inst);
  }
}

StatusOr<Value> ScalarOps::MakeComplex(const hlo::HloInstruction& inst, Value re, Value im) {
  ElementType t = inst.shape().element_type();
  if (!IsComplex(t) || inst.operand(0)->shape().element_type() != ComplexComponentType(t) ||
      inst.operand(1)->shape().element_type() != ComplexComponentType(t))
    return Error(inst.DebugName() + ": complex needs two operands of the result's component type");
  return Value(mlir::complex::CreateOp::create(b_, loc_, ValueType(b_.getContext(), t), re, im));
}

// Real or integer -> complex: the value as the real part, imaginary zero;
// complex -> complex: both parts converted.
StatusOr<Value> ScalarOps::ConvertToComplex(const hlo::HloInstruction& inst, Value v, ElementType from,
                                            ElementType to) {
  ElementType component = ComplexComponentType(to);
  mlir::Type target = ValueType(b_.getContext(), to);
  if (IsComplex(from)) {
    mlir::Type from_part = mlir::cast<mlir::ComplexType>(v.getType()).getElementType();
    Value re = Narrow(Widen(mlir::complex::ReOp::create(b_, loc_, from_part, v)), component);
    Value im = Narrow(Widen(mlir::complex::ImOp::create(b_, loc_, from_part, v)), component);
    return Value(mlir::complex::CreateOp::create(b_, loc_, target, re, im));
  }
  KILN_ASSIGN_OR_RETURN(Value re, Convert(inst, v, from, component));
  Value zero = FloatConst(ValueType(b_.getContext(), component), 0);
  return Value(mlir::complex::CreateOp::create(b_, loc_, target, re, zero));
}

}  // namespace kiln::codegen::internal
