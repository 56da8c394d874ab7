// Lexer for HLO text: a hand-written scanner over a string_view.
//
// Why hand-written: the parser must read tens of megabytes per second, so
// tokens are views into the source (no per-token allocation, no regex) and
// line/column are tracked incrementally while skipping whitespace. Values
// whose spelling is not a token sequence (dim labels "b01f_01io->b01f",
// window sizes "3x3", pads "0_1x2_3", and attributes kept verbatim) are read
// at character level by ScanAtom / ScanBalanced, starting from the current
// token.
#pragma once

#include <cstdint>
#include <string_view>

namespace kiln::hlo {

enum class TokKind : uint8_t {
  kEof,
  kError,     // text holds the offending characters; error() says why
  kIdent,     // [A-Za-z_][A-Za-z0-9_.-]*, or %name (text excludes '%'),
              // or -inf / -nan (text includes '-')
  kInt,       // -?[0-9]+
  kDecimal,   // -?digits with '.' and/or exponent
  kString,    // "..." or '...'; text excludes the quotes, still escaped
  kEqual, kComma, kColon, kLParen, kRParen, kLSquare, kRSquare, kLBrace, kRBrace,
  kArrow,     // ->
  kLeq,       // <=
  kStar, kHash, kQuestion, kPlus, kTilde,
  kDots,      // ...
};

// A position in the source: pointer plus 1-based line and column (bytes).
struct SourcePos {
  const char* ptr = nullptr;
  int line = 0;
  int col = 0;
};

struct Token {
  TokKind kind = TokKind::kEof;
  std::string_view text;
  SourcePos pos;  // first character of the token (the '%' or quote included)
  const char* error = nullptr;  // for kError
};

// Human-readable name of a token kind for messages ("'{'", "identifier").
std::string_view TokKindName(TokKind kind);

class Lexer {
 public:
  explicit Lexer(std::string_view text);

  const Token& tok() const { return tok_; }
  TokKind kind() const { return tok_.kind; }
  const SourcePos& pos() const { return tok_.pos; }
  // Advances to the next token.
  void Lex();
  // Kind of the token after the current one, without consuming anything.
  TokKind PeekKind() const;
  // True when the current token is immediately followed (no whitespace) by `c`.
  bool FollowedBy(char c) const { return cur_ < end_ && *cur_ == c; }
  // The character right after the current token ('\0' at the end).
  char NextChar() const { return cur_ < end_ ? *cur_ : '\0'; }

  // Re-reads from the start of the current token a run of characters up to
  // whitespace, EOF or one of ,(){}[]"' ; then lexes the following token.
  std::string_view ScanAtom();
  // Re-reads from the start of the current token one verbatim value: a run
  // that stops at depth 0 on whitespace, ',' or an unmatched closer, with
  // (), [], {} balanced and strings and comments skipped. Returns false (and
  // sets *error) on unbalanced brackets, unterminated strings or nesting
  // deeper than `max_depth`. Then lexes the following token.
  bool ScanBalanced(int max_depth, std::string_view* out, const char** error);

  std::string_view source() const { return std::string_view(begin_, end_ - begin_); }
  // The full source line containing `p` (without the newline).
  std::string_view LineAt(const char* p) const;
  const char* end() const { return end_; }

 private:
  struct State {
    const char* cur;
    int line;
    const char* line_start;
  };
  void SkipTrivia();
  void LexNumber(const char* start);
  void LexIdent(const char* start, const char* text_start);
  void LexString(const char* start, char quote);
  void SetError(const char* start, const char* end, const char* message);
  // Skips the quoted string at p; the position after it, or nullptr.
  const char* SkipQuoted(const char* p);
  // Moves the scan position back to the start of the current token.
  void Rewind();
  void NewLine(const char* after_newline) {
    ++line_;
    line_start_ = after_newline;
  }

  const char* begin_;
  const char* end_;
  const char* cur_;
  int line_ = 1;
  const char* line_start_;
  Token tok_;
};

}  // namespace kiln::hlo
