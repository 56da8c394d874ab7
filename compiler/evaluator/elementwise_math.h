// Scalar arithmetic of the evaluator's elementwise ops, one table per value
// class: pred, integer, real float and complex.
//
// Why per class: every element is read in its class's widest type (bool,
// 64-bit integer bits, double, complex<double>), computed there and rounded or
// wrapped once when stored in the result type. For real floats narrower than
// f64 this is exactly XLA's correctly-rounded + - * / sqrt; transcendentals
// are at least as accurate as XLA's. Integers are carried as the 64-bit
// "canonical" bits of their value (sign-extended for signed types,
// zero-extended for unsigned ones), computed with unsigned wrap-around, and
// truncated to the type's width on store, which is XLA's two's-complement
// wrap. The finders return nullptr for an op the class does not define, so
// callers report an error instead of computing a wrong answer.
#pragma once

#include <complex>
#include <cstdint>

#include "compiler/hlo/opcode.h"

namespace kiln::hlo::elementwise {

// An integer element type: its width in bits and signedness.
struct IntType {
  int bits;
  bool is_signed;
};

// The canonical 64-bit form of the low `t.bits` bits of `v`.
uint64_t Canonical(uint64_t v, IntType t);

using PredUnaryFn = bool (*)(bool);
using IntUnaryFn = uint64_t (*)(uint64_t, IntType);
using RealUnaryFn = double (*)(double);
using ComplexUnaryFn = std::complex<double> (*)(std::complex<double>);

using PredBinaryFn = bool (*)(bool, bool);
using IntBinaryFn = uint64_t (*)(uint64_t, uint64_t, IntType);
using RealBinaryFn = double (*)(double, double);
using ComplexBinaryFn = std::complex<double> (*)(std::complex<double>, std::complex<double>);

// Unary ops whose result has the operand's element type.
PredUnaryFn FindPredUnary(HloOpcode op);
IntUnaryFn FindIntUnary(HloOpcode op);
RealUnaryFn FindRealUnary(HloOpcode op);
ComplexUnaryFn FindComplexUnary(HloOpcode op);

// Binary ops whose operands and result share one element type.
PredBinaryFn FindPredBinary(HloOpcode op);
IntBinaryFn FindIntBinary(HloOpcode op);
RealBinaryFn FindRealBinary(HloOpcode op);
ComplexBinaryFn FindComplexBinary(HloOpcode op);

// XLA's maximum/minimum on reals: a NaN operand (lhs first) is the result;
// otherwise ties (including -0 vs +0) return lhs, as XLA's evaluator and CPU
// emitter do.
double RealMax(double a, double b);
double RealMin(double a, double b);

}  // namespace kiln::hlo::elementwise
