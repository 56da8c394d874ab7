// PtxLexer; see ptx_lexer.h.
#include "cuda_emulator/ptx/ptx_lexer.h"

#include <cctype>

namespace kiln::emu::ptx {
namespace {

bool IsIdentStart(char c) {
  return std::isalpha(static_cast<unsigned char>(c)) || c == '_' || c == '$' || c == '%';
}
bool IsIdentChar(char c) {
  return std::isalnum(static_cast<unsigned char>(c)) || c == '_' || c == '$';
}

}  // namespace

StatusOr<std::vector<Token>> Tokenize(std::string_view s) {
  std::vector<Token> out;
  uint32_t line = 1;
  size_t i = 0, n = s.size();
  auto push = [&](Token::Kind k, size_t begin, size_t end) {
    out.push_back({k, s.substr(begin, end - begin), line});
  };
  while (i < n) {
    char c = s[i];
    if (c == '\n') {
      ++line;
      ++i;
      continue;
    }
    if (std::isspace(static_cast<unsigned char>(c)) || c == '\0') {
      ++i;
      continue;
    }
    if (c == '/' && i + 1 < n && s[i + 1] == '/') {
      while (i < n && s[i] != '\n') ++i;
      continue;
    }
    if (c == '/' && i + 1 < n && s[i + 1] == '*') {
      size_t end = s.find("*/", i + 2);
      if (end == std::string_view::npos)
        return Error("PTX line " + std::to_string(line) + ": unterminated comment");
      for (size_t k = i; k < end; ++k) line += s[k] == '\n';
      i = end + 2;
      continue;
    }
    size_t begin = i;
    if (c == '"') {
      ++i;
      while (i < n && s[i] != '"' && s[i] != '\n') ++i;
      if (i >= n || s[i] != '"')
        return Error("PTX line " + std::to_string(line) + ": unterminated string");
      ++i;
      push(Token::Kind::kString, begin + 1, i - 1);
      continue;
    }
    if (c == '.' && i + 1 < n && IsIdentStart(s[i + 1])) {
      ++i;
      // Directives and modifiers; '.L2::cache_hint' and '.L1::no_allocate'
      // style qualifiers keep their '::' part.
      while (i < n && (IsIdentChar(s[i]) || (s[i] == ':' && i + 1 < n && s[i + 1] == ':'))) {
        i += s[i] == ':' ? 2 : 1;
      }
      push(Token::Kind::kDirective, begin, i);
      continue;
    }
    if (IsIdentStart(c)) {
      ++i;
      while (i < n && (IsIdentChar(s[i]) ||
                       (c == '%' && s[i] == '.' && i + 1 < n && std::isalpha(s[i + 1])))) {
        ++i;
      }
      push(Token::Kind::kIdentifier, begin, i);
      continue;
    }
    if (std::isdigit(static_cast<unsigned char>(c)) ||
        (c == '.' && i + 1 < n && std::isdigit(static_cast<unsigned char>(s[i + 1])))) {
      ++i;
      while (i < n && (std::isalnum(static_cast<unsigned char>(s[i])) || s[i] == '.' ||
                       ((s[i] == '+' || s[i] == '-') && (s[i - 1] == 'e' || s[i - 1] == 'E') &&
                        !(s[begin] == '0' && begin + 1 < n &&
                          (s[begin + 1] == 'x' || s[begin + 1] == 'X' || s[begin + 1] == 'f' ||
                           s[begin + 1] == 'F' || s[begin + 1] == 'd' || s[begin + 1] == 'D'))))) {
        ++i;
      }
      push(Token::Kind::kNumber, begin, i);
      continue;
    }
    if (std::string_view(",;:[](){}<>+-!|@=*").find(c) != std::string_view::npos) {
      ++i;
      push(Token::Kind::kPunct, begin, i);
      continue;
    }
    return Error("PTX line " + std::to_string(line) + ": unexpected character '" +
                 std::string(1, c) + "'");
  }
  out.push_back({Token::Kind::kEnd, std::string_view(), line});
  return out;
}

}  // namespace kiln::emu::ptx
