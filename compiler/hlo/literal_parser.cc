// Literal (constant value) parsing for HLO text.
//
//   literal ::= scalar | nested | '{...}' | '(' literal (',' literal)* ')'
//   nested  ::= '{' (nested | element) (',' ...)* '}'   (rank levels deep)
//   element ::= int | decimal | inf | -inf | nan | -nan | true | false
//             | '(' real ',' imag ')'                    (complex types)
//
// Values are range-checked against the element type (as XLA's parser does)
// and then stored with Literal's setters, which round floats to the type.
// Storage is allocated only after checking that the text is long enough to
// hold every element (or, for the elided "{...}" form, that it is at most
// kMaxLiteralBytes), so malformed input cannot request huge allocations.
//
// An elided constant ("{...}", how XLA dumps large constants) is legal HLO
// whose values are gone. It is filled as XLA's parser fills it by default:
// each 32-bit word of the storage takes the next value of a counter that
// runs across the module (the bytes of a tail shorter than a word take a
// byte counter), masked to 0/1 for pred, so elided constants differ from
// one another and the module compiles, runs and benchmarks with the same
// placeholder data XLA would use on a first parse. Results then depend on
// that placeholder: tools warn (HloModule::CountElidedConstants).
#include <cmath>
#include <complex>
#include <cstring>
#include <limits>
#include <string>

#include "common/float_formats.h"
#include "compiler/hlo/parse_context.h"

