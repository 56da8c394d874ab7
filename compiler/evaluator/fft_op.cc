// FFT for the reference evaluator (operation_semantics "Fft").
//
// fft_type and fft_length={n_1..n_L} act on the last L dimensions:
//   FFT   complex -> complex, forward DFT X[k] = sum_j x[j] e^{-2 pi i jk/n}
//   IFFT  complex -> complex, inverse DFT with 1/n per dimension
//   RFFT  real -> complex, last dimension keeps n_L/2 + 1 outputs
//   IRFFT complex -> real, input last dimension n_L/2 + 1; the missing half
//         comes from Hermitian symmetry X[n-k] = conj(X[k]), so the imaginary
//         parts of the zero and Nyquist terms have no effect (numpy's irfftn).
// Multi-dimensional transforms are successive 1-D transforms (separability);
// IRFFT inverts the outer dimensions first and the real last dimension last.
// Everything runs in complex<double> — radix-2 when the length is a power of
// two, otherwise a direct O(n^2) DFT with exact twiddle indices — and rounds
// once to the result type.
#include <cmath>
#include <complex>
#include <numbers>
#include <string>

#include "compiler/evaluator/contraction_util.h"

namespace kiln::hlo {

namespace {

using Complex = std::complex<double>;

// e^{sign * 2 pi i j / n} for j in [0, n).
std::vector<Complex> Twiddles(int64_t n, double sign) {
  std::vector<Complex> w(n);
  for (int64_t j = 0; j < n; ++j) {
    double angle = sign * 2.0 * std::numbers::pi * static_cast<double>(j) / static_cast<double>(n);
    w[j] = {std::cos(angle), std::sin(angle)};
  }
  return w;
}

// In-place 1-D DFT of `x` (length n) with twiddles e^{sign 2 pi i j/n}.
void Dft1D(std::vector<Complex>& x, const std::vector<Complex>& w, std::vector<Complex>& scratch) {
  const int64_t n = static_cast<int64_t>(x.size());
  if (n <= 1) return;
  if ((n & (n - 1)) == 0) {
    // Iterative radix-2 Cooley-Tukey: bit-reversal permutation, then
    // butterflies of growing length; twiddle of stage `len` is w[j * n/len].
    for (int64_t i = 1, j = 0; i < n; ++i) {
      int64_t bit = n >> 1;
      for (; j & bit; bit >>= 1) j ^= bit;
      j ^= bit;
      if (i < j) std::swap(x[i], x[j]);
    }
    for (int64_t len = 2; len <= n; len <<= 1) {
      const int64_t step = n / len;
      for (int64_t start = 0; start < n; start += len) {
        for (int64_t j = 0; j < len / 2; ++j) {
          Complex u = x[start + j];
          Complex v = x[start + j + len / 2] * w[j * step];
          x[start + j] = u + v;
          x[start + j + len / 2] = u - v;
        }
      }
    }
    return;
  }
  scratch.assign(n, Complex(0, 0));
  for (int64_t k = 0; k < n; ++k) {
    Complex acc(0, 0);
    for (int64_t j = 0; j < n; ++j) acc += x[j] * w[(j * k) % n];
    scratch[k] = acc;
  }
  x.swap(scratch);
}

// Applies the 1-D transform along `axis` of the row-major buffer `data` with
// dimensions `dims`, to every line; inverse transforms are scaled by 1/n.
void TransformAxis(std::vector<Complex>& data, const std::vector<int64_t>& dims, int64_t axis,
                   bool inverse) {
  const int64_t n = dims[axis];
  if (n == 0 || data.empty()) return;
  int64_t inner = 1;
  for (size_t d = axis + 1; d < dims.size(); ++d) inner *= dims[d];
  const int64_t outer = static_cast<int64_t>(data.size()) / (n * inner);
  const std::vector<Complex> w = Twiddles(n, inverse ? 1.0 : -1.0);
  const double scale = inverse ? 1.0 / static_cast<double>(n) : 1.0;
  std::vector<Complex> line(n), scratch;
  for (int64_t o = 0; o < outer; ++o) {
    for (int64_t i = 0; i < inner; ++i) {
      Complex* base = data.data() + o * n * inner + i;
      for (int64_t j = 0; j < n; ++j) line[j] = base[j * inner];
      Dft1D(line, w, scratch);
      for (int64_t j = 0; j < n; ++j) base[j * inner] = line[j] * scale;
    }
  }
}

// Changes the last dimension of a row-major buffer from dims.back() to
// `new_last`, truncating or filling each line with `fill(line, j)`.
template <typename Fill>
std::vector<Complex> ResizeLastDim(const std::vector<Complex>& data, std::vector<int64_t>& dims,
                                   int64_t new_last, Fill fill) {
  const int64_t old_last = dims.back();
  const int64_t lines = old_last == 0 ? 0 : static_cast<int64_t>(data.size()) / old_last;
  std::vector<Complex> out(lines * new_last);
  for (int64_t l = 0; l < lines; ++l) {
    const Complex* src = data.data() + l * old_last;
    for (int64_t j = 0; j < new_last; ++j) out[l * new_last + j] = fill(src, old_last, j);
  }
  dims.back() = new_last;
  return out;
}

}  // namespace

StatusOr<Literal> EvalFft(const HloInstruction& inst, const Operands& operands) {
  if (operands.size() != 1) return Error(inst.DebugName() + ": fft takes one operand");
  const Literal& input = *operands[0];
  const Shape& shape = inst.shape();
  if (!input.shape().IsArray() || !shape.IsArray())
    return Error(inst.DebugName() + ": fft operand and result must be arrays");
  const std::string type = inst.GetString("fft_type");
  const std::vector<int64_t> lengths = inst.GetInts("fft_length");
  const int64_t rank = input.shape().rank();
  const int64_t count = static_cast<int64_t>(lengths.size());
  if (count < 1 || count > 3 || count > rank)
    return Error(inst.DebugName() + ": fft_length must name 1 to 3 of the operand's dimensions");
  const int64_t first = rank - count;  // first transformed dimension
  std::vector<int64_t> dims = input.shape().dims();

  // Checks the transformed dimensions of `d` against fft_length, with the
  // last one expected to be `last`.
  auto check_dims = [&](const std::vector<int64_t>& d, int64_t last, const char* what) -> Status {
    for (int64_t i = 0; i < count; ++i) {
      int64_t expected = i == count - 1 ? last : lengths[i];
      if (d[first + i] != expected)
        return Error(inst.DebugName() + ": " + what + " dimension " + std::to_string(first + i) +
                     " is " + std::to_string(d[first + i]) + ", expected " +
                     std::to_string(expected));
    }
    return Status::Ok();
  };
  const int64_t n_last = lengths.back();
  std::vector<Complex> data = ReadAsComplex(input, ElementType::kC128);

  if (type == "FFT" || type == "IFFT") {
    if (!IsComplex(input.element_type()) || !IsComplex(shape.element_type()))
      return Error(inst.DebugName() + ": " + type + " needs complex operand and result");
    KILN_RETURN_IF_ERROR(check_dims(dims, n_last, "operand"));
    for (int64_t a = first; a < rank; ++a) TransformAxis(data, dims, a, type == "IFFT");
  } else if (type == "RFFT") {
    if (!IsFloat(input.element_type()) || !IsComplex(shape.element_type()))
      return Error(inst.DebugName() + ": RFFT needs a real operand and complex result");
    KILN_RETURN_IF_ERROR(check_dims(dims, n_last, "operand"));
    TransformAxis(data, dims, rank - 1, /*inverse=*/false);
    data = ResizeLastDim(data, dims, n_last / 2 + 1,
                         [](const Complex* line, int64_t, int64_t j) { return line[j]; });
    for (int64_t a = first; a < rank - 1; ++a) TransformAxis(data, dims, a, false);
  } else if (type == "IRFFT") {
    if (!IsComplex(input.element_type()) || !IsFloat(shape.element_type()))
      return Error(inst.DebugName() + ": IRFFT needs a complex operand and real result");
    KILN_RETURN_IF_ERROR(check_dims(dims, n_last / 2 + 1, "operand"));
    for (int64_t a = first; a < rank - 1; ++a) TransformAxis(data, dims, a, true);
    // Hermitian extension of the last dimension: X[k] = conj(X[n - k]) for
    // k beyond the stored half; then a complex inverse whose real part is the
    // result (the discarded imaginary part is exactly the contribution of the
    // imaginary parts of the zero and Nyquist terms).
    data = ResizeLastDim(data, dims, n_last, [n_last](const Complex* line, int64_t half, int64_t j) {
      return j < half ? line[j] : std::conj(line[n_last - j]);
    });
    TransformAxis(data, dims, rank - 1, /*inverse=*/true);
    if (dims != shape.dims())
      return Error(inst.DebugName() + ": fft result dimensions do not match the declared shape " +
                   shape.ToString(false));
    std::vector<double> real(data.size());
    for (size_t i = 0; i < data.size(); ++i) real[i] = data[i].real();
    return StoreReal(shape, real);
  } else {
    return Error(inst.DebugName() + ": unknown fft_type '" + type + "'");
  }
  if (dims != shape.dims())
    return Error(inst.DebugName() + ": fft result dimensions do not match the declared shape " +
                 shape.ToString(false));
  return StoreComplex(shape, data);
}

}  // namespace kiln::hlo
