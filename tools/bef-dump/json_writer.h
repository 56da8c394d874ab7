// JsonWriter: a small streaming JSON emitter for bef-dump --json.
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

}  // namespace kiln::tools
