// Value syntax: how every kiln tool spells array values on its command line,
// following IREE's run-module flags so that commands carry over.
//
// A value spec is one of:
//   2x3xf32=1 2 3 4 5 6     dims 'x'-separated, then the element type, '=',
//                           then the elements in row-major order
//   f32=1.5                 a scalar (no dims)
//   4xf32=1                 one element fills the whole array (a splat)
//   0x4xf32=                an empty array
//   2x2xbf16=@raw.bin       raw little-endian element storage from a file
//                           (one byte per element for pred and sub-byte types)
//   @x.npy                  a .npy file; its type comes from the file, or from
//                           the expected shape for ml_dtypes' void descriptors
//   2xbf16=@x.npy           a .npy file with the type stated
//   1 2 3 4                 elements only: only where an expected shape is given
// Element types: kiln/HLO names (pred, s8..s64, u8..u64, f16, bf16, f32, f64,
// f8e4m3fn, ..., c64, c128) and IREE/MLIR names (i1 = pred, i8/si8 = s8,
// ui8 = u8, ..., f8E4M3FN, complex<f32> = c64, complex<f64> = c128); case is
// ignored. IREE's signless iN means signed.
// Elements are separated by spaces and/or commas; brackets [] {} () are
// ignored, so printed values and HLO-style nesting parse back. Elements:
//   pred      1 0 true false
//   integers  decimal or 0x-prefixed hex, with an optional sign; values out of
//             the type's range are errors
//   floats    decimal, 0x hex floats, inf -inf +inf nan; rounded to the type
//   complex   a+bi or a-bi (also 'j'), bi alone, or a real alone: "1+2i",
//             "-0.5-1e-3i", "3", "2i", "inf+nani"; no spaces inside
//
// Printing (FormatValue) writes the same syntax, IREE-style: rank-1 elements
// are space separated, each row of a higher rank is bracketed:
//   2x3xf32=[1 2 3][4 5 6]     f32=1.5     3xpred=1 0 1     2xc64=1+2i 0-1i
// Floats print as the shortest decimal that round-trips in their type, so
// FormatValue output always parses back to identical bits (NaN payloads aside).
//
// Output specs (WriteValue): "-" prints the value to the stream, "@o.npy"
// writes a .npy file, "+o.npy" appends an array to one, "@o.bin" / "+o.bin"
// write or append raw storage bytes, "" discards the value.
#pragma once

#include <optional>
#include <ostream>
#include <string>
#include <string_view>
#include <vector>

#include "common/literal.h"
#include "common/shape.h"
#include "common/status.h"

namespace kiln {

// Parses a value spec. When `expected` is given (an array shape), the value
// must have its element type and dimensions; errors name both shapes.
StatusOr<Literal> ParseValue(std::string_view spec, const Shape* expected);

// Element type from a kiln or IREE name ("s32", "i32", "ui8", "bf16",
// "complex<f32>"); nullopt if unknown.
std::optional<ElementType> ParseValueElementType(std::string_view name);

// "2x3xf32" for an array shape; "f32" for a scalar.
std::string FormatValueShape(const Shape& shape);

// "2x3xf32=[1 2 3][4 5 6]". Arrays only; tuples print their leaves
// separated by newlines.
std::string FormatValue(const Literal& literal);

// One element in value syntax ("1.5", "-3", "1", "1+2i").
std::string FormatValueElement(const Literal& literal, int64_t index);

// Writes `literal` (an array) as `spec` says; "-" prints FormatValue and a
// newline to `out`.
Status WriteValue(const Literal& literal, std::string_view spec, std::ostream& out);

// The array leaves of a (nested) tuple in order; an array is its own leaf.
// Tools run with one --input/--output per leaf.
std::vector<Literal> FlattenTuple(Literal literal);
// The array leaf shapes of a (nested) tuple shape, in the same order.
std::vector<Shape> FlattenShape(const Shape& shape);
// The inverse of FlattenTuple: a value of `shape` from its array leaves
// (tokens become empty values). Fails when the leaf count does not match.
StatusOr<Literal> UnflattenTuple(const Shape& shape, std::vector<Literal> leaves);

}  // namespace kiln
