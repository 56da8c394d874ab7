// LinalgGeometry; see linalg_geometry.h.
#include "thunks/linalg_geometry.h"

#include <algorithm>

namespace kiln::thunks {

StatusOr<LinalgGeometry> GetLinalgGeometry(const LinalgThunk& l) {
  if (l.type != ElementType::kF32 && l.type != ElementType::kF64 && l.type != ElementType::kC64 &&
      l.type != ElementType::kC128)
    return Error("element type " + std::string(ElementTypeName(l.type)) + " (" +
                 std::string(LinalgOpName(l.op)) + " takes f32, f64, c64 and c128)");
  // Eigen- and singular values are real.
  const ElementType real = l.type == ElementType::kC64 ? ElementType::kF32
                           : l.type == ElementType::kC128 ? ElementType::kF64 : l.type;
  if (l.m < 0 || l.n < 0 || l.k < 0 || l.batch < 0) return Error("negative dimension");
  const int64_t k = std::min(l.m, l.n);
  const ElementType s32 = ElementType::kS32;
  LinalgGeometry g;
  g.a_elements = l.m * l.n;
  switch (l.op) {
    case LinalgOp::kGetrf:
      g.results = {{"ipiv", k, s32}, {"info", 1, s32}};
      break;
    case LinalgOp::kGeqrf:
      g.results = {{"tau", k, l.type}};
      break;
    case LinalgOp::kOrgqr:
      if (l.k > l.n || l.n > l.m) return Error("orgqr needs k <= n <= m");
      break;
    case LinalgOp::kSyevd:
      if (l.m != l.n) return Error("syevd needs square matrices");
      if (l.mode != 'V' && l.mode != 'N') return Error("syevd mode must be 'V' or 'N'");
      g.results = {{"w", l.n, real}, {"info", 1, s32}};
      break;
    case LinalgOp::kGesdd: {
      if (l.mode != 'A' && l.mode != 'S' && l.mode != 'N') return Error("gesdd mode must be 'A', 'S' or 'N'");
      const bool full = l.mode != 'S';  // 'N' keeps XLA's full-size placeholders
      g.u_rows = l.m;
      g.u_cols = full ? l.m : k;
      g.vt_rows = full ? l.n : k;
      g.vt_cols = l.n;
      g.results = {{"s", k, real},
                   {"u", g.u_rows * g.u_cols, l.type},
                   {"vt", g.vt_rows * g.vt_cols, l.type},
                   {"info", 1, s32}};
      break;
    }
    default:
      return Error("unknown linalg op");
  }
  return g;
}

}  // namespace kiln::thunks
