// Lexer for HLO text; see lexer.h.
#include "compiler/hlo/lexer.h"

#include <array>
#include <cstring>
#include <string>

namespace kiln::hlo {
namespace {

inline bool IsDigit(char c) { return c >= '0' && c <= '9'; }
inline bool IsAlpha(char c) { return (c >= 'a' && c <= 'z') || (c >= 'A' && c <= 'Z'); }
inline bool IsIdentStart(char c) { return IsAlpha(c) || c == '_'; }
inline bool IsIdentChar(char c) {
  return IsAlpha(c) || IsDigit(c) || c == '_' || c == '.' || c == '-';
}
inline bool IsSpace(char c) { return c == ' ' || c == '\t' || c == '\n' || c == '\r'; }

}  // namespace

std::string_view TokKindName(TokKind kind) {
  switch (kind) {
    case TokKind::kEof: return "end of input";
    case TokKind::kError: return "invalid token";
    case TokKind::kIdent: return "identifier";
    case TokKind::kInt: return "integer";
    case TokKind::kDecimal: return "number";
    case TokKind::kString: return "string";
    case TokKind::kEqual: return "'='";
    case TokKind::kComma: return "','";
    case TokKind::kColon: return "':'";
    case TokKind::kLParen: return "'('";
    case TokKind::kRParen: return "')'";
    case TokKind::kLSquare: return "'['";
    case TokKind::kRSquare: return "']'";
    case TokKind::kLBrace: return "'{'";
    case TokKind::kRBrace: return "'}'";
    case TokKind::kArrow: return "'->'";
    case TokKind::kLeq: return "'<='";
    case TokKind::kStar: return "'*'";
    case TokKind::kHash: return "'#'";
    case TokKind::kQuestion: return "'?'";
    case TokKind::kPlus: return "'+'";
    case TokKind::kTilde: return "'~'";
    case TokKind::kDots: return "'...'";
  }
  return "token";
}

Lexer::Lexer(std::string_view text)
    : begin_(text.data()), end_(text.data() + text.size()), cur_(begin_), line_start_(begin_) {
  Lex();
}

void Lexer::SkipTrivia() {
  while (cur_ < end_) {
    char c = *cur_;
    if (c == '\n') {
      NewLine(++cur_);
    } else if (c == ' ' || c == '\t' || c == '\r') {
      ++cur_;
    } else if (c == '/' && cur_ + 1 < end_ && cur_[1] == '*') {
      const char* p = cur_ + 2;
      bool closed = false;
      while (p < end_) {
        if (*p == '*' && p + 1 < end_ && p[1] == '/') {
          closed = true;
          p += 2;
          break;
        }
        if (*p == '\n') NewLine(p + 1);
        ++p;
      }
      if (!closed) return;  // Lex() reports the unterminated comment
      cur_ = p;
    } else if (c == '/' && cur_ + 1 < end_ && cur_[1] == '/') {
      const char* nl = static_cast<const char*>(std::memchr(cur_, '\n', end_ - cur_));
      cur_ = nl ? nl : end_;
    } else {
      return;
    }
  }
}

void Lexer::SetError(const char* start, const char* end, const char* message) {
  tok_.kind = TokKind::kError;
  tok_.text = std::string_view(start, end - start);
  tok_.error = message;
  cur_ = end;
}

void Lexer::Lex() {
  SkipTrivia();
  tok_.pos = SourcePos{cur_, line_, static_cast<int>(cur_ - line_start_) + 1};
  tok_.error = nullptr;
  if (cur_ >= end_) {
    tok_.kind = TokKind::kEof;
    tok_.text = std::string_view(end_, 0);
    return;
  }
  const char* start = cur_;
  char c = *cur_;
  auto single = [&](TokKind kind) {
    tok_.kind = kind;
    tok_.text = std::string_view(start, 1);
    ++cur_;
  };
  switch (c) {
    case '=': return single(TokKind::kEqual);
    case ',': return single(TokKind::kComma);
    case ':': return single(TokKind::kColon);
    case '(': return single(TokKind::kLParen);
    case ')': return single(TokKind::kRParen);
    case '[': return single(TokKind::kLSquare);
    case ']': return single(TokKind::kRSquare);
    case '{': return single(TokKind::kLBrace);
    case '}': return single(TokKind::kRBrace);
    case '*': return single(TokKind::kStar);
    case '#': return single(TokKind::kHash);
    case '?': return single(TokKind::kQuestion);
    case '+': return single(TokKind::kPlus);
    case '~': return single(TokKind::kTilde);
    case '"':
    case '\'':
      return LexString(start, c);
    case '%':
      if (cur_ + 1 < end_ && IsIdentStart(cur_[1])) return LexIdent(start, start + 1);
      return SetError(start, start + 1, "expected a name after '%'");
    case '<':
      if (cur_ + 1 < end_ && cur_[1] == '=') {
        tok_.kind = TokKind::kLeq;
        tok_.text = std::string_view(start, 2);
        cur_ += 2;
        return;
      }
      return SetError(start, start + 1, "unexpected character '<'");
    case '-':
      if (cur_ + 1 < end_) {
        char n = cur_[1];
        if (n == '>') {
          tok_.kind = TokKind::kArrow;
          tok_.text = std::string_view(start, 2);
          cur_ += 2;
          return;
        }
        if (IsDigit(n) || n == '.') return LexNumber(start);
        if (IsIdentStart(n)) return LexIdent(start, start);  // -inf, -nan
      }
      return SetError(start, start + 1, "unexpected character '-'");
    case '.':
      if (end_ - cur_ >= 3 && cur_[1] == '.' && cur_[2] == '.') {
        tok_.kind = TokKind::kDots;
        tok_.text = std::string_view(start, 3);
        cur_ += 3;
        return;
      }
      if (cur_ + 1 < end_ && IsDigit(cur_[1])) return LexNumber(start);
      return SetError(start, start + 1, "unexpected character '.'");
    case '/':
      if (cur_ + 1 < end_ && cur_[1] == '*') return SetError(start, end_, "unterminated comment");
      return SetError(start, start + 1, "unexpected character '/'");
    default:
      break;
  }
  if (IsDigit(c)) return LexNumber(start);
  if (IsIdentStart(c)) return LexIdent(start, start);
  SetError(start, start + 1, "unexpected character");
}

void Lexer::LexNumber(const char* start) {
  const char* p = start;
  if (*p == '-') ++p;
  bool decimal = false;
  while (p < end_ && IsDigit(*p)) ++p;
  if (p < end_ && *p == '.' && !(p + 1 < end_ && p[1] == '.')) {
    decimal = true;
    ++p;
    while (p < end_ && IsDigit(*p)) ++p;
  }
  if (p < end_ && (*p == 'e' || *p == 'E')) {
    const char* q = p + 1;
    if (q < end_ && (*q == '+' || *q == '-')) ++q;
    if (q < end_ && IsDigit(*q)) {
      decimal = true;
      while (q < end_ && IsDigit(*q)) ++q;
      p = q;
    }
  }
  tok_.kind = decimal ? TokKind::kDecimal : TokKind::kInt;
  tok_.text = std::string_view(start, p - start);
  cur_ = p;
}

void Lexer::LexIdent(const char* start, const char* text_start) {
  const char* p = text_start + 1;
  while (p < end_ && IsIdentChar(*p)) ++p;
  tok_.kind = TokKind::kIdent;
  tok_.text = std::string_view(text_start, p - text_start);
  cur_ = p;
}

void Lexer::LexString(const char* start, char quote) {
  const char* p = start + 1;
  while (p < end_) {
    char c = *p;
    if (c == quote) {
      tok_.kind = TokKind::kString;
      tok_.text = std::string_view(start + 1, p - start - 1);
      cur_ = p + 1;
      return;
    }
    if (c == '\\') {
      ++p;
      if (p < end_ && *p == '\n') NewLine(p + 1);
    } else if (c == '\n') {
      NewLine(p + 1);
    }
    ++p;
  }
  SetError(start, end_, "unterminated string");
}

TokKind Lexer::PeekKind() const {
  Lexer copy = *this;
  copy.Lex();
  return copy.kind();
}

void Lexer::Rewind() {
  cur_ = tok_.pos.ptr;
  line_ = tok_.pos.line;
  line_start_ = cur_ - (tok_.pos.col - 1);
}

std::string_view Lexer::ScanAtom() {
  Rewind();
  const char* start = cur_;
  const char* p = cur_;
  while (p < end_) {
    char c = *p;
    if (IsSpace(c) || c == ',' || c == '(' || c == ')' || c == '{' || c == '}' || c == '[' ||
        c == ']' || c == '"' || c == '\'')
      break;
    ++p;
  }
  cur_ = p;
  Lex();
  return std::string_view(start, p - start);
}

// Character classes for ScanBalanced.
enum : uint8_t { kPlain, kQuote, kSlash, kOpen, kClose, kStop, kNewline };

constexpr std::array<uint8_t, 256> MakeScanClasses() {
  std::array<uint8_t, 256> t{};
  t['"'] = t['\''] = kQuote;
  t['/'] = kSlash;
  t['('] = t['['] = t['{'] = kOpen;
  t[')'] = t[']'] = t['}'] = kClose;
  t[','] = t[' '] = t['\t'] = t['\r'] = kStop;
  t['\n'] = kNewline;
  return t;
}
constexpr std::array<uint8_t, 256> kScanClasses = MakeScanClasses();

// Skips a quoted string starting at p (the quote); returns the position
// after the closing quote, or nullptr if unterminated.
const char* Lexer::SkipQuoted(const char* p) {
  const char quote = *p;
  const char* q = p + 1;
  while (true) {
    const char* close = static_cast<const char*>(std::memchr(q, quote, end_ - q));
    if (!close) return nullptr;
    // Count escapes and newlines in [q, close): a quote preceded by an odd
    // number of backslashes is escaped.
    for (const char* r = q; r < close; ++r)
      if (*r == '\n') NewLine(r + 1);
    size_t backslashes = 0;
    for (const char* r = close; r > p + 1 && r[-1] == '\\'; --r) ++backslashes;
    if (backslashes % 2 == 0) return close + 1;
    q = close + 1;
  }
}

bool Lexer::ScanBalanced(int max_depth, std::string_view* out, const char** error) {
  Rewind();
  const char* start = cur_;
  const char* p = cur_;
  constexpr int kStackSize = 1024;
  char stack[kStackSize];  // expected closers
  int depth = 0;
  if (max_depth > kStackSize) max_depth = kStackSize;
  auto fail = [&](const char* message) {
    *error = message;
    cur_ = p;
    return false;
  };
  while (p < end_) {
    char c = *p;
    switch (kScanClasses[static_cast<unsigned char>(c)]) {
      case kPlain:
        ++p;
        continue;
      case kQuote: {
        const char* after = SkipQuoted(p);
        if (!after) return fail("unterminated string");
        p = after;
        continue;
      }
      case kSlash:
        if (p + 1 < end_ && p[1] == '*') {
          const char* q = p + 2;
          while (q < end_ && !(*q == '*' && q + 1 < end_ && q[1] == '/')) {
            if (*q == '\n') NewLine(q + 1);
            ++q;
          }
          if (q >= end_) return fail("unterminated comment");
          p = q + 2;
        } else {
          ++p;
        }
        continue;
      case kOpen:
        if (depth >= max_depth) return fail("nesting too deep");
        stack[depth++] = c == '(' ? ')' : c == '[' ? ']' : '}';
        ++p;
        continue;
      case kClose:
        if (depth == 0) break;
        if (stack[depth - 1] != c) return fail("mismatched bracket");
        --depth;
        ++p;
        continue;
      case kNewline:
        if (depth == 0) break;
        NewLine(p + 1);
        ++p;
        continue;
      case kStop:
        if (depth == 0) break;
        ++p;
        continue;
    }
    break;  // a stop character at depth 0
  }
  if (depth != 0) return fail("unbalanced brackets");
  *out = std::string_view(start, p - start);
  cur_ = p;
  Lex();
  return true;
}

std::string_view Lexer::LineAt(const char* p) const {
  if (p < begin_) p = begin_;
  if (p > end_) p = end_;
  const char* b = p;
  while (b > begin_ && b[-1] != '\n') --b;
  const char* e = static_cast<const char*>(std::memchr(p, '\n', end_ - p));
  if (!e) e = end_;
  if (e > b && e[-1] == '\r') --e;
  return std::string_view(b, e - b);
}

}  // namespace kiln::hlo
