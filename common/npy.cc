#include "common/npy.h"

#include <algorithm>
#include <array>
#include <cstring>
#include <filesystem>
#include <fstream>
#include <iterator>
#include <sstream>

namespace kiln {
namespace {

constexpr char kMagic[] = "\x93NUMPY";
constexpr size_t kMagicLen = 6;
// NumPy refuses headers above 10000 bytes unless told otherwise; a bound this
// large still stops a corrupt length field from driving a huge read.
constexpr size_t kMaxHeaderLen = size_t{1} << 20;
constexpr int kMaxRank = 64;

// ---------------------------------------------------------------------------
// Descriptors.

struct DescrType {
  std::string_view code;  // kind + item size, without byte order
  ElementType type;
};

constexpr std::array kNumpyCodes = {
    DescrType{"b1", ElementType::kPred},  DescrType{"i1", ElementType::kS8},
    DescrType{"i2", ElementType::kS16},   DescrType{"i4", ElementType::kS32},
    DescrType{"i8", ElementType::kS64},   DescrType{"u1", ElementType::kU8},
    DescrType{"u2", ElementType::kU16},   DescrType{"u4", ElementType::kU32},
    DescrType{"u8", ElementType::kU64},   DescrType{"f2", ElementType::kF16},
    DescrType{"f4", ElementType::kF32},   DescrType{"f8", ElementType::kF64},
    DescrType{"c8", ElementType::kC64},   DescrType{"c16", ElementType::kC128},
};

// ml_dtypes' names (str(dtype)), as hand-written headers spell them.
constexpr std::array kMlDtypesNames = {
    DescrType{"bfloat16", ElementType::kBF16},
    DescrType{"float8_e5m2", ElementType::kF8E5M2},
    DescrType{"float8_e4m3", ElementType::kF8E4M3},
    DescrType{"float8_e4m3fn", ElementType::kF8E4M3FN},
    DescrType{"float8_e4m3b11fnuz", ElementType::kF8E4M3B11FNUZ},
    DescrType{"float8_e5m2fnuz", ElementType::kF8E5M2FNUZ},
    DescrType{"float8_e4m3fnuz", ElementType::kF8E4M3FNUZ},
    DescrType{"float8_e3m4", ElementType::kF8E3M4},
    DescrType{"float8_e8m0fnu", ElementType::kF8E8M0FNU},
    DescrType{"float4_e2m1fn", ElementType::kF4E2M1FN},
    DescrType{"int2", ElementType::kS2},
    DescrType{"int4", ElementType::kS4},
    DescrType{"uint2", ElementType::kU2},
    DescrType{"uint4", ElementType::kU4},
};

struct ResolvedDescr {
  ElementType type = ElementType::kInvalid;
  bool big_endian = false;
};

// Maps a descriptor string to an element type; void descriptors take the
// expected type when its storage size matches.
StatusOr<ResolvedDescr> ResolveDescr(std::string_view descr, std::optional<ElementType> expected) {
  ResolvedDescr result;
  for (const DescrType& d : kMlDtypesNames)
    if (d.code == descr) {
      result.type = d.type;
      return result;
    }
  std::string_view code = descr;
  if (!code.empty() && (code[0] == '<' || code[0] == '>' || code[0] == '|' || code[0] == '=')) {
    result.big_endian = code[0] == '>';
    code.remove_prefix(1);
  }
  for (const DescrType& d : kNumpyCodes)
    if (d.code == code) {
      result.type = d.type;
      return result;
    }
  // Void types, and the '<f1' that ml_dtypes used to write for float8_e5m2.
  int void_bytes = code == "V1" || code == "f1" ? 1 : code == "V2" ? 2 : 0;
  if (void_bytes == 0)
    return Error("unsupported .npy element descriptor '" + std::string(descr) + "'");
  if (expected && IsArrayType(*expected) && StorageBytes(*expected) == void_bytes &&
      !IsComplex(*expected)) {
    result.type = *expected;
    return result;
  }
  if (code == "f1" && !expected) {
    result.type = ElementType::kF8E5M2;
    return result;
  }
  if (expected)
    return Error("descriptor '" + std::string(descr) + "' (" + std::to_string(void_bytes) +
                 "-byte elements) cannot hold the expected type " +
                 std::string(ElementTypeName(*expected)));
  return Error("descriptor '" + std::string(descr) +
               "' does not say its element type (ml_dtypes saves bf16, f8 and int4 this way); "
               "give the type, e.g. 4xbf16=@file.npy");
}

// ---------------------------------------------------------------------------
// The header: a Python dict literal with string, bool and int-tuple values.

struct NpyHeader {
  std::string descr;
  bool fortran_order = false;
  std::vector<int64_t> shape;
};

class HeaderParser {
 public:
  explicit HeaderParser(std::string_view text) : text_(text) {}

