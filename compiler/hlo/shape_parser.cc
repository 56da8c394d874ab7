// Shape and layout parsing for HLO text.
//
//   shape  ::= type '[' (dim (',' dim)*)? ']' layout? | '(' (shape (',' shape)*)? ')'
//   dim    ::= int | '<=' int | '?'
//   layout ::= '{' ints? (':' suffix*)? '}'
//   suffix ::= 'T' ('(' (int|'*')* ')')+ | 'E(' int ')' | 'S(' int ')' | other
//
// Sizes are validated while parsing (non-negative dimensions, element counts
// and byte sizes bounded) so later code can multiply dimensions freely.
#include <string>
#include <unordered_map>

#include "compiler/hlo/parse_context.h"

namespace kiln::hlo::internal {
namespace {

// Byte size bound for a whole (tuple) shape; keeps ByteSize() sums far from
// int64 overflow.
constexpr int64_t kMaxShapeBytes = int64_t{1} << 60;

int64_t ShapeBytesSaturated(const Shape& shape) {
  if (shape.IsTuple()) {
    int64_t total = 0;
    for (const Shape& s : shape.tuple_shapes()) {
      total += ShapeBytesSaturated(s);
      if (total > kMaxShapeBytes) return kMaxShapeBytes + 1;
    }
    return total;
  }
  if (!shape.IsArray()) return 0;
  int64_t n = 1;
  for (int64_t d : shape.dims()) n *= d > 0 ? d : 0;  // dims already bounded
  return n * StorageBytes(shape.element_type());
}

// One parenthesized group "( ... )" consumed token by token (nesting
// counted), for layout suffixes kiln keeps verbatim.
Status SkipParenGroup(ParseContext& ctx) {
  KILN_RETURN_IF_ERROR(ctx.Expect(TokKind::kLParen, "'('"));
  int depth = 1;
  while (depth > 0) {
    switch (ctx.kind()) {
      case TokKind::kEof:
      case TokKind::kError:
        return ctx.TokenError("expected ')' to close a layout item");
      case TokKind::kLParen:
        if (++depth > kMaxNestingDepth) return ctx.ErrorAt(ctx.pos(), "nesting is too deep");
        break;
      case TokKind::kRParen:
        --depth;
        break;
      default:
        break;
    }
    ctx.lex().Lex();
  }
  return Status::Ok();
}

Status ParseTiles(ParseContext& ctx, Layout& layout) {
  // Current token is 'T'.
  ctx.lex().Lex();
  if (ctx.kind() != TokKind::kLParen) return ctx.TokenError("expected '(' after T");
  while (ctx.EatIf(TokKind::kLParen)) {
    Tile tile;
    if (!ctx.EatIf(TokKind::kRParen)) {
      while (true) {
        if (ctx.EatIf(TokKind::kStar)) {
          tile.dims.push_back(Tile::kCombined);
        } else {
          SourcePos p = ctx.pos();
          KILN_ASSIGN_OR_RETURN(int64_t d, ctx.ParseInt64());
          if (d < 0) return ctx.ErrorAt(p, "tile dimension must be non-negative");
          tile.dims.push_back(d);
        }
        if (!ctx.EatIf(TokKind::kComma)) break;
      }
      KILN_RETURN_IF_ERROR(ctx.Expect(TokKind::kRParen, "')' to close a tile"));
    }
    layout.tiles.push_back(std::move(tile));
  }
  return Status::Ok();
}

StatusOr<int64_t> ParseParenInt(ParseContext& ctx) {
  ctx.lex().Lex();  // the E / S letter
  KILN_RETURN_IF_ERROR(ctx.Expect(TokKind::kLParen, "'('"));
  KILN_ASSIGN_OR_RETURN(int64_t v, ctx.ParseInt64());
  KILN_RETURN_IF_ERROR(ctx.Expect(TokKind::kRParen, "')'"));
  return v;
}

Status ParseLayout(ParseContext& ctx, Shape& shape) {
  SourcePos start = ctx.pos();
  ctx.lex().Lex();  // '{'
  Layout layout;
  if (ctx.kind() == TokKind::kInt) {
    layout.minor_to_major.reserve(shape.rank());
    while (true) {
      KILN_ASSIGN_OR_RETURN(int64_t d, ctx.ParseInt64());
      layout.minor_to_major.push_back(d);
      if (!ctx.EatIf(TokKind::kComma)) break;
    }
  }
  if (ctx.EatIf(TokKind::kColon)) {
    while (ctx.kind() != TokKind::kRBrace) {
      const char* item_start = ctx.pos().ptr;
      if (ctx.AtWord("T")) {
        KILN_RETURN_IF_ERROR(ParseTiles(ctx, layout));
        continue;
      }
      if (ctx.AtWord("E")) {
        KILN_ASSIGN_OR_RETURN(layout.element_size_in_bits, ParseParenInt(ctx));
        continue;
      }
      if (ctx.AtWord("S")) {
        KILN_ASSIGN_OR_RETURN(layout.memory_space, ParseParenInt(ctx));
        continue;
      }
      if (ctx.kind() != TokKind::kIdent && ctx.kind() != TokKind::kHash &&
          ctx.kind() != TokKind::kStar)
        return ctx.TokenError("expected a layout item or '}'");
      ctx.lex().Lex();
      if (ctx.kind() != TokKind::kLParen) return ctx.TokenError("expected '(' in layout item");
      while (ctx.kind() == TokKind::kLParen) KILN_RETURN_IF_ERROR(SkipParenGroup(ctx));
      // The item ends at the last ')' before the current token.
      const char* item_end = ctx.pos().ptr;
      while (item_end > item_start && item_end[-1] != ')') --item_end;
      layout.other_suffix.append(item_start, item_end - item_start);
    }
  }
  KILN_RETURN_IF_ERROR(ctx.Expect(TokKind::kRBrace, "'}' to close the layout"));
  // minor_to_major must be a permutation of the dimensions.
  int64_t rank = shape.rank();
  if (static_cast<int64_t>(layout.minor_to_major.size()) != rank)
    return ctx.ErrorAt(start, "layout has " + std::to_string(layout.minor_to_major.size()) +
                                  " dimensions but the shape has rank " + std::to_string(rank));
  std::vector<bool> seen(rank, false);
  for (int64_t d : layout.minor_to_major) {
    if (d < 0 || d >= rank || seen[d])
      return ctx.ErrorAt(start, "layout " + layout.ToString() +
                                    " is not a permutation of the dimensions");
    seen[d] = true;
  }
  shape.set_layout(std::move(layout));
  return Status::Ok();
}

// Dimension sizes into `dims`; the indices of dynamic ones into `dynamic`
// (rarely non-empty, so usually no allocation).
Status ParseDims(ParseContext& ctx, std::vector<int64_t>& dims, std::vector<int64_t>& dynamic) {
  KILN_RETURN_IF_ERROR(ctx.Expect(TokKind::kLSquare, "'['"));
  if (ctx.EatIf(TokKind::kRSquare)) return Status::Ok();
  dims.reserve(6);  // one allocation for typical ranks
  int64_t elements = 1;
  while (true) {
    SourcePos p = ctx.pos();
    if (ctx.EatIf(TokKind::kQuestion)) {
      dynamic.push_back(static_cast<int64_t>(dims.size()));
      dims.push_back(-1);  // unbounded dynamic dimension
    } else {
      bool is_dynamic = ctx.EatIf(TokKind::kLeq);
      p = ctx.pos();
      KILN_ASSIGN_OR_RETURN(int64_t d, ctx.ParseInt64());
      if (d < 0) return ctx.ErrorAt(p, "dimension size must be non-negative");
      if (d > kMaxElements || (d > 0 && elements > kMaxElements / d))
        return ctx.ErrorAt(p, "shape has too many elements (more than 2^48)");
      elements *= d;
      if (is_dynamic) dynamic.push_back(static_cast<int64_t>(dims.size()));
      dims.push_back(d);
    }
    if (!ctx.EatIf(TokKind::kComma)) break;
  }
  return ctx.Expect(TokKind::kRSquare, "']' to close the dimensions");
}

// Element type by name; a hash lookup since every shape starts with one.
std::optional<ElementType> LookupElementType(std::string_view name) {
  static const std::unordered_map<std::string_view, ElementType> kTypes = [] {
    std::unordered_map<std::string_view, ElementType> m;
    for (ElementType t : kAllArrayTypes) m.emplace(ElementTypeName(t), t);
    m.emplace(ElementTypeName(ElementType::kToken), ElementType::kToken);
    m.emplace(ElementTypeName(ElementType::kOpaque), ElementType::kOpaque);
    return m;
  }();
  if (name.size() < 2 || name.size() > 16) return std::nullopt;
  auto it = kTypes.find(name);
  if (it == kTypes.end()) return std::nullopt;
  return it->second;
}

}  // namespace

bool ShapeWithinBounds(const Shape& shape) {
  if (shape.IsTuple()) {
    for (const Shape& s : shape.tuple_shapes())
      if (!ShapeWithinBounds(s)) return false;
    return ShapeBytesSaturated(shape) <= kMaxShapeBytes;
  }
  int64_t elements = 1;
  for (int64_t i = 0; i < shape.rank(); ++i) {
    int64_t d = shape.dim(i);
    if (d < 0) {
      if (d != -1 || !shape.is_dynamic_dim(i)) return false;
      continue;
    }
    if (d > kMaxElements || (d > 0 && elements > kMaxElements / d)) return false;
    elements *= d;
  }
  return true;
}

bool AtShape(ParseContext& ctx) {
  if (ctx.kind() == TokKind::kLParen) return true;
  return ctx.kind() == TokKind::kIdent && ctx.lex().FollowedBy('[') &&
         LookupElementType(ctx.tok().text).has_value();
}

StatusOr<Shape> ParseShape(ParseContext& ctx) {
  DepthGuard guard(ctx);
  KILN_RETURN_IF_ERROR(guard.status());
  SourcePos start = ctx.pos();
  if (ctx.EatIf(TokKind::kLParen)) {
    std::vector<Shape> elements;
    if (!ctx.EatIf(TokKind::kRParen)) {
      while (true) {
        KILN_ASSIGN_OR_RETURN(Shape s, ParseShape(ctx));
        elements.push_back(std::move(s));
        if (!ctx.EatIf(TokKind::kComma)) break;
      }
      KILN_RETURN_IF_ERROR(ctx.Expect(TokKind::kRParen, "')' to close the tuple shape"));
    }
    Shape tuple = Shape::Tuple(std::move(elements));
    if (ShapeBytesSaturated(tuple) > kMaxShapeBytes)
      return ctx.ErrorAt(start, "tuple shape is too large");
    return tuple;
  }
  if (ctx.kind() != TokKind::kIdent) return ctx.TokenError("expected a shape");
  std::optional<ElementType> type = LookupElementType(ctx.tok().text);
  if (!type)
    return ctx.TokenError("expected an element type");
  ctx.lex().Lex();
  std::vector<int64_t> dims;
  std::vector<int64_t> dynamic;
  KILN_RETURN_IF_ERROR(ParseDims(ctx, dims, dynamic));
  if ((*type == ElementType::kToken || *type == ElementType::kOpaque) && !dims.empty())
    return ctx.ErrorAt(start, std::string(ElementTypeName(*type)) + " shapes have no dimensions");
  Shape shape(*type, std::move(dims));
  for (int64_t i : dynamic) shape.set_dynamic_dim(i, true);
  // A '{' starts a layout only if an integer or ':' follows; otherwise it
  // is, e.g., the body of a computation whose result shape this is.
  if (ctx.kind() == TokKind::kLBrace) {
    char c = ctx.lex().NextChar();
    bool layout = (c >= '0' && c <= '9') || c == ':';
    if (!layout && c != '}' && c != '%' && !(c >= 'a' && c <= 'z') && !(c >= 'A' && c <= 'Z')) {
      TokKind next = ctx.lex().PeekKind();  // whitespace or a comment first
      layout = next == TokKind::kInt || next == TokKind::kColon;
    }
    if (layout) KILN_RETURN_IF_ERROR(ParseLayout(ctx, shape));
  }
  return shape;
}

}  // namespace kiln::hlo::internal
