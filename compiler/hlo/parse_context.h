// ParseContext: the state shared by the pieces of the HLO text parser (the
// lexer, the file name for messages, the recursion depth) and the small
// token-level helpers they all use.
//
// Errors are formatted once, here, as
//   file:line:col: error: message
//   <the source line>
//   <caret under the column>
// so every part of the parser reports positions the same way.
#pragma once

#include <cstdint>
#include <string>
#include <string_view>
#include <utility>
#include <vector>

#include "common/literal.h"
#include "common/shape.h"
#include "common/status.h"
#include "compiler/hlo/attributes.h"
#include "compiler/hlo/lexer.h"

namespace kiln::hlo::internal {

// Deepest nesting of tuples, braces and parentheses the parser accepts.
inline constexpr int kMaxNestingDepth = 512;
// Largest array shape accepted, in elements (2^48: far above any real model,
// far below int64 overflow of byte sizes).
inline constexpr int64_t kMaxElements = int64_t{1} << 48;
// Largest constant the parser will materialize, in bytes.
inline constexpr int64_t kMaxLiteralBytes = int64_t{1} << 32;

class ParseContext {
 public:
  ParseContext(std::string_view text, std::string_view file_name)
      : lexer_(text), file_name_(file_name) {}

  Lexer& lex() { return lexer_; }
  TokKind kind() const { return lexer_.kind(); }
  const Token& tok() const { return lexer_.tok(); }
  const SourcePos& pos() const { return lexer_.pos(); }
  std::string_view file_name() const { return file_name_; }

  // The formatted error at `pos`.
  Status ErrorAt(const SourcePos& pos, std::string_view message) const;
  // An error at the current token: "message, got <token>".
  Status TokenError(std::string_view message) const;

  bool EatIf(TokKind kind) {
    if (lexer_.kind() != kind) return false;
    lexer_.Lex();
    return true;
  }
  // Consumes a token of `kind` or fails with "expected <what>".
  Status Expect(TokKind kind, std::string_view what);
  // True if the current token is the identifier `word`.
  bool AtWord(std::string_view word) const {
    return lexer_.kind() == TokKind::kIdent && lexer_.tok().text == word;
  }

  // An identifier (with or without '%'); returns its text.
  StatusOr<std::string_view> ParseName(std::string_view what);
  // A signed 64-bit integer token.
  StatusOr<int64_t> ParseInt64();
  // An integer or decimal token as a double.
  StatusOr<double> ParseDouble();
  // `open` int (`delim` int)* `close`; empty allowed.
  Status ParseIntList(TokKind open, TokKind close, TokKind delim, std::vector<int64_t>* out);
  // true / false.
  StatusOr<bool> ParseBool();

  // Recursion accounting: Enter() fails past kMaxNestingDepth; each
  // successful or failed Enter() must be paired with Leave() (use
  // DepthGuard).
  bool Enter() { return ++depth_ <= kMaxNestingDepth; }
  void Leave() { --depth_; }

  // Counters behind the placeholder data of elided ("{...}") constants,
  // running across one parse as XLA's parser's do across a process, so
  // that two elided constants of one module differ (see literal_parser.cc).
  uint32_t next_elided_word = 0;
  uint8_t next_elided_byte = 0;

 private:
  Lexer lexer_;
  std::string_view file_name_;
  int depth_ = 0;
};

// RAII recursion guard: `DepthGuard g(ctx); KILN_RETURN_IF_ERROR(g.status());`
class DepthGuard {
 public:
  explicit DepthGuard(ParseContext& ctx) : ctx_(ctx), ok_(ctx.Enter()) {}
  ~DepthGuard() { ctx_.Leave(); }
  Status status() const {
    return ok_ ? Status::Ok() : ctx_.ErrorAt(ctx_.pos(), "nesting is too deep");
  }

 private:
  ParseContext& ctx_;
  bool ok_;
};

// Integer text ("-12", "345") to int64; false on overflow or bad syntax.
bool ParseInt64Text(std::string_view text, int64_t* out);
// Integer text to sign and magnitude (magnitude up to 2^64-1).
bool ParseIntegerMagnitude(std::string_view text, bool* negative, uint64_t* magnitude);
// Decimal or integer text to double (overflow gives +-inf, underflow 0).
bool ParseDoubleText(std::string_view text, double* out);
// C-style unescaping of a quoted string's contents.
std::string Unescape(std::string_view text);

// --- Shapes (shape_parser.cc) ---
// shape ::= type '[' dims ']' layout? | '(' shapes ')'
StatusOr<Shape> ParseShape(ParseContext& ctx);
// The invariants ParseShape guarantees: dimensions non-negative (or -1 for
// a dynamic "?"), at most kMaxElements elements per array, bounded tuple
// byte sizes. Used for shapes the parser infers.
bool ShapeWithinBounds(const Shape& shape);
// True when the current token starts a shape (a type name followed by '['
// or a '(').
bool AtShape(ParseContext& ctx);

// --- Literals (literal_parser.cc) ---
// A constant's value for `shape`; sets *elided for "{...}".
StatusOr<Literal> ParseLiteral(ParseContext& ctx, const Shape& shape, bool* elided);

// --- Attributes (attribute_parser.cc) ---
// A computation named by an attribute, resolved once all are parsed.
struct ComputationName {
  std::string_view name;
  SourcePos pos;
};
// The value of attribute `name` (the current token is its first token).
// Computation references are returned as empty ComputationRefs with their
// names in *computation_names.
StatusOr<AttrValue> ParseAttributeValue(ParseContext& ctx, std::string_view name,
                                        std::vector<ComputationName>* computation_names);
// A value kept verbatim (balanced brackets, strings and comments skipped).
StatusOr<std::string_view> ParseRawValue(ParseContext& ctx);
// Materializes an iota replica-group list; exposed for tests via the parser.
Status MaterializeIotaGroups(ReplicaGroups& groups);

}  // namespace kiln::hlo::internal
