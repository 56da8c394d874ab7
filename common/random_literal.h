// Seeded random values of any shape, for tools and tests that run modules
// without user-provided inputs. The same seed always gives the same values.
#pragma once

#include <random>

#include "common/literal.h"

namespace kiln {

// Floats uniform in [-1, 1) rounded to the type, signed integers in [-8, 8),
// unsigned in [0, 8), pred 0/1, complex with both parts in [-1, 1); tuples
// element by element; tokens empty.
Literal RandomLiteral(const Shape& shape, std::mt19937_64& rng);

}  // namespace kiln
