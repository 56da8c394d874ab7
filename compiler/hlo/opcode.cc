#include "compiler/hlo/opcode.h"

#include <array>

namespace kiln::hlo {
namespace {

struct OpcodeInfo {
  HloOpcode opcode;
  std::string_view name;
  int arity;
};

constexpr OpcodeInfo kOpcodes[] = {
#define KILN_OPCODE_INFO(e, text, arity) {HloOpcode::e, text, arity},
    KILN_HLO_OPCODE_LIST(KILN_OPCODE_INFO)
#undef KILN_OPCODE_INFO
};

}  // namespace

std::string_view OpcodeName(HloOpcode opcode) { return kOpcodes[static_cast<int>(opcode)].name; }

std::optional<HloOpcode> OpcodeFromName(std::string_view name) {
  for (const OpcodeInfo& info : kOpcodes)
    if (info.name == name) return info.opcode;
  return std::nullopt;
}

int OpcodeArity(HloOpcode opcode) { return kOpcodes[static_cast<int>(opcode)].arity; }

int OpcodeCount() { return static_cast<int>(std::size(kOpcodes)); }

bool IsElementwiseUnary(HloOpcode op) {
  switch (op) {
    case HloOpcode::kAbs: case HloOpcode::kCbrt: case HloOpcode::kCeil:
    case HloOpcode::kClz: case HloOpcode::kCos: case HloOpcode::kErf:
    case HloOpcode::kExp: case HloOpcode::kExpm1: case HloOpcode::kFloor:
    case HloOpcode::kImag: case HloOpcode::kIsFinite: case HloOpcode::kLog:
    case HloOpcode::kLog1p: case HloOpcode::kLogistic: case HloOpcode::kNegate:
    case HloOpcode::kNot: case HloOpcode::kPopulationCount: case HloOpcode::kReal:
    case HloOpcode::kRoundNearestAfz: case HloOpcode::kRoundNearestEven:
    case HloOpcode::kRsqrt: case HloOpcode::kSign: case HloOpcode::kSin:
    case HloOpcode::kSqrt: case HloOpcode::kTan: case HloOpcode::kTanh:
    case HloOpcode::kConvert:
    case HloOpcode::kReducePrecision: case HloOpcode::kCopy:
      return true;
    default:
      return false;
  }
}

bool IsElementwiseBinary(HloOpcode op) {
  switch (op) {
    case HloOpcode::kAdd: case HloOpcode::kAnd: case HloOpcode::kAtan2:
    case HloOpcode::kCompare: case HloOpcode::kComplex: case HloOpcode::kDivide:
    case HloOpcode::kMaximum: case HloOpcode::kMinimum: case HloOpcode::kMultiply:
    case HloOpcode::kOr: case HloOpcode::kPower: case HloOpcode::kRemainder:
    case HloOpcode::kShiftLeft: case HloOpcode::kShiftRightArithmetic:
    case HloOpcode::kShiftRightLogical: case HloOpcode::kSubtract: case HloOpcode::kXor:
    case HloOpcode::kStochasticConvert:
      return true;
    default:
      return false;
  }
}

bool IsElementwise(HloOpcode op) {
  return IsElementwiseUnary(op) || IsElementwiseBinary(op) || op == HloOpcode::kClamp ||
         op == HloOpcode::kSelect;
}

}  // namespace kiln::hlo
