// Names and properties of PTX types and state spaces; see ptx_module.h.
#include "cuda_emulator/ptx/ptx_module.h"

namespace kiln::emu::ptx {

int TypeBits(Type t) {
  switch (t) {
    case Type::kNone: return 0;
    case Type::kPred: return 1;
    case Type::kB8: case Type::kU8: case Type::kS8: return 8;
    case Type::kB16: case Type::kU16: case Type::kS16: case Type::kF16: case Type::kBF16: return 16;
    case Type::kB32: case Type::kU32: case Type::kS32: case Type::kF32: case Type::kF16x2:
    case Type::kBF16x2: return 32;
    case Type::kB64: case Type::kU64: case Type::kS64: case Type::kF64: return 64;
    case Type::kB128: return 128;
  }
  return 0;
}

bool IsFloat(Type t) {
  return t == Type::kF16 || t == Type::kF16x2 || t == Type::kBF16 || t == Type::kBF16x2 ||
         t == Type::kF32 || t == Type::kF64;
}

bool IsSigned(Type t) {
  return t == Type::kS8 || t == Type::kS16 || t == Type::kS32 || t == Type::kS64;
}

std::string_view TypeName(Type t) {
  switch (t) {
    case Type::kNone: return "none";
    case Type::kPred: return "pred";
    case Type::kB8: return "b8";
    case Type::kB16: return "b16";
    case Type::kB32: return "b32";
    case Type::kB64: return "b64";
    case Type::kB128: return "b128";
    case Type::kU8: return "u8";
    case Type::kU16: return "u16";
    case Type::kU32: return "u32";
    case Type::kU64: return "u64";
    case Type::kS8: return "s8";
    case Type::kS16: return "s16";
    case Type::kS32: return "s32";
    case Type::kS64: return "s64";
    case Type::kF16: return "f16";
    case Type::kF16x2: return "f16x2";
    case Type::kBF16: return "bf16";
    case Type::kBF16x2: return "bf16x2";
    case Type::kF32: return "f32";
    case Type::kF64: return "f64";
  }
  return "?";
}

std::string_view SpaceName(Space s) {
  switch (s) {
    case Space::kGeneric: return "generic";
    case Space::kGlobal: return "global";
    case Space::kShared: return "shared";
    case Space::kLocal: return "local";
    case Space::kParam: return "param";
    case Space::kConst: return "const";
  }
  return "?";
}

const Kernel* Module::FindKernel(std::string_view name) const {
  for (const auto& k : kernels)
    if (k->name == name) return k.get();
  return nullptr;
}

}  // namespace kiln::emu::ptx
