#include "common/value_syntax.h"

#include <cctype>
#include <charconv>
#include <cmath>
#include <filesystem>
#include <fstream>
#include <iterator>

#include "common/float_formats.h"
#include "common/npy.h"

namespace kiln {
namespace {

// Literals above this size are refused rather than risking an allocation
// failure on a typo such as 100000x100000xf32=0.
constexpr uint64_t kMaxValueBytes = uint64_t{1} << 34;

std::string Lower(std::string_view s) {
  std::string out(s);
  for (char& c : out) c = static_cast<char>(std::tolower(static_cast<unsigned char>(c)));
  return out;
}

std::string_view Trim(std::string_view s) {
  while (!s.empty() && std::isspace(static_cast<unsigned char>(s.front()))) s.remove_prefix(1);
  while (!s.empty() && std::isspace(static_cast<unsigned char>(s.back()))) s.remove_suffix(1);
  return s;
}

bool EndsWith(std::string_view s, std::string_view suffix) {
  return s.size() >= suffix.size() && s.substr(s.size() - suffix.size()) == suffix;
}

bool IsSeparator(char c) {
  return std::isspace(static_cast<unsigned char>(c)) || c == ',' || c == '[' || c == ']' ||
         c == '{' || c == '}' || c == '(' || c == ')';
}

std::vector<std::string_view> SplitElements(std::string_view text) {
  std::vector<std::string_view> tokens;
  size_t i = 0;
  while (i < text.size()) {
    while (i < text.size() && IsSeparator(text[i])) ++i;
    size_t start = i;
    while (i < text.size() && !IsSeparator(text[i])) ++i;
    if (i > start) tokens.push_back(text.substr(start, i - start));
  }
  return tokens;
}

// ---------------------------------------------------------------------------
// Elements.

// Parses an optionally signed decimal or 0x-hex integer into sign and
// magnitude, so that every 64-bit value of either signedness fits.
bool ParseIntegerToken(std::string_view token, bool* negative, uint64_t* magnitude) {
  *negative = false;
  if (!token.empty() && (token[0] == '-' || token[0] == '+')) {
    *negative = token[0] == '-';
    token.remove_prefix(1);
  }
  int base = 10;
  if (token.size() > 2 && token[0] == '0' && (token[1] == 'x' || token[1] == 'X')) {
    base = 16;
    token.remove_prefix(2);
  }
  if (token.empty()) return false;
  auto [ptr, ec] = std::from_chars(token.data(), token.data() + token.size(), *magnitude, base);
  return ec == std::errc() && ptr == token.data() + token.size();
}

bool ParseRealToken(std::string_view token, double* value) {
  bool negative = false;
  if (!token.empty() && (token[0] == '-' || token[0] == '+')) {
    negative = token[0] == '-';
    token.remove_prefix(1);
  }
  std::chars_format format = std::chars_format::general;
  if (token.size() > 2 && token[0] == '0' && (token[1] == 'x' || token[1] == 'X')) {
    format = std::chars_format::hex;
    token.remove_prefix(2);
  }
  if (token.empty() || token[0] == '-' || token[0] == '+') return false;
  auto [ptr, ec] = std::from_chars(token.data(), token.data() + token.size(), *value, format);
  if (ptr != token.data() + token.size()) return false;
  // Out-of-range values overflow to inf / underflow to 0 as strtod does.
  if (ec == std::errc::result_out_of_range) {
    std::string copy = (format == std::chars_format::hex ? "0x" : "") + std::string(token);
    *value = std::strtod(copy.c_str(), nullptr);
  } else if (ec != std::errc()) {
    return false;
  }
  if (negative) *value = -*value;
  return true;
}

// "a+bi", "a-bj", "bi", "a".
bool ParseComplexToken(std::string_view token, std::complex<double>* value) {
  if (token.empty()) return false;
  char last = token.back();
  if (last != 'i' && last != 'j' && last != 'I' && last != 'J') {
    double re;
    if (!ParseRealToken(token, &re)) return false;
    *value = {re, 0.0};
    return true;
  }
  token.remove_suffix(1);
  // The imaginary part starts at the last sign that is not an exponent sign.
  bool hex = token.find_first_of("xX") != std::string_view::npos;
  std::string_view exponent_marks = hex ? "pP" : "eE";
  size_t split = std::string_view::npos;
  for (size_t i = token.size(); i-- > 1;) {
    if ((token[i] == '+' || token[i] == '-') &&
        exponent_marks.find(token[i - 1]) == std::string_view::npos) {
      split = i;
      break;
    }
  }
  double re = 0, im = 0;
  if (split == std::string_view::npos) {
    if (!ParseRealToken(token, &im)) return false;
  } else if (!ParseRealToken(token.substr(0, split), &re) ||
             !ParseRealToken(token.substr(split), &im)) {
    return false;
  }
  *value = {re, im};
  return true;
}

Status SetElement(Literal& lit, int64_t i, std::string_view token) {
  ElementType t = lit.element_type();
  auto bad = [&](std::string_view why) {
    return Error("element " + std::to_string(i) + " ('" + std::string(token) + "') " +
                 std::string(why) + " " + std::string(ElementTypeName(t)));
  };
  if (IsPred(t)) {
    std::string lower = Lower(token);
    if (lower == "1" || lower == "true") lit.SetPred(i, true);
    else if (lower == "0" || lower == "false") lit.SetPred(i, false);
    else return bad("is not a valid");
    return Status::Ok();
  }
  if (IsInteger(t)) {
    bool negative;
    uint64_t magnitude;
    if (!ParseIntegerToken(token, &negative, &magnitude)) return bad("is not a valid");
    int bits = BitWidth(t);
    if (IsUnsignedInteger(t)) {
      uint64_t max = bits >= 64 ? UINT64_MAX : (uint64_t{1} << bits) - 1;
      if ((negative && magnitude != 0) || magnitude > max) return bad("is out of range for");
      lit.SetU64(i, magnitude);
    } else {
      uint64_t limit = uint64_t{1} << (bits - 1);  // |min|; max is limit - 1
      if (negative ? magnitude > limit : magnitude >= limit) return bad("is out of range for");
      lit.SetS64(i, negative ? static_cast<int64_t>(0 - magnitude) : static_cast<int64_t>(magnitude));
    }
    return Status::Ok();
  }
  if (IsComplex(t)) {
    std::complex<double> c;
    if (!ParseComplexToken(token, &c)) return bad("is not a valid");
    lit.SetC128(i, c);
    return Status::Ok();
  }
  double v;
  if (!ParseRealToken(token, &v)) return bad("is not a valid");
  lit.SetF64(i, v);
  return Status::Ok();
}

// ---------------------------------------------------------------------------
// Shapes and files.

StatusOr<Shape> ParseShapeSpec(std::string_view text) {
  text = Trim(text);
  std::vector<int64_t> dims;
  size_t x;
  while ((x = text.find('x')) != std::string_view::npos) {
    std::string_view part = text.substr(0, x);
    int64_t d = 0;
    auto [ptr, ec] = std::from_chars(part.data(), part.data() + part.size(), d);
    if (part.empty() || ec != std::errc() || ptr != part.data() + part.size() || d < 0)
      return Error("bad dimension '" + std::string(part) + "' in value shape '" + std::string(text) + "'");
    dims.push_back(d);
    text.remove_prefix(x + 1);
  }
  std::optional<ElementType> type = ParseValueElementType(text);
  if (!type) return Error("unknown element type '" + std::string(text) + "'");
  Shape shape(*type, dims);
  uint64_t bytes = static_cast<uint64_t>(StorageBytes(*type));
  for (int64_t d : dims)
    if (__builtin_mul_overflow(bytes, static_cast<uint64_t>(d), &bytes) || bytes > kMaxValueBytes)
      return Error("value shape " + FormatValueShape(shape) + " is too large");
  return shape;
}

StatusOr<std::string> ReadBinaryFile(const std::string& path) {
  std::error_code ec;
  if (!std::filesystem::is_regular_file(path, ec)) return Error("cannot open '" + path + "': not a file");
  std::ifstream in(path, std::ios::binary);
  if (!in) return Error("cannot open '" + path + "'");
  return std::string((std::istreambuf_iterator<char>(in)), std::istreambuf_iterator<char>());
}

Status CheckMatches(const Literal& value, const Shape& expected, std::string_view origin) {
  if (FitsDeclaredShape(value.shape(), expected)) return Status::Ok();
  std::string got = value.shape().IsArray() ? FormatValueShape(value.shape()) : value.shape().ToString(false);
  return Error("value " + got + (origin.empty() ? "" : " (from " + std::string(origin) + ")") +
               " does not match the expected " + FormatValueShape(expected));
}

StatusOr<Literal> ReadRaw(const std::string& path, const Shape& shape) {
  KILN_ASSIGN_OR_RETURN(std::string bytes, ReadBinaryFile(path));
  Literal lit(shape);
  if (bytes.size() != lit.raw_size())
    return Error("'" + path + "' has " + std::to_string(bytes.size()) + " bytes, " +
                 FormatValueShape(shape) + " needs " + std::to_string(lit.raw_size()));
  ElementType t = shape.element_type();
  for (size_t i = 0; i < bytes.size(); ++i) {
    uint8_t byte = static_cast<uint8_t>(bytes[i]);
    // Canonical storage for one-byte-per-element types.
    if (IsPred(t)) byte = byte != 0;
    else if (BitWidth(t) < 8 && IsSignedInteger(t)) { lit.SetS64(i, static_cast<int8_t>(byte)); continue; }
    else if (BitWidth(t) < 8) byte &= (1u << BitWidth(t)) - 1;
    lit.raw()[i] = byte;
  }
  return lit;
}

// "@path": a .npy file or, with a known shape, raw storage.
StatusOr<Literal> ReadValueFile(std::string_view path_view, const Shape* shape) {
  std::string path(Trim(path_view));
  if (path.empty()) return Error("'@' must be followed by a file name");
  if (EndsWith(Lower(path), ".npy")) {
    std::optional<ElementType> type;
    if (shape) type = shape->element_type();
    KILN_ASSIGN_OR_RETURN(Literal lit, ReadNpy(path, type));
    if (shape) KILN_RETURN_IF_ERROR(CheckMatches(lit, *shape, path));
    return lit;
  }
  if (!shape) return Error("raw file '" + path + "' needs a shape: write e.g. 4xf32=@" + path);
  return ReadRaw(path, *shape);
}

StatusOr<Literal> ParseElements(std::string_view text, const Shape& shape) {
  text = Trim(text);
  if (!text.empty() && text[0] == '@') return ReadValueFile(text.substr(1), &shape);
  std::vector<std::string_view> tokens = SplitElements(text);
  int64_t count = shape.ElementCount();
  bool splat = tokens.size() == 1 && count != 1;
  if (!splat && static_cast<int64_t>(tokens.size()) != count)
    return Error(FormatValueShape(shape) + " needs " + std::to_string(count) + " elements, got " +
                 std::to_string(tokens.size()));
  Literal lit(shape);
  if (count == 0) return lit;
  KILN_RETURN_IF_ERROR(SetElement(lit, 0, tokens[0]));
  for (int64_t i = 1; i < count; ++i) {
    if (splat) lit.CopyElementFrom(i, lit, 0);
    else KILN_RETURN_IF_ERROR(SetElement(lit, i, tokens[i]));
  }
  return lit;
}

void AppendArray(const Literal& lit, size_t dim, int64_t* next, std::string* out) {
  const auto& dims = lit.shape().dims();
  if (dim + 1 >= dims.size()) {
    int64_t n = dims.empty() ? 1 : dims[dim];
    for (int64_t i = 0; i < n; ++i) {
      if (i) *out += ' ';
      *out += FormatValueElement(lit, (*next)++);
    }
    return;
  }
  for (int64_t i = 0; i < dims[dim]; ++i) {
    *out += '[';
    AppendArray(lit, dim + 1, next, out);
    *out += ']';
  }
}

void Flatten(Literal& literal, std::vector<Literal>* out) {
  if (literal.shape().IsTuple()) {
    for (Literal& e : literal.mutable_elements()) Flatten(e, out);
  } else if (literal.shape().IsArray()) {
    out->push_back(std::move(literal));
  }
}

}  // namespace

std::optional<ElementType> ParseValueElementType(std::string_view name) {
  std::string lower = Lower(Trim(name));
  if (lower == "i1" || lower == "bool") return ElementType::kPred;
  if (lower == "complex<f32>") return ElementType::kC64;
  if (lower == "complex<f64>") return ElementType::kC128;
  std::string_view rest = lower;
  std::string_view prefix;
  for (std::string_view p : {"ui", "si", "i"})
    if (rest.substr(0, p.size()) == p) {
      prefix = p;
      rest.remove_prefix(p.size());
      break;
    }
  if (!prefix.empty()) {
    std::string hlo = std::string(prefix == "ui" ? "u" : "s") + std::string(rest);
    std::optional<ElementType> t = ElementTypeFromName(hlo);
    if (t && IsInteger(*t)) return t;
    return std::nullopt;
  }
  std::optional<ElementType> t = ElementTypeFromName(lower);
  if (t && IsArrayType(*t)) return t;
  return std::nullopt;
}

std::string FormatValueShape(const Shape& shape) {
  std::string s;
  for (int64_t d = 0; d < shape.rank(); ++d)  // "<=N": a bounded dynamic dimension
    s += (shape.is_dynamic_dim(d) ? "<=" : "") + std::to_string(shape.dim(d)) + "x";
  return s + std::string(ElementTypeName(shape.element_type()));
}

std::string FormatValueElement(const Literal& lit, int64_t i) {
  ElementType t = lit.element_type();
  if (IsPred(t)) return lit.GetPred(i) ? "1" : "0";
  if (IsSignedInteger(t)) return std::to_string(lit.GetS64(i));
  if (IsUnsignedInteger(t)) return std::to_string(lit.GetU64(i));
  if (IsComplex(t)) {
    std::complex<double> c = lit.GetC128(i);
    bool minus = std::signbit(c.imag()) && !std::isnan(c.imag());
    return FormatFloat(t, c.real()) + (minus ? "-" : "+") + FormatFloat(t, std::fabs(c.imag())) + "i";
  }
  return FormatFloat(t, lit.GetF64(i));
}

std::string FormatValue(const Literal& literal) {
  if (literal.shape().IsTuple()) {
    std::string s;
    for (const Literal& e : literal.elements()) {
      if (!s.empty()) s += '\n';
      s += FormatValue(e);
    }
    return s;
  }
  if (!literal.shape().IsArray()) return literal.shape().ToString(false);
  std::string out = FormatValueShape(literal.shape()) + "=";
  int64_t next = 0;
  if (literal.element_count() > 0) AppendArray(literal, 0, &next, &out);
  return out;
}

StatusOr<Literal> ParseValue(std::string_view spec, const Shape* expected) {
  std::string_view text = Trim(spec);
  if (expected && !expected->IsArray())
    return Error("a value cannot be given for shape " + expected->ToString(false));
  if (!text.empty() && text[0] == '@') return ReadValueFile(text.substr(1), expected);
  size_t eq = text.find('=');
  if (eq == std::string_view::npos) {
    if (!expected)
      return Error("value '" + std::string(text) + "' has no type; write e.g. 2x3xf32=1 2 3 4 5 6");
    return ParseElements(text, *expected);
  }
  KILN_ASSIGN_OR_RETURN(Shape shape, ParseShapeSpec(text.substr(0, eq)));
  if (expected && !FitsDeclaredShape(shape, *expected))
    return Error("value " + FormatValueShape(shape) + " does not match the expected " +
                 FormatValueShape(*expected));
  return ParseElements(text.substr(eq + 1), shape);
}

Status WriteValue(const Literal& literal, std::string_view spec, std::ostream& out) {
  if (spec.empty()) return Status::Ok();
  if (spec == "-") {
    out << FormatValue(literal) << "\n";
    return Status::Ok();
  }
  if (spec[0] != '@' && spec[0] != '+')
    return Error("output '" + std::string(spec) + "' must be '-', '@file' or '+file'");
  bool append = spec[0] == '+';
  std::string path(spec.substr(1));
  if (path.empty()) return Error("output '" + std::string(spec) + "' has no file name");
  if (!literal.shape().IsArray())
    return Error("cannot write " + literal.shape().ToString(false) + " to '" + path +
                 "': only arrays can be written (tuples are flattened)");
  if (EndsWith(Lower(path), ".npy")) return WriteNpy(literal, path, append);
  std::ofstream file(path, std::ios::binary | (append ? std::ios::app : std::ios::trunc));
  if (!file) return Error("cannot open '" + path + "' for writing");
  file.write(reinterpret_cast<const char*>(literal.raw()), static_cast<std::streamsize>(literal.raw_size()));
  file.close();
  if (!file) return Error("cannot write '" + path + "'");
  return Status::Ok();
}

std::vector<Literal> FlattenTuple(Literal literal) {
  std::vector<Literal> leaves;
  Flatten(literal, &leaves);
  return leaves;
}

namespace {

Literal Unflatten(const Shape& shape, std::vector<Literal>& leaves, size_t& next) {
  if (shape.IsTuple()) {
    std::vector<Literal> elements;
    for (const Shape& s : shape.tuple_shapes()) elements.push_back(Unflatten(s, leaves, next));
    return Literal::MakeTuple(std::move(elements));
  }
  if (!shape.IsArray() || next >= leaves.size()) return Literal(shape);  // tokens
  return std::move(leaves[next++]);
}

}  // namespace

StatusOr<Literal> UnflattenTuple(const Shape& shape, std::vector<Literal> leaves) {
  if (leaves.size() != FlattenShape(shape).size())
    return Error(std::to_string(leaves.size()) + " values for " + std::to_string(FlattenShape(shape).size()) +
                 " array leaves of " + shape.ToString(false));
  size_t next = 0;
  return Unflatten(shape, leaves, next);
}

std::vector<Shape> FlattenShape(const Shape& shape) {
  std::vector<Shape> leaves;
  if (shape.IsTuple()) {
    for (const Shape& s : shape.tuple_shapes()) {
      std::vector<Shape> sub = FlattenShape(s);
      leaves.insert(leaves.end(), sub.begin(), sub.end());
    }
  } else if (shape.IsArray()) {
    leaves.push_back(shape);
  }
  return leaves;
}

}  // namespace kiln
