// PtxLexer: PTX text to tokens, with line numbers for error messages.
//
// PTX is line-oriented assembly with C-like comments. Identifiers keep their
// sigils ('%r1', '$L__BB0_2', '.global'); '%tid.x' is one token, since
// special registers are the only names that contain dots. Numbers keep their
// spelling (0f3F800000 is an f32 bit pattern, 0d... an f64 one) and are
// interpreted by the decoder, which knows the instruction's type.
#pragma once

#include <cstdint>
#include <string>
#include <string_view>
#include <vector>

#include "common/status.h"

namespace kiln::emu::ptx {

struct Token {
  enum class Kind : uint8_t { kIdentifier, kDirective, kNumber, kString, kPunct, kEnd };
  Kind kind = Kind::kEnd;
  std::string_view text;
  uint32_t line = 0;
  bool Is(std::string_view s) const { return text == s && kind != Kind::kString; }
};

// Tokens of the whole text, ending with kEnd. Error: an unterminated
// comment or string, or a character PTX does not use.
StatusOr<std::vector<Token>> Tokenize(std::string_view text);

}  // namespace kiln::emu::ptx