namespace kiln::hlo::internal {
namespace {

std::string TypeName(ElementType t) { return std::string(ElementTypeName(t)); }

// One real value as written: a number, inf, nan, or nan(0x<payload>) with
// the payload given in the bits of the element type (as XLA prints NaNs
// other than the default quiet NaN).
struct RealValue {
  double value = 0;
  uint64_t nan_payload = 0;  // 0: none
};

StatusOr<RealValue> ParseRealValue(ParseContext& ctx) {
  RealValue r;
  if (ctx.kind() != TokKind::kIdent) {
    KILN_ASSIGN_OR_RETURN(r.value, ctx.ParseDouble());
    return r;
  }
  std::string_view w = ctx.tok().text;
  if (w == "inf") r.value = std::numeric_limits<double>::infinity();
  else if (w == "-inf") r.value = -std::numeric_limits<double>::infinity();
  else if (w == "nan") r.value = std::numeric_limits<double>::quiet_NaN();
  else if (w == "-nan") r.value = -std::numeric_limits<double>::quiet_NaN();
  else return ctx.TokenError("expected a floating-point value");
  bool has_payload = std::isnan(r.value) && ctx.lex().FollowedBy('(');
  ctx.lex().Lex();
  if (!has_payload) return r;
  // nan(0x1f): '(' then the integer 0 immediately followed by x<hex>.
  ctx.lex().Lex();
  if (ctx.kind() != TokKind::kInt || ctx.tok().text != "0" || !ctx.lex().FollowedBy('x'))
    return ctx.TokenError("expected a hexadecimal NaN payload 0x...");
  ctx.lex().Lex();
  std::string_view hex = ctx.tok().text.substr(1);
  if (hex.empty() || hex.size() > 16) return ctx.TokenError("malformed NaN payload");
  for (char c : hex) {
    int d = (c >= '0' && c <= '9') ? c - '0' : (c >= 'a' && c <= 'f') ? c - 'a' + 10
            : (c >= 'A' && c <= 'F') ? c - 'A' + 10 : -1;
    if (d < 0) return ctx.TokenError("malformed NaN payload");
    r.nan_payload = r.nan_payload * 16 + static_cast<uint64_t>(d);
  }
  if (r.nan_payload == 0) return ctx.TokenError("a NaN payload must be nonzero");
  ctx.lex().Lex();
  KILN_RETURN_IF_ERROR(ctx.Expect(TokKind::kRParen, "')' after the NaN payload"));
  return r;
}

// A real value that, if finite, must stay finite when rounded to `type`
// (XLA rejects constants that overflow their type); NaN payloads must fit
// an IEEE-style type's mantissa.
StatusOr<RealValue> ParseCheckedReal(ParseContext& ctx, ElementType type) {
  SourcePos pos = ctx.pos();
  std::string text(ctx.tok().text.substr(0, 40));
  KILN_ASSIGN_OR_RETURN(RealValue r, ParseRealValue(ctx));
  double v = r.value;
  if (std::isfinite(v)) {
    // f32: values up to half an ulp above the largest float round down to
    // it (round to nearest even); from there on they would become inf.
    constexpr double kF32Overflow =
        static_cast<double>(std::numeric_limits<float>::max()) + 0x1p103;
    bool overflow = type == ElementType::kF32
                        ? std::fabs(v) >= kF32Overflow
                        : type != ElementType::kF64 && !std::isfinite(RoundToFloatType(type, v));
    if (overflow) return ctx.ErrorAt(pos, "value " + text + " is out of range for " + TypeName(type));
  }
  if (r.nan_payload != 0) {
    const FloatFormat* fmt = FindFloatFormat(type);
    if (!fmt || fmt->specials != FloatSpecials::kIeee || fmt->mantissa_bits == 0)
      return ctx.ErrorAt(pos, TypeName(type) + " NaNs do not carry payloads");
    if (r.nan_payload >= (uint64_t{1} << fmt->mantissa_bits))
      return ctx.ErrorAt(pos, "NaN payload is out of range for " + TypeName(type));
  }
  return r;
}

// Stores `r` as the encoding of real type `type` at `p`.
void StoreReal(uint8_t* p, ElementType type, const RealValue& r) {
  const FloatFormat* fmt = FindFloatFormat(type);
  uint64_t bits = 0;
  if (r.nan_payload != 0 && fmt) {
    uint64_t exp_ones = ((uint64_t{1} << fmt->exponent_bits) - 1) << fmt->mantissa_bits;
    uint64_t sign = std::signbit(r.value) ? uint64_t{1} << (fmt->bits - 1) : 0;
    bits = sign | exp_ones | r.nan_payload;
  } else if (type == ElementType::kF64) {
    std::memcpy(&bits, &r.value, 8);
  } else if (type == ElementType::kF32) {
    float f = static_cast<float>(r.value);
    std::memcpy(&bits, &f, 4);
  } else {
    bits = EncodeNarrowFloat(type, r.value);
  }
  std::memcpy(p, &bits, StorageBytes(type));  // little-endian, as Literal
}

Status ParseIntElement(ParseContext& ctx, Literal& lit, int64_t index) {
  ElementType type = lit.element_type();
  SourcePos pos = ctx.pos();
  if (ctx.kind() != TokKind::kInt)
    return ctx.TokenError("expected an integer for element type " + TypeName(type));
  bool negative;
  uint64_t magnitude;
  std::string_view text = ctx.tok().text;
  bool ok = ParseIntegerMagnitude(text, &negative, &magnitude);
  int bits = BitWidth(type);
  if (ok) {
    if (IsUnsignedInteger(type)) {
      uint64_t max = bits >= 64 ? ~uint64_t{0} : (uint64_t{1} << bits) - 1;
      ok = (!negative || magnitude == 0) && magnitude <= max;
      if (ok) lit.SetU64(index, magnitude);
    } else {
      uint64_t max_pos = (uint64_t{1} << (bits - 1)) - 1;
      ok = negative ? magnitude <= max_pos + 1 : magnitude <= max_pos;
      if (ok) lit.SetS64(index, negative ? static_cast<int64_t>(0 - magnitude)
                                         : static_cast<int64_t>(magnitude));
    }
  }
  if (!ok)
    return ctx.ErrorAt(pos, "value " + std::string(text.substr(0, 40)) + " is out of range for " +
                                TypeName(type));
  ctx.lex().Lex();
  return Status::Ok();
}

Status ParseElement(ParseContext& ctx, Literal& lit, int64_t index) {
  ElementType type = lit.element_type();
  SourcePos pos = ctx.pos();
  if (IsPred(type)) {
    if (ctx.AtWord("true") || ctx.AtWord("false")) {
      lit.SetPred(index, ctx.AtWord("true"));
      ctx.lex().Lex();
      return Status::Ok();
    }
    if (ctx.kind() == TokKind::kInt && (ctx.tok().text == "0" || ctx.tok().text == "1")) {
      lit.SetPred(index, ctx.tok().text == "1");
      ctx.lex().Lex();
      return Status::Ok();
    }
    return ctx.TokenError("expected true, false, 0 or 1 for pred");
  }
  if (IsInteger(type)) return ParseIntElement(ctx, lit, index);
  if (IsComplex(type)) {
    KILN_RETURN_IF_ERROR(ctx.Expect(TokKind::kLParen, "'(' to start a complex value"));
    ElementType component = ComplexComponentType(type);
    KILN_ASSIGN_OR_RETURN(RealValue re, ParseCheckedReal(ctx, component));
    KILN_RETURN_IF_ERROR(ctx.Expect(TokKind::kComma, "',' in a complex value"));
    KILN_ASSIGN_OR_RETURN(RealValue im, ParseCheckedReal(ctx, component));
    KILN_RETURN_IF_ERROR(ctx.Expect(TokKind::kRParen, "')' to end a complex value"));
    uint8_t* p = lit.raw() + index * StorageBytes(type);
    StoreReal(p, component, re);
    StoreReal(p + StorageBytes(component), component, im);
    return Status::Ok();
  }
  if (IsFloat(type)) {
    KILN_ASSIGN_OR_RETURN(RealValue r, ParseCheckedReal(ctx, type));
    StoreReal(lit.raw() + index * StorageBytes(type), type, r);
    return Status::Ok();
  }
  return ctx.ErrorAt(pos, "constants of type " + TypeName(type) + " are not supported");
}

// An array literal: a scalar for rank 0, else rank levels of braces.
Status ParseArrayElements(ParseContext& ctx, Literal& lit) {
  const Shape& shape = lit.shape();
  const int64_t rank = shape.rank();
  if (rank == 0) return ParseElement(ctx, lit, 0);
  if (ctx.kind() != TokKind::kLBrace)
    return ctx.TokenError("expected '{' to start a constant of rank " + std::to_string(rank));
  std::vector<int64_t> seen(rank, 0);
  int64_t level = 0;
  int64_t index = 0;
  while (true) {
    SourcePos pos = ctx.pos();
    switch (ctx.kind()) {
      case TokKind::kLBrace: {
        if (level == rank)
          return ctx.ErrorAt(pos, "too many nested braces for a constant of rank " +
                                      std::to_string(rank));
        if (level > 0 && ++seen[level - 1] > shape.dim(level - 1))
          return ctx.ErrorAt(pos, "dimension " + std::to_string(level - 1) + " has more than " +
                                      std::to_string(shape.dim(level - 1)) + " elements");
        ++level;
        ctx.lex().Lex();
        break;
      }
      case TokKind::kRBrace: {
        if (seen[level - 1] != shape.dim(level - 1))
          return ctx.ErrorAt(pos, "dimension " + std::to_string(level - 1) + " has " +
                                      std::to_string(seen[level - 1]) + " elements, expected " +
                                      std::to_string(shape.dim(level - 1)));
        seen[level - 1] = 0;
        --level;
        ctx.lex().Lex();
        if (level == 0) return Status::Ok();
        break;
      }
      case TokKind::kComma:
        ctx.lex().Lex();
        break;
      case TokKind::kInt:
      case TokKind::kDecimal:
      case TokKind::kIdent:
      case TokKind::kLParen: {
        if (level != rank)
          return ctx.ErrorAt(pos, "expected '{': the constant has rank " + std::to_string(rank) +
                                      " but this element is at nesting level " +
                                      std::to_string(level));
        if (++seen[rank - 1] > shape.dim(rank - 1))
          return ctx.ErrorAt(pos, "dimension " + std::to_string(rank - 1) + " has more than " +
                                      std::to_string(shape.dim(rank - 1)) + " elements");
        KILN_RETURN_IF_ERROR(ParseElement(ctx, lit, index++));
        break;
      }
      default:
        return ctx.TokenError("unexpected token in constant");
    }
  }
}

// The bit mask that keeps a placeholder byte a valid value of `type` in
// kiln's storage (pred: 0/1; sub-byte integers and f4: one per byte).
uint8_t PlaceholderByteMask(ElementType type) {
  if (type == ElementType::kPred) return 0x01;
  int bits = BitWidth(type);
  return bits < 8 ? static_cast<uint8_t>((1u << bits) - 1) : 0xff;
}

void FillElidedPlaceholder(ParseContext& ctx, Literal& literal) {
  uint8_t byte_mask = PlaceholderByteMask(literal.shape().element_type());
  uint32_t word_mask = byte_mask * 0x01010101u;
  uint8_t* raw = literal.raw();
  size_t words = literal.raw_size() / 4;
  for (size_t i = 0; i < words; ++i) {
    uint32_t word = ctx.next_elided_word++ & word_mask;
    std::memcpy(raw + 4 * i, &word, 4);  // little-endian, as XLA's storage
  }
  for (size_t i = 4 * words; i < literal.raw_size(); ++i) raw[i] = ctx.next_elided_byte++ & byte_mask;
  // Signed sub-byte integers are stored sign-extended.
  ElementType type = literal.shape().element_type();
  int bits = BitWidth(type);
  if (type != ElementType::kPred && bits < 8 && IsSignedInteger(type))
    for (size_t i = 0; i < literal.raw_size(); ++i)
      raw[i] = static_cast<uint8_t>(static_cast<int8_t>(raw[i] << (8 - bits)) >> (8 - bits));
}

StatusOr<Literal> ParseLiteralImpl(ParseContext& ctx, const Shape& shape, bool* elided) {
  DepthGuard guard(ctx);
  KILN_RETURN_IF_ERROR(guard.status());
  SourcePos start = ctx.pos();
  if (shape.IsTuple()) {
    KILN_RETURN_IF_ERROR(ctx.Expect(TokKind::kLParen, "'(' to start a tuple constant"));
    std::vector<Literal> elements;
    for (int64_t i = 0; i < shape.tuple_size(); ++i) {
      if (i > 0) KILN_RETURN_IF_ERROR(ctx.Expect(TokKind::kComma, "',' between tuple elements"));
      KILN_ASSIGN_OR_RETURN(Literal e, ParseLiteralImpl(ctx, shape.tuple_shape(i), elided));
      elements.push_back(std::move(e));
    }
    KILN_RETURN_IF_ERROR(ctx.Expect(TokKind::kRParen, "')' to end the tuple constant"));
    Literal tuple = Literal::MakeTuple(std::move(elements));
    return tuple;
  }
  if (!shape.IsArray())
    return ctx.ErrorAt(start, "cannot write a constant of shape " + shape.ToString());
  for (int64_t i = 0; i < shape.rank(); ++i)
    if (shape.dim(i) < 0)
      return ctx.ErrorAt(start, "a constant cannot have an unbounded dynamic dimension");
  // Elided data: "{...}".
  if (ctx.kind() == TokKind::kLBrace && ctx.lex().PeekKind() == TokKind::kDots) {
    if (shape.rank() == 0) return ctx.ErrorAt(start, "a scalar constant cannot be elided");
    if (shape.ByteSize() > kMaxLiteralBytes)
      return ctx.ErrorAt(start, "elided constant of shape " + shape.ToString() +
                                    " is too large to materialize (over 4 GiB)");
    ctx.lex().Lex();
    ctx.lex().Lex();
    KILN_RETURN_IF_ERROR(ctx.Expect(TokKind::kRBrace, "'}' after '...'"));
    *elided = true;
    Literal placeholder(shape);
    FillElidedPlaceholder(ctx, placeholder);
    return placeholder;
  }
  // Every element needs at least one character of text.
  int64_t remaining = ctx.lex().end() - start.ptr;
  if (shape.ElementCount() > remaining)
    return ctx.ErrorAt(start, "constant of shape " + shape.ToString() + " has " +
                                  std::to_string(shape.ElementCount()) +
                                  " elements, more than the remaining text could hold");
  Literal lit(shape);
  KILN_RETURN_IF_ERROR(ParseArrayElements(ctx, lit));
  return lit;
}

}  // namespace

StatusOr<Literal> ParseLiteral(ParseContext& ctx, const Shape& shape, bool* elided) {
  *elided = false;
  return ParseLiteralImpl(ctx, shape, elided);
}

}  // namespace kiln::hlo::internal
