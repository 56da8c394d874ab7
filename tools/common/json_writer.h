// JsonWriter: a small streaming JSON emitter for the tools' JSON outputs
// (bef-dump --json, bef-run --trace and --export_profile).
//
// Hand-written to keep the tool free of extra dependencies. Strings are
// escaped per RFC 8259; bytes that are not valid UTF-8 (names read from a
// damaged or foreign file) become U+FFFD so the output always parses.
// Non-finite doubles, which JSON cannot represent, are written as null.
// Output is indented two spaces per level.
#pragma once

#include <cstdint>
#include <string>
#include <string_view>
#include <vector>

#include "common/status.h"

namespace kiln::tools {

class JsonWriter {
 public:
  void BeginObject() { Open('{'); }
  void EndObject() { Close('}'); }
  void BeginArray() { Open('['); }
  void EndArray() { Close(']'); }
  // Inside an object: the key of the next value.
  void Key(std::string_view key);

  void String(std::string_view s);
  void Int(int64_t v);
  void Double(double v);
  // `v` with `decimals` digits after the point (µs to the nanosecond: 3).
  void Fixed(double v, int decimals);
  void Bool(bool v);
  void Null();
  // An array of integers on one line.
  void IntArray(const std::vector<int64_t>& values);

  // Key + value shorthands.
  void Field(std::string_view key, std::string_view s) { Key(key); String(s); }
  void Field(std::string_view key, const char* s) { Key(key); String(s); }
  void Field(std::string_view key, int64_t v) { Key(key); Int(v); }
  void Field(std::string_view key, int v) { Key(key); Int(v); }
  void Field(std::string_view key, bool v) { Key(key); Bool(v); }
  void FieldDouble(std::string_view key, double v) { Key(key); Double(v); }
  void FieldNull(std::string_view key) { Key(key); Null(); }

  // The document so far, with a trailing newline once complete.
  std::string str() const { return out_ + (levels_.empty() ? "\n" : ""); }

  static std::string Escape(std::string_view s);  // with the quotes

 private:
  struct Level {
    bool first = true;
  };
  void BeforeValue();
  void Open(char c);
  void Close(char c);
  void Newline();

  std::string out_;
  std::vector<Level> levels_;
  bool after_key_ = false;
};

// Writes `text` to `path` (created or truncated); one-line errors naming it.
Status WriteTextFile(const std::string& path, std::string_view text);
// Whether `path` can be opened for writing, leaving it as it was (a file
// that did not exist is removed again), so that a tool fails before a long
// run rather than after it. Same errors as WriteTextFile.
Status CheckWritable(const std::string& path);

}  // namespace kiln::tools
