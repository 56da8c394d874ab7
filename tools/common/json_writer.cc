// JSON emission and string escaping (see json_writer.h).
#include "tools/common/json_writer.h"

#include <cmath>
#include <cstdio>
#include <filesystem>
#include <fstream>

namespace kiln::tools {
namespace {

// Length of the valid UTF-8 sequence starting at s[i], or 0 if invalid
// (overlong forms, surrogates and code points above U+10FFFF included).
size_t Utf8SequenceLength(std::string_view s, size_t i) {
  const auto b = [&](size_t k) { return static_cast<unsigned char>(s[k]); };
  const unsigned char c = b(i);
  size_t len;
  uint32_t cp;
  if (c < 0x80) return 1;
  if ((c & 0xe0) == 0xc0) { len = 2; cp = c & 0x1f; }
  else if ((c & 0xf0) == 0xe0) { len = 3; cp = c & 0x0f; }
  else if ((c & 0xf8) == 0xf0) { len = 4; cp = c & 0x07; }
  else return 0;
  if (i + len > s.size()) return 0;
  for (size_t k = 1; k < len; ++k) {
    if ((b(i + k) & 0xc0) != 0x80) return 0;
    cp = (cp << 6) | (b(i + k) & 0x3f);
  }
  static constexpr uint32_t kMin[] = {0, 0, 0x80, 0x800, 0x10000};
  if (cp < kMin[len] || cp > 0x10ffff || (cp >= 0xd800 && cp <= 0xdfff)) return 0;
  return len;
}

}  // namespace

std::string JsonWriter::Escape(std::string_view s) {
  std::string out = "\"";
  for (size_t i = 0; i < s.size();) {
    const unsigned char c = static_cast<unsigned char>(s[i]);
    switch (c) {
      case '"': out += "\\\""; ++i; continue;
      case '\\': out += "\\\\"; ++i; continue;
      case '\n': out += "\\n"; ++i; continue;
      case '\r': out += "\\r"; ++i; continue;
      case '\t': out += "\\t"; ++i; continue;
      case '\b': out += "\\b"; ++i; continue;
      case '\f': out += "\\f"; ++i; continue;
      default: break;
    }
    if (c < 0x20 || c == 0x7f) {
      char buf[8];
      std::snprintf(buf, sizeof buf, "\\u%04x", c);
      out += buf;
      ++i;
      continue;
    }
    const size_t len = Utf8SequenceLength(s, i);
    if (len == 0) {
      out += "\\ufffd";
      ++i;
    } else {
      out.append(s.data() + i, len);
      i += len;
    }
  }
  return out + "\"";
}

void JsonWriter::Newline() {
  out_ += '\n';
  out_.append(levels_.size() * 2, ' ');
}

void JsonWriter::BeforeValue() {
  if (after_key_) {
    after_key_ = false;
    return;
  }
  if (levels_.empty()) return;
  if (!levels_.back().first) out_ += ',';
  levels_.back().first = false;
  Newline();
}

void JsonWriter::Key(std::string_view key) {
  BeforeValue();
  out_ += Escape(key);
  out_ += ": ";
  after_key_ = true;
}

void JsonWriter::Open(char c) {
  BeforeValue();
  out_ += c;
  levels_.push_back({});
}

void JsonWriter::Close(char c) {
  const bool empty = levels_.back().first;
  levels_.pop_back();
  if (!empty) Newline();
  out_ += c;
}

void JsonWriter::String(std::string_view s) {
  BeforeValue();
  out_ += Escape(s);
}

void JsonWriter::Int(int64_t v) {
  BeforeValue();
  out_ += std::to_string(v);
}

void JsonWriter::Double(double v) {
  BeforeValue();
  if (!std::isfinite(v)) {
    out_ += "null";
    return;
  }
  char buf[32];
  std::snprintf(buf, sizeof buf, "%.17g", v);
  out_ += buf;
}

void JsonWriter::Fixed(double v, int decimals) {
  BeforeValue();
  if (!std::isfinite(v)) {
    out_ += "null";
    return;
  }
  char buf[64];
  std::snprintf(buf, sizeof buf, "%.*f", decimals, v);
  out_ += buf;
}

void JsonWriter::Bool(bool v) {
  BeforeValue();
  out_ += v ? "true" : "false";
}

void JsonWriter::Null() {
  BeforeValue();
  out_ += "null";
}

void JsonWriter::IntArray(const std::vector<int64_t>& values) {
  BeforeValue();
  out_ += '[';
  for (size_t i = 0; i < values.size(); ++i) {
    if (i) out_ += ", ";
    out_ += std::to_string(values[i]);
  }
  out_ += ']';
}

Status WriteTextFile(const std::string& path, std::string_view text) {
  std::ofstream file(path, std::ios::binary | std::ios::trunc);
  if (!file) return Error("cannot open '" + path + "' for writing");
  file.write(text.data(), static_cast<std::streamsize>(text.size()));
  file.close();
  if (!file) return Error("cannot write '" + path + "'");
  return Status::Ok();
}

Status CheckWritable(const std::string& path) {
  std::error_code ec;
  bool existed = std::filesystem::exists(path, ec);
  {
    std::ofstream file(path, std::ios::binary | std::ios::app);
    if (!file) return Error("cannot open '" + path + "' for writing");
  }
  if (!existed) std::filesystem::remove(path, ec);
  return Status::Ok();
}

}  // namespace kiln::tools
