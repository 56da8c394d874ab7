// Human-readable text of a ThunkProgram, printed by bef-dump and written by
// the compiler's --dump-dir. One thunk per line, nested sequences indented:
//
//   kernel fusion.3 grid=(4,1,1) block=(256,1,1) args=[a2[0:4096], a5[128:640] (written)]  ; hlo: add.1, multiply.2
//
// Slices print as a<allocation>[begin:end) in bytes. The text is for
// people; it is not parsed back.
#pragma once

#include <string>

#include "thunks/program.h"

namespace kiln::thunks {

// Each section ends with a newline; `indent` spaces precede every line.
std::string SignatureToText(const ThunkProgram& program, int indent = 2);
std::string AllocationsToText(const ThunkProgram& program, int indent = 2);
std::string ConstantsToText(const ThunkProgram& program, int indent = 2);
std::string ThunkTreeToText(const SequenceThunk& root, int indent = 2);

// One thunk's own line, without indentation, children or newline.
std::string ThunkLine(const Thunk& thunk);

// "signature:\n...allocations:\n...constants:\n...program:\n..."
std::string ProgramToText(const ThunkProgram& program);

// Escapes a string for double-quoted display ("\n", "\x01", ...).
std::string EscapeForDisplay(std::string_view s);

// 'name' for one-line error messages: escaped, and cut to max_chars with
// "..." so names read from a damaged file cannot break or flood a message.
std::string QuoteForMessage(std::string_view s, size_t max_chars = 80);

}  // namespace kiln::thunks