  StatusOr<NpyHeader> Parse() {
    NpyHeader header;
    bool have_descr = false, have_order = false, have_shape = false;
    KILN_RETURN_IF_ERROR(Expect('{'));
    while (true) {
      SkipSpace();
      if (Consume('}')) break;
      KILN_ASSIGN_OR_RETURN(std::string key, ParseString());
      KILN_RETURN_IF_ERROR(Expect(':'));
      if (key == "descr") {
        SkipSpace();
        if (Peek() == '[') return Error(".npy structured (record) arrays are not supported");
        KILN_ASSIGN_OR_RETURN(header.descr, ParseString());
        have_descr = true;
      } else if (key == "fortran_order") {
        KILN_ASSIGN_OR_RETURN(header.fortran_order, ParseBool());
        have_order = true;
      } else if (key == "shape") {
        KILN_ASSIGN_OR_RETURN(header.shape, ParseTuple());
        have_shape = true;
      } else {
        return Error(".npy header has an unknown key '" + key + "'");
      }
      SkipSpace();
      if (Consume(',')) continue;
      KILN_RETURN_IF_ERROR(Expect('}'));
      break;
    }
    if (!have_descr || !have_order || !have_shape)
      return Error(".npy header lacks one of 'descr', 'fortran_order', 'shape'");
    return header;
  }

 private:
  char Peek() const { return pos_ < text_.size() ? text_[pos_] : '\0'; }
  void SkipSpace() {
    while (pos_ < text_.size() && (text_[pos_] == ' ' || text_[pos_] == '\t' ||
                                   text_[pos_] == '\n' || text_[pos_] == '\r'))
      ++pos_;
  }
  bool Consume(char c) {
    if (Peek() != c) return false;
    ++pos_;
    return true;
  }
  Status Expect(char c) {
    SkipSpace();
    if (Consume(c)) return Status::Ok();
    return Error(std::string("malformed .npy header: expected '") + c + "' at offset " +
                 std::to_string(pos_));
  }
  StatusOr<std::string> ParseString() {
    SkipSpace();
    char quote = Peek();
    if (quote != '\'' && quote != '"')
      return Error("malformed .npy header: expected a string at offset " + std::to_string(pos_));
    size_t end = text_.find(quote, pos_ + 1);
    if (end == std::string_view::npos) return Error("malformed .npy header: unterminated string");
    std::string s(text_.substr(pos_ + 1, end - pos_ - 1));
    pos_ = end + 1;
    return s;
  }
  StatusOr<bool> ParseBool() {
    SkipSpace();
    for (auto [word, value] : {std::pair{std::string_view("True"), true}, {"False", false}}) {
      if (text_.substr(pos_, word.size()) == word) {
        pos_ += word.size();
        return value;
      }
    }
    return Error("malformed .npy header: fortran_order is not True or False");
  }
  StatusOr<std::vector<int64_t>> ParseTuple() {
    KILN_RETURN_IF_ERROR(Expect('('));
    std::vector<int64_t> dims;
    while (true) {
      SkipSpace();
      if (Consume(')')) break;
      if (Peek() < '0' || Peek() > '9')
        return Error("malformed .npy header: bad dimension at offset " + std::to_string(pos_));
      int64_t value = 0;
      while (Peek() >= '0' && Peek() <= '9') {
        if (value > (INT64_MAX - 9) / 10) return Error(".npy dimension is too large");
        value = value * 10 + (text_[pos_++] - '0');
      }
      Consume('L');  // Python 2 longs
      dims.push_back(value);
      if (dims.size() > kMaxRank) return Error(".npy array has too many dimensions");
      SkipSpace();
      if (Consume(',')) continue;
      KILN_RETURN_IF_ERROR(Expect(')'));
      break;
    }
    return dims;
  }

