#include "common/random_literal.h"

namespace kiln {

Literal RandomLiteral(const Shape& shape, std::mt19937_64& rng) {
  if (shape.IsTuple()) {
    std::vector<Literal> elements;
    for (const Shape& s : shape.tuple_shapes()) elements.push_back(RandomLiteral(s, rng));
    return Literal::MakeTuple(std::move(elements));
  }
  Literal lit(shape);
  if (!shape.IsArray()) return lit;
  ElementType t = shape.element_type();
  std::uniform_real_distribution<double> real(-1.0, 1.0);
  std::uniform_int_distribution<int64_t> small(-8, 7);
  std::uniform_int_distribution<int64_t> bit(0, 1);
  for (int64_t i = 0; i < lit.element_count(); ++i) {
    if (IsPred(t)) lit.SetPred(i, bit(rng) != 0);
    else if (IsSignedInteger(t)) lit.SetS64(i, BitWidth(t) <= 2 ? small(rng) % 2 : small(rng));
    else if (IsUnsignedInteger(t)) lit.SetU64(i, static_cast<uint64_t>(small(rng) + 8) % (BitWidth(t) <= 2 ? 4 : 8));
    else if (IsComplex(t)) lit.SetC128(i, {real(rng), real(rng)});
    else lit.SetF64(i, real(rng));
  }
  return lit;
}

}  // namespace kiln
