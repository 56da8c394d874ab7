// ParseContext helpers and number/string conversions; see parse_context.h.
#include "compiler/hlo/parse_context.h"

#include <cctype>
#include <charconv>
#include <cmath>
#include <cstdlib>
#include <cstring>
#include <limits>

namespace kiln::hlo::internal {
namespace {

// A short, printable rendering of the current token for messages.
std::string DescribeToken(const Token& tok) {
  switch (tok.kind) {
    case TokKind::kEof:
      return "end of input";
    case TokKind::kError:
      return tok.error ? std::string(tok.error) : "invalid token";
    case TokKind::kString:
      return "string";
    default:
      break;
  }
  std::string_view text = tok.text;
  if (text.size() > 40) text = text.substr(0, 40);
  std::string s = "'";
  for (char c : text) s += (static_cast<unsigned char>(c) < 0x20 || c == 0x7f) ? '?' : c;
  return s + "'";
}

}  // namespace

Status ParseContext::ErrorAt(const SourcePos& pos, std::string_view message) const {
  std::string s;
  s.reserve(file_name_.size() + message.size() + 128);
  s.append(file_name_);
  s += ':';
  s += std::to_string(pos.line > 0 ? pos.line : 1);
  s += ':';
  s += std::to_string(pos.col > 0 ? pos.col : 1);
  s += ": error: ";
  s.append(message);
  // The offending line, truncated so that huge single-line inputs give a
  // bounded message, and a caret under the column.
  std::string_view line = lexer_.LineAt(pos.ptr ? pos.ptr : lexer_.source().data());
  constexpr size_t kMaxLine = 240;
  size_t col = pos.col > 0 ? static_cast<size_t>(pos.col - 1) : 0;
  size_t from = 0;
  if (col > kMaxLine / 2 && line.size() > kMaxLine) from = col - kMaxLine / 2;
  if (from > line.size()) from = line.size();
  std::string_view shown = line.substr(from, kMaxLine);
  s += '\n';
  for (char c : shown) s += (c == '\t' || static_cast<unsigned char>(c) >= 0x20) ? c : '?';
  s += '\n';
  for (size_t i = from; i < col && i - from < kMaxLine; ++i) s += (line[i] == '\t') ? '\t' : ' ';
  s += '^';
  return Error(std::move(s));
}

Status ParseContext::TokenError(std::string_view message) const {
  std::string m(message);
  m += ", got ";
  m += DescribeToken(lexer_.tok());
  return ErrorAt(lexer_.pos(), m);
}

Status ParseContext::Expect(TokKind kind, std::string_view what) {
  if (lexer_.kind() != kind) return TokenError("expected " + std::string(what));
  lexer_.Lex();
  return Status::Ok();
}

StatusOr<std::string_view> ParseContext::ParseName(std::string_view what) {
  if (lexer_.kind() != TokKind::kIdent || lexer_.tok().text.empty() ||
      lexer_.tok().text[0] == '-')
    return TokenError("expected " + std::string(what));
  std::string_view name = lexer_.tok().text;
  lexer_.Lex();
  return name;
}

StatusOr<int64_t> ParseContext::ParseInt64() {
  if (lexer_.kind() != TokKind::kInt) return TokenError("expected an integer");
  int64_t v;
  if (!ParseInt64Text(lexer_.tok().text, &v))
    return ErrorAt(lexer_.pos(), "integer " + std::string(lexer_.tok().text.substr(0, 40)) +
                                     " is out of range for a 64-bit integer");
  lexer_.Lex();
  return v;
}

StatusOr<double> ParseContext::ParseDouble() {
  if (lexer_.kind() != TokKind::kInt && lexer_.kind() != TokKind::kDecimal)
    return TokenError("expected a number");
  double v;
  if (!ParseDoubleText(lexer_.tok().text, &v)) return TokenError("malformed number");
  lexer_.Lex();
  return v;
}

Status ParseContext::ParseIntList(TokKind open, TokKind close, TokKind delim,
                                  std::vector<int64_t>* out) {
  KILN_RETURN_IF_ERROR(Expect(open, TokKindName(open)));
  if (EatIf(close)) return Status::Ok();
  out->reserve(out->size() + 4);  // one allocation for typical lists
  while (true) {
    KILN_ASSIGN_OR_RETURN(int64_t v, ParseInt64());
    out->push_back(v);
    if (!EatIf(delim)) break;
  }
  return Expect(close, TokKindName(close));
}

StatusOr<bool> ParseContext::ParseBool() {
  if (AtWord("true")) {
    lexer_.Lex();
    return true;
  }
  if (AtWord("false")) {
    lexer_.Lex();
    return false;
  }
  return TokenError("expected true or false");
}

bool ParseIntegerMagnitude(std::string_view text, bool* negative, uint64_t* magnitude) {
  size_t i = 0;
  *negative = false;
  if (i < text.size() && text[i] == '-') {
    *negative = true;
    ++i;
  }
  if (i == text.size()) return false;
  uint64_t v = 0;
  for (; i < text.size(); ++i) {
    char c = text[i];
    if (c < '0' || c > '9') return false;
    uint64_t d = static_cast<uint64_t>(c - '0');
    if (v > (std::numeric_limits<uint64_t>::max() - d) / 10) return false;
    v = v * 10 + d;
  }
  *magnitude = v;
  return true;
}

bool ParseInt64Text(std::string_view text, int64_t* out) {
  bool negative;
  uint64_t magnitude;
  if (!ParseIntegerMagnitude(text, &negative, &magnitude)) return false;
  constexpr uint64_t kMaxPos = static_cast<uint64_t>(std::numeric_limits<int64_t>::max());
  if (negative) {
    if (magnitude > kMaxPos + 1) return false;
    *out = magnitude == kMaxPos + 1 ? std::numeric_limits<int64_t>::min()
                                    : -static_cast<int64_t>(magnitude);
  } else {
    if (magnitude > kMaxPos) return false;
    *out = static_cast<int64_t>(magnitude);
  }
  return true;
}

bool ParseDoubleText(std::string_view text, double* out) {
  if (text.empty()) return false;
  const char* b = text.data();
  const char* e = b + text.size();
  double v = 0;
  auto [ptr, ec] = std::from_chars(b, e, v);
  if (ec == std::errc() && ptr == e) {
    *out = v;
    return true;
  }
  if (ec != std::errc::result_out_of_range || ptr != e) return false;
  // Out of range: decide between overflow (+-inf) and underflow (+-0) from
  // the decimal exponent, as strtod would.
  bool negative = text[0] == '-';
  int64_t exponent = 0;  // position of the leading nonzero digit, base 10
  bool seen_nonzero = false, after_point = false;
  int64_t int_digits = 0, leading_zero_fraction = 0;
  size_t i = negative ? 1 : 0;
  for (; i < text.size() && text[i] != 'e' && text[i] != 'E'; ++i) {
    char c = text[i];
    if (c == '.') {
      after_point = true;
      continue;
    }
    if (!seen_nonzero && c == '0') {
      if (after_point) ++leading_zero_fraction;
      continue;
    }
    seen_nonzero = true;
    if (!after_point) ++int_digits;
  }
  if (i < text.size()) {
    std::string_view es = text.substr(i + 1);
    bool eneg = false;
    if (!es.empty() && (es[0] == '+' || es[0] == '-')) {
      eneg = es[0] == '-';
      es.remove_prefix(1);
    }
    bool unused;
    uint64_t mag = 0;
    constexpr uint64_t kHuge = uint64_t{1} << 40;
    if (!ParseIntegerMagnitude(es, &unused, &mag) || mag > kHuge) mag = kHuge;
    exponent = eneg ? -static_cast<int64_t>(mag) : static_cast<int64_t>(mag);
  }
  exponent += int_digits > 0 ? int_digits : -leading_zero_fraction;
  double result = exponent > 0 ? std::numeric_limits<double>::infinity() : 0.0;
  *out = negative ? -result : result;
  return true;
}

std::string Unescape(std::string_view text) {
  std::string out;
  out.reserve(text.size());
  for (size_t i = 0; i < text.size(); ++i) {
    char c = text[i];
    if (c != '\\' || i + 1 == text.size()) {
      out += c;
      continue;
    }
    char n = text[++i];
    switch (n) {
      case 'n': out += '\n'; break;
      case 't': out += '\t'; break;
      case 'r': out += '\r'; break;
      case '0': case '1': case '2': case '3': case '4': case '5': case '6': case '7': {
        int v = 0, k = 0;
        while (k < 3 && i < text.size() && text[i] >= '0' && text[i] <= '7') {
          v = v * 8 + (text[i] - '0');
          ++i;
          ++k;
        }
        --i;
        out += static_cast<char>(v & 0xff);
        break;
      }
      case 'x': {
        int v = 0, k = 0;
        while (k < 2 && i + 1 < text.size() && std::isxdigit(static_cast<unsigned char>(text[i + 1]))) {
          char h = text[++i];
          v = v * 16 + (h <= '9' ? h - '0' : (h | 0x20) - 'a' + 10);
          ++k;
        }
        out += static_cast<char>(v);
        break;
      }
      default: out += n; break;  // \\ \" \' and unknown escapes
    }
  }
  return out;
}

}  // namespace kiln::hlo::internal