  std::string_view text_;
  size_t pos_ = 0;
};

uint32_t LoadLE(const char* p, int bytes) {
  uint32_t v = 0;
  for (int i = bytes - 1; i >= 0; --i) v = (v << 8) | static_cast<uint8_t>(p[i]);
  return v;
}

// Reverses the byte order of each `component`-byte word of `data`.
void SwapBytes(uint8_t* data, size_t size, int component) {
  for (size_t i = 0; i + component <= size; i += component) std::reverse(data + i, data + i + component);
}

// Re-orders column-major (Fortran) element data into row-major order.
void FortranToRowMajor(const std::vector<int64_t>& dims, int item, const uint8_t* src,
                       uint8_t* dst) {
  int64_t count = 1;
  for (int64_t d : dims) count *= d;
  if (count == 0) return;
  std::vector<int64_t> col_strides(dims.size());
  int64_t stride = 1;
  for (size_t k = 0; k < dims.size(); ++k) {
    col_strides[k] = stride;
    stride *= dims[k];
  }
  std::vector<int64_t> index(dims.size(), 0);
  int64_t out = 0;
  do {
    int64_t in = 0;
    for (size_t k = 0; k < dims.size(); ++k) in += index[k] * col_strides[k];
    std::memcpy(dst + out * item, src + in * item, item);
    ++out;
  } while (NextIndex(dims, index));
}

// Puts pred, sub-byte and 4-bit-float storage in kiln's canonical form
// (pred 0/1, sub-byte values sign- or zero-extended) whatever the writer left
// in the unused bits.
void CanonicalizeStorage(Literal& lit) {
  ElementType t = lit.element_type();
  if (BitWidth(t) >= 8 && !IsPred(t)) return;
  for (int64_t i = 0; i < lit.element_count(); ++i) {
    uint8_t byte = lit.raw()[i];
    if (IsPred(t)) lit.raw()[i] = byte != 0;
    else if (IsSignedInteger(t)) lit.SetS64(i, static_cast<int8_t>(byte));
    else if (IsUnsignedInteger(t)) lit.SetU64(i, byte);
    else lit.raw()[i] = byte & ((1u << BitWidth(t)) - 1);
  }
}

StatusOr<std::string> ReadFile(const std::string& path) {
  std::error_code ec;
  if (!std::filesystem::is_regular_file(path, ec)) return Error("cannot open '" + path + "': not a file");
  std::ifstream in(path, std::ios::binary);
  if (!in) return Error("cannot open '" + path + "'");
  std::string bytes((std::istreambuf_iterator<char>(in)), std::istreambuf_iterator<char>());
  if (in.bad()) return Error("cannot read '" + path + "'");
  return bytes;
}

std::string ShapeRepr(const std::vector<int64_t>& dims) {
  std::string s = "(";
  for (size_t i = 0; i < dims.size(); ++i) {
    if (i) s += ", ";
    s += std::to_string(dims[i]);
  }
  if (dims.size() == 1) s += ",";
  return s + ")";
}

}  // namespace

std::string NpyDescr(ElementType type) {
  for (const DescrType& d : kNumpyCodes)
    if (d.type == type) return std::string(StorageBytes(type) == 1 ? "|" : "<") + std::string(d.code);
  if (!IsArrayType(type)) return "";
  return "<V" + std::to_string(StorageBytes(type));
}

StatusOr<Literal> ParseNpy(std::string_view bytes, std::optional<ElementType> expected_type,
                           size_t* consumed) {
  if (bytes.size() < kMagicLen + 2 || bytes.substr(0, kMagicLen) != std::string_view(kMagic, kMagicLen))
    return Error("not a .npy file (bad magic)");
  int major = static_cast<uint8_t>(bytes[kMagicLen]);
  if (major < 1 || major > 3)
    return Error("unsupported .npy format version " + std::to_string(major) + "." +
                 std::to_string(static_cast<uint8_t>(bytes[kMagicLen + 1])));
  size_t len_bytes = major == 1 ? 2 : 4;
  size_t prefix = kMagicLen + 2 + len_bytes;
  if (bytes.size() < prefix) return Error("truncated .npy file (no header length)");
  size_t header_len = LoadLE(bytes.data() + kMagicLen + 2, static_cast<int>(len_bytes));
  if (header_len > kMaxHeaderLen || header_len > bytes.size() - prefix)
    return Error("truncated .npy file (header of " + std::to_string(header_len) +
                 " bytes, file has " + std::to_string(bytes.size() - prefix) + " after the prefix)");
  KILN_ASSIGN_OR_RETURN(NpyHeader header, HeaderParser(bytes.substr(prefix, header_len)).Parse());
  KILN_ASSIGN_OR_RETURN(ResolvedDescr descr, ResolveDescr(header.descr, expected_type));

  int item = StorageBytes(descr.type);
  uint64_t count = 1;
  for (int64_t d : header.shape)
    if (__builtin_mul_overflow(count, static_cast<uint64_t>(d), &count))
      return Error(".npy shape " + ShapeRepr(header.shape) + " is too large");
  uint64_t data_size;
  if (__builtin_mul_overflow(count, static_cast<uint64_t>(item), &data_size))
    return Error(".npy shape " + ShapeRepr(header.shape) + " is too large");
  size_t data_start = prefix + header_len;
  if (data_size > bytes.size() - data_start)
    return Error("truncated .npy file: shape " + ShapeRepr(header.shape) + " of '" + header.descr +
                 "' needs " + std::to_string(data_size) + " data bytes, file has " +
                 std::to_string(bytes.size() - data_start));

  Literal lit{Shape(descr.type, header.shape)};
  const uint8_t* src = reinterpret_cast<const uint8_t*>(bytes.data() + data_start);
  if (header.fortran_order && header.shape.size() > 1)
    FortranToRowMajor(header.shape, item, src, lit.raw());
  else if (data_size > 0)
    std::memcpy(lit.raw(), src, data_size);
  if (descr.big_endian && item > 1)
    SwapBytes(lit.raw(), lit.raw_size(), IsComplex(descr.type) ? item / 2 : item);
  CanonicalizeStorage(lit);
  if (consumed) *consumed = data_start + data_size;
  return lit;
}

StatusOr<Literal> ReadNpy(const std::string& path, std::optional<ElementType> expected_type) {
  KILN_ASSIGN_OR_RETURN(std::string bytes, ReadFile(path));
  StatusOr<Literal> lit = ParseNpy(bytes, expected_type);
  if (!lit.ok()) return lit.status().WithContext(path);
  return lit;
}

StatusOr<std::vector<Literal>> ReadNpyAll(const std::string& path,
                                          const std::vector<ElementType>& expected_types) {
  KILN_ASSIGN_OR_RETURN(std::string bytes, ReadFile(path));
  std::vector<Literal> arrays;
  std::string_view rest = bytes;
  while (!rest.empty()) {
    std::optional<ElementType> expected;
    if (arrays.size() < expected_types.size()) expected = expected_types[arrays.size()];
    size_t used = 0;
    StatusOr<Literal> lit = ParseNpy(rest, expected, &used);
    if (!lit.ok())
      return lit.status().WithContext(path + " (array " + std::to_string(arrays.size()) + ")");
    arrays.push_back(std::move(lit).value());
    rest.remove_prefix(used);
  }
  return arrays;
}

StatusOr<std::string> EncodeNpy(const Literal& literal) {
  const Shape& shape = literal.shape();
  if (!shape.IsArray())
    return Error("only arrays can be written to .npy, not " + shape.ToString(false));
  std::string dict = "{'descr': '" + NpyDescr(shape.element_type()) +
                     "', 'fortran_order': False, 'shape': " + ShapeRepr(shape.dims()) + ", }";
  // Pad with spaces so that prefix + header (ending in '\n') is a multiple
  // of 64 bytes, as NumPy does, keeping the data aligned.
  size_t len_bytes = 2;
  size_t total = kMagicLen + 2 + len_bytes + dict.size() + 1;
  if ((total + 63) / 64 * 64 - kMagicLen - 2 - len_bytes > 0xFFFF) len_bytes = 4;
  total = kMagicLen + 2 + len_bytes + dict.size() + 1;
  size_t padded = (total + 63) / 64 * 64;
  size_t header_len = padded - kMagicLen - 2 - len_bytes;

  std::string out(kMagic, kMagicLen);
  out += static_cast<char>(len_bytes == 2 ? 1 : 2);
  out += '\0';
  for (size_t i = 0; i < len_bytes; ++i) out += static_cast<char>((header_len >> (8 * i)) & 0xFF);
  out += dict;
  out.append(padded - total, ' ');
  out += '\n';
  out.append(reinterpret_cast<const char*>(literal.raw()), literal.raw_size());
  return out;
}

Status WriteNpy(const Literal& literal, const std::string& path, bool append) {
  KILN_ASSIGN_OR_RETURN(std::string bytes, EncodeNpy(literal));
  std::ofstream out(path, std::ios::binary | (append ? std::ios::app : std::ios::trunc));
  if (!out) return Error("cannot open '" + path + "' for writing");
  out.write(bytes.data(), static_cast<std::streamsize>(bytes.size()));
  out.close();
  if (!out) return Error("cannot write '" + path + "'");
  return Status::Ok();
}

}  // namespace kiln
