// NumPy .npy files: read and write array Literals.
//
// Why: every kiln tool exchanges inputs and outputs with JAX/NumPy users, and
// .npy is the one binary format both sides already speak. The format is a
// magic string, a version, a Python-dict header ({'descr': '<f4',
// 'fortran_order': False, 'shape': (2, 3), }) and raw element bytes.
//
// Supported: format versions 1.0, 2.0 and 3.0; byte orders '<', '|', '='
// (little-endian host) and '>' (swapped on read); C order, and Fortran order
// (transposed to row-major on read). Element descriptors:
//   b1 pred; i1 i2 i4 i8 s8..s64; u1 u2 u4 u8 u8..u64; f2 f16; f4 f32; f8 f64;
//   c8 c64; c16 c128.
// ml_dtypes' types (bf16, the f8 family, f4e2m1fn, s2/s4/u2/u4) have no NumPy
// type code, so np.save writes them as void types ('<V2' for bf16, '<V1' for
// one-byte types; older ml_dtypes wrote '<f1' for float8_e5m2). Such a file
// cannot say which type it holds: ReadNpy needs the expected element type
// (usually from the parameter shape it feeds) to read one. ml_dtypes' type
// names ('bfloat16', 'float8_e4m3fn', 'int4', ...), which hand-written
// headers use, are accepted as descriptors too.
//
// Writing uses version 1.0 (2.0 when the header needs it) and the descriptor
// np.save would use, so NumPy can load every file kiln writes; narrow float
// and sub-byte types are written as '<V2'/'<V1' exactly as ml_dtypes does.
//
// Reading never trusts the file: the header is bounded, dimensions are
// checked for overflow and the data size is checked against the file size
// before anything is allocated.
#pragma once

#include <cstdint>
#include <optional>
#include <string>
#include <string_view>
#include <vector>

#include "common/literal.h"
#include "common/status.h"

namespace kiln {

// Reads the first array of a .npy file. `expected_type` resolves void
// descriptors ('|V2' -> bf16 or f16, '|V1' -> an f8/sub-byte type); for other
// descriptors it is not used (callers compare shapes themselves).
StatusOr<Literal> ReadNpy(const std::string& path,
                          std::optional<ElementType> expected_type = std::nullopt);

// Parses .npy bytes held in memory (the whole file); `consumed`, if given,
// receives the bytes used, so concatenated arrays can be read one by one.
StatusOr<Literal> ParseNpy(std::string_view bytes, std::optional<ElementType> expected_type,
                           size_t* consumed = nullptr);

// Reads every array of a file holding several concatenated .npy arrays (what
// IREE's "+file.npy" output appends); `expected_types[i]` resolves array i.
StatusOr<std::vector<Literal>> ReadNpyAll(const std::string& path,
                                          const std::vector<ElementType>& expected_types = {});

// The complete .npy encoding of an array literal.
StatusOr<std::string> EncodeNpy(const Literal& literal);

// Writes `literal` to `path`, replacing it, or appending another array to it.
Status WriteNpy(const Literal& literal, const std::string& path, bool append = false);

// The descriptor np.save uses for `type` ("<f4", "|b1", "<V2"); empty for
// non-array types.
std::string NpyDescr(ElementType type);

}  // namespace kiln
