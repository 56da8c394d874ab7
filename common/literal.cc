#include "common/literal.h"

#include <charconv>
#include <cmath>
#include <cstdio>
#include <cstdlib>

#include "common/float_formats.h"

namespace kiln {
namespace {

// Sign-extends the low `bits` bits of v.
int64_t SignExtend(uint64_t v, int bits) {
  if (bits >= 64) return static_cast<int64_t>(v);
  uint64_t mask = (uint64_t{1} << bits) - 1;
  v &= mask;
  uint64_t sign = uint64_t{1} << (bits - 1);
  return static_cast<int64_t>((v ^ sign) - sign);
}

uint64_t Truncate(uint64_t v, int bits) {
  return bits >= 64 ? v : (v & ((uint64_t{1} << bits) - 1));
}

uint64_t LoadBits(const uint8_t* p, int bytes) {
  uint64_t v = 0;
  std::memcpy(&v, p, bytes);  // little-endian host
  return v;
}

void StoreBits(uint8_t* p, int bytes, uint64_t v) { std::memcpy(p, &v, bytes); }

}  // namespace

Literal::Literal(const Shape& shape) : shape_(shape) {
  if (shape.IsTuple()) {
    for (const Shape& s : shape.tuple_shapes()) elements_.emplace_back(s);
  } else if (shape.IsArray()) {
    data_.assign(static_cast<size_t>(shape.ByteSize()), 0);
  }
}

Literal Literal::Vector(ElementType type, const std::vector<double>& values) {
  Literal lit{Shape(type, {static_cast<int64_t>(values.size())})};
  for (size_t i = 0; i < values.size(); ++i) {
    if (IsPred(type)) lit.SetPred(i, values[i] != 0);
    else if (IsSignedInteger(type)) lit.SetS64(i, static_cast<int64_t>(values[i]));
    else if (IsUnsignedInteger(type)) lit.SetU64(i, static_cast<uint64_t>(values[i]));
    else if (IsComplex(type)) lit.SetC128(i, values[i]);
    else lit.SetF64(i, values[i]);
  }
  return lit;
}

Literal Literal::MakeTuple(std::vector<Literal> elements) {
  std::vector<Shape> shapes;
  for (const Literal& e : elements) shapes.push_back(e.shape());
  Literal lit;
  lit.shape_ = Shape::Tuple(std::move(shapes));
  lit.elements_ = std::move(elements);
  return lit;
}

bool Literal::GetPred(int64_t i) const {
  return LoadBits(raw() + i * StorageBytes(element_type()), StorageBytes(element_type())) != 0;
}

int64_t Literal::GetS64(int64_t i) const {
  ElementType t = element_type();
  if (IsFloat(t) || IsComplex(t)) return static_cast<int64_t>(GetF64(i));
  uint64_t bits = LoadBits(raw() + i * StorageBytes(t), StorageBytes(t));
  if (IsUnsignedInteger(t) || IsPred(t)) return static_cast<int64_t>(bits);
  return SignExtend(bits, BitWidth(t));
}

uint64_t Literal::GetU64(int64_t i) const {
  ElementType t = element_type();
  if (IsFloat(t) || IsComplex(t)) return static_cast<uint64_t>(GetF64(i));
  uint64_t bits = LoadBits(raw() + i * StorageBytes(t), StorageBytes(t));
  if (IsSignedInteger(t)) return static_cast<uint64_t>(SignExtend(bits, BitWidth(t)));
  return bits;
}

double Literal::GetF64(int64_t i) const {
  ElementType t = element_type();
  const uint8_t* p = raw() + i * StorageBytes(t);
  switch (t) {
    case ElementType::kF32: { float f; std::memcpy(&f, p, 4); return f; }
    case ElementType::kF64: { double d; std::memcpy(&d, p, 8); return d; }
    case ElementType::kC64: { float f; std::memcpy(&f, p, 4); return f; }
    case ElementType::kC128: { double d; std::memcpy(&d, p, 8); return d; }
    case ElementType::kPred: return GetPred(i) ? 1.0 : 0.0;
    default: break;
  }
  if (IsNarrowFloat(t)) return DecodeNarrowFloat(t, static_cast<uint32_t>(LoadBits(p, StorageBytes(t))));
  if (IsSignedInteger(t)) return static_cast<double>(GetS64(i));
  return static_cast<double>(GetU64(i));
}

std::complex<double> Literal::GetC128(int64_t i) const {
  ElementType t = element_type();
  const uint8_t* p = raw() + i * StorageBytes(t);
  if (t == ElementType::kC64) {
    float f[2];
    std::memcpy(f, p, 8);
    return {f[0], f[1]};
  }
  if (t == ElementType::kC128) {
    double d[2];
    std::memcpy(d, p, 16);
    return {d[0], d[1]};
  }
  return {GetF64(i), 0.0};
}

void Literal::SetPred(int64_t i, bool v) {
  if (!IsPred(element_type())) {
    SetU64(i, v ? 1 : 0);
    return;
  }
  raw()[i] = v ? 1 : 0;
}

void Literal::SetS64(int64_t i, int64_t v) { SetU64(i, static_cast<uint64_t>(v)); }

void Literal::SetU64(int64_t i, uint64_t v) {
  ElementType t = element_type();
  if (IsFloat(t) || IsComplex(t)) {
    SetF64(i, static_cast<double>(v));
    return;
  }
  if (IsPred(t)) {
    raw()[i] = v != 0;
    return;
  }
  int bytes = StorageBytes(t);
  uint64_t stored = Truncate(v, BitWidth(t));
  // Sub-byte signed types are kept sign-extended within their byte.
  if (IsSignedInteger(t) && BitWidth(t) < 8) stored = Truncate(SignExtend(stored, BitWidth(t)), 8);
  StoreBits(raw() + i * bytes, bytes, stored);
}

void Literal::SetF64(int64_t i, double v) {
  ElementType t = element_type();
  uint8_t* p = raw() + i * StorageBytes(t);
  switch (t) {
    case ElementType::kF32: { float f = static_cast<float>(v); std::memcpy(p, &f, 4); return; }
    case ElementType::kF64: std::memcpy(p, &v, 8); return;
    case ElementType::kC64:
    case ElementType::kC128: SetC128(i, {v, 0.0}); return;
    default: break;
  }
  if (IsNarrowFloat(t)) {
    StoreBits(p, StorageBytes(t), EncodeNarrowFloat(t, v));
    return;
  }
  if (IsPred(t)) { raw()[i] = v != 0; return; }
  if (IsSignedInteger(t)) SetS64(i, static_cast<int64_t>(v));
  else SetU64(i, static_cast<uint64_t>(v));
}

void Literal::SetC128(int64_t i, std::complex<double> v) {
  ElementType t = element_type();
  uint8_t* p = raw() + i * StorageBytes(t);
  if (t == ElementType::kC64) {
    float f[2] = {static_cast<float>(v.real()), static_cast<float>(v.imag())};
    std::memcpy(p, f, 8);
  } else if (t == ElementType::kC128) {
    double d[2] = {v.real(), v.imag()};
    std::memcpy(p, d, 16);
  } else {
    SetF64(i, v.real());
  }
}

void Literal::CopyElementFrom(int64_t i, const Literal& src, int64_t src_index) {
  int bytes = StorageBytes(element_type());
  std::memcpy(raw() + i * bytes, src.raw() + src_index * bytes, bytes);
}

std::string FormatFloat(ElementType type, double value) {
  if (std::isnan(value)) return "nan";
  if (std::isinf(value)) return value < 0 ? "-inf" : "inf";
  char buf[64];
  std::to_chars_result r;
  if (type == ElementType::kF64 || type == ElementType::kC128)
    r = std::to_chars(buf, buf + sizeof(buf), value);
  else
    r = std::to_chars(buf, buf + sizeof(buf), static_cast<float>(value));
  return std::string(buf, r.ptr);
}

namespace {

// HLO spelling of a NaN with raw encoding `bits` of `component_type`:
// "nan", "-nan", or "nan(0x<payload>)" when an IEEE-style NaN carries more
// than the quiet bit, as XLA writes them. Formats with a single NaN per sign
// ("fn", fnuz, e8m0fnu) never carry a payload.
std::string FormatNan(ElementType component_type, uint64_t bits) {
  const FloatFormat* fmt = FindFloatFormat(component_type);
  if (fmt == nullptr) return "nan";
  bool negative = fmt->is_signed && fmt->specials != FloatSpecials::kNegZeroNan &&
                  ((bits >> (fmt->bits - 1)) & 1) != 0;
  std::string s = negative ? "-nan" : "nan";
  if (fmt->specials == FloatSpecials::kIeee && fmt->mantissa_bits > 0) {
    uint64_t payload = bits & ((uint64_t{1} << fmt->mantissa_bits) - 1);
    uint64_t quiet = uint64_t{1} << (fmt->mantissa_bits - 1);
    if (payload != quiet) {
      char buf[32];
      std::snprintf(buf, sizeof(buf), "(0x%llx)", static_cast<unsigned long long>(payload));
      s += buf;
    }
  }
  return s;
}

// One real component stored at `p` with the encoding of `component_type`,
// written so that it parses back to the same bits.
std::string FormatRealComponent(ElementType component_type, const uint8_t* p) {
  uint64_t bits = LoadBits(p, StorageBytes(component_type));
  double value;
  if (component_type == ElementType::kF64) {
    std::memcpy(&value, p, 8);
  } else if (component_type == ElementType::kF32) {
    float f;
    std::memcpy(&f, p, 4);
    value = f;
  } else {
    value = DecodeNarrowFloat(component_type, static_cast<uint32_t>(bits));
  }
  if (std::isnan(value)) return FormatNan(component_type, bits);
  std::string text = FormatFloat(component_type, value);
  if (component_type == ElementType::kF64 || component_type == ElementType::kF32) return text;
  // The shortest f32 decimal may not encode back to a narrow type's bits
  // (f8e8m0fnu maps values just above 2^-127 to 2^-126): then write the
  // value's shortest f64 decimal, which reads back exactly.
  double reread = std::strtod(text.c_str(), nullptr);
  if (EncodeNarrowFloat(component_type, reread) != bits) text = FormatFloat(ElementType::kF64, value);
  return text;
}

std::string FormatElement(const Literal& lit, int64_t i) {
  ElementType t = lit.element_type();
  if (IsPred(t)) return lit.GetPred(i) ? "true" : "false";
  if (IsSignedInteger(t)) return std::to_string(lit.GetS64(i));
  if (IsUnsignedInteger(t)) return std::to_string(lit.GetU64(i));
  const uint8_t* p = lit.raw() + i * StorageBytes(t);
  if (IsComplex(t)) {
    ElementType c = ComplexComponentType(t);
    return "(" + FormatRealComponent(c, p) + ", " + FormatRealComponent(c, p + StorageBytes(c)) + ")";
  }
  return FormatRealComponent(t, p);
}

// Appends the nested-brace form of dimensions [dim, rank) starting at
// element `*next`; stops emitting elements after `budget` runs out.
void FormatArray(const Literal& lit, size_t dim, int64_t* next, int64_t* budget, std::string* out) {
  const auto& dims = lit.shape().dims();
  if (dim == dims.size()) {
    if (*budget <= 0) return;
    *out += FormatElement(lit, (*next)++);
    --*budget;
    return;
  }
  *out += "{";
  for (int64_t i = 0; i < dims[dim]; ++i) {
    if (i) *out += ", ";
    if (*budget <= 0) {
      *out += "...";
      break;
    }
    FormatArray(lit, dim + 1, next, budget, out);
  }
  *out += "}";
}

}  // namespace

std::string Literal::ToStringTruncated(int64_t max_elements) const {
  if (shape_.IsTuple()) {
    std::string s = "(";
    for (size_t i = 0; i < elements_.size(); ++i) {
      if (i) s += ", ";
      s += elements_[i].ToStringTruncated(max_elements);
    }
    return s + ")";
  }
  if (shape_.IsToken()) return "token";
  if (!shape_.IsArray()) return "";
  // Storage that does not match the shape (malformed IR) is never read.
  if (static_cast<int64_t>(raw_size()) < shape_.ByteSize()) return "{...}";
  std::string out;
  int64_t next = 0, budget = max_elements;
  FormatArray(*this, 0, &next, &budget, &out);
  return out;
}

std::string Literal::ToString() const { return ToStringTruncated(INT64_MAX); }

bool Literal::operator==(const Literal& other) const {
  return shape_.Compatible(other.shape_) && data_ == other.data_ && elements_ == other.elements_;
}

StatusOr<Literal> Literal::Reshape(const std::vector<int64_t>& dims) const {
  Shape target(element_type(), dims);
  if (!shape_.IsArray() || target.ElementCount() != element_count())
    return Error("cannot reshape " + shape_.ToString() + " to " + target.ToString(false));
  Literal result(target);
  result.data_ = data_;
  return result;
}

}  // namespace kiln
