// Semantic checks of a ThunkProgram (see validate.h). Every check is written
// to be safe on arbitrary (e.g. corrupted-file) values: sizes are combined
// with overflow-checked arithmetic, indices are range-checked before use.
#include "thunks/validate.h"

#include <map>
#include <set>
#include <tuple>

#include "thunks/initialization_analysis.h"
#include "thunks/linalg_geometry.h"
#include "thunks/program_text.h"
#include "thunks/streams.h"

namespace kiln::thunks {
namespace {

std::optional<int64_t> Mul(int64_t a, int64_t b) {
  int64_t r;
  if (__builtin_mul_overflow(a, b, &r)) return std::nullopt;
  return r;
}
std::optional<int64_t> Add(int64_t a, int64_t b) {
  int64_t r;
  if (__builtin_add_overflow(a, b, &r)) return std::nullopt;
  return r;
}

// A shape for a message: layout suffixes read from a file may hold any bytes.
std::string ShapeText(const Shape& shape) { return EscapeForDisplay(shape.ToString()); }

std::string Describe(const Thunk& thunk) {
  return std::string(ThunkKindName(thunk.kind())) + " thunk " +
         QuoteForMessage(thunk.info.profile_name);
}

// Elements spanned by `batch` row-major matrices of rows x cols with the
// given leading dimension and batch stride; nullopt on overflow or bad
// strides. Zero when any extent is zero.
std::optional<int64_t> MatrixExtent(int64_t rows, int64_t cols, int64_t ld, int64_t batch,
                                    int64_t batch_stride) {
  if (rows < 0 || cols < 0 || batch < 0 || ld < 0 || batch_stride < 0) return std::nullopt;
  if (rows == 0 || cols == 0 || batch == 0) return 0;
  if (ld < cols) return std::nullopt;
  auto last_row = Mul(rows - 1, ld);
  auto last_batch = Mul(batch - 1, batch_stride);
  if (!last_row || !last_batch) return std::nullopt;
  auto sum = Add(*last_row, *last_batch);
  if (!sum) return std::nullopt;
  return Add(*sum, cols);
}

std::string DimsText(const std::vector<int64_t>& dims) {
  std::string s = "[";
  for (size_t i = 0; i < dims.size(); ++i) s += (i ? "," : "") + std::to_string(dims[i]);
  return s + "]";
}

class Validator {
 public:
  explicit Validator(const ThunkProgram& p) : p_(p) {}

  Status Run() {
    KILN_RETURN_IF_ERROR(CheckShapes());
    KILN_RETURN_IF_ERROR(CheckAllocations());
    KILN_RETURN_IF_ERROR(CheckParameterLeaves());
    KILN_RETURN_IF_ERROR(CheckResultLeaves());
    KILN_RETURN_IF_ERROR(CheckDynamicDimensions());
    KILN_RETURN_IF_ERROR(CheckAliases());
    KILN_RETURN_IF_ERROR(CheckDeviceGrid());
    KILN_RETURN_IF_ERROR(CheckAsyncPairs());
    KILN_RETURN_IF_ERROR(CheckSequence(p_.root, 1));
    KILN_RETURN_IF_ERROR(ValidateStreams(p_));
    return CheckZeroInitialization();
  }

 private:
  // An allocation that may be read before it is written must be zeroed:
  // otherwise an execution would read what the last one left there.
  Status CheckZeroInitialization() const {
    std::vector<bool> needs = AllocationsReadBeforeWritten(p_);
    for (size_t a = 0; a < p_.allocations.size(); ++a) {
      if (needs[a] && !p_.allocations[a].zero_initialize)
        return Error("allocation " + std::to_string(a) +
                     " may be read before it is written but is not zero-initialized");
    }
    return Status::Ok();
  }

  Status CheckSlice(const BufferSlice& s, const std::string& what) const {
    if (s.allocation < 0 || s.allocation >= static_cast<int64_t>(p_.allocations.size())) {
      return Error(what + " slice refers to allocation " + std::to_string(s.allocation) +
                   " but the program has " + std::to_string(p_.allocations.size()));
    }
    const int64_t alloc_size = p_.allocations[s.allocation].size;
    if (s.offset < 0 || s.size < 0 || s.offset > alloc_size || s.size > alloc_size - s.offset) {
      return Error(what + " slice a" + std::to_string(s.allocation) + " offset " +
                   std::to_string(s.offset) + " size " + std::to_string(s.size) +
                   " is out of bounds of allocation " + std::to_string(s.allocation) + " (size " +
                   std::to_string(alloc_size) + ")");
    }
    return Status::Ok();
  }

  // The slice is in bounds and holds at least `bytes` bytes (nullopt bytes:
  // the required size overflowed).
  Status CheckSliceHolds(const BufferSlice& s, std::optional<int64_t> bytes,
                         const std::string& what) const {
    KILN_RETURN_IF_ERROR(CheckSlice(s, what));
    if (!bytes) return Error(what + " size overflows");
    if (s.size < *bytes) {
      return Error(what + " slice " + s.ToString() + " holds " + std::to_string(s.size) +
                   " bytes but needs " + std::to_string(*bytes));
    }
    return Status::Ok();
  }

  Status CheckShapes() const {
    for (size_t i = 0; i < p_.signature.parameters.size(); ++i) {
      if (!CheckedByteSize(p_.signature.parameters[i])) {
        return Error("signature: parameter " + std::to_string(i) + " has an invalid shape");
      }
    }
    if (!CheckedByteSize(p_.signature.result)) {
      return Error("signature: the result has an invalid shape");
    }
    return Status::Ok();
  }

  const Shape* ParameterLeafShape(int64_t number, const ShapeIndex& index) const {
    if (number < 0 || number >= static_cast<int64_t>(p_.signature.parameters.size())) {
      return nullptr;
    }
    return SubShape(p_.signature.parameters[number], index);
  }

  Status CheckAllocations() const {
    for (size_t i = 0; i < p_.allocations.size(); ++i) {
      const Allocation& a = p_.allocations[i];
      const std::string what = "allocation " + std::to_string(i);
      if (a.size < 0) return Error(what + " has negative size " + std::to_string(a.size));
      if (a.alignment <= 0 || (a.alignment & (a.alignment - 1)) != 0 || a.alignment > (1 << 20)) {
        return Error(what + " has invalid alignment " + std::to_string(a.alignment));
      }
      if (a.parameter) {
        const Shape* leaf = ParameterLeafShape(a.parameter->number, a.parameter->index);
        if (leaf == nullptr || !leaf->IsArray()) {
          return Error(what + " names parameter " + std::to_string(a.parameter->number) + " " +
                       ShapeIndexToString(a.parameter->index) +
                       ", which is not an array leaf of the entry parameters");
        }
        if (a.constant) return Error(what + " is both a parameter and a constant");
      }
      if (a.output && SubShape(p_.signature.result, *a.output) == nullptr) {
        return Error(what + " names output " + ShapeIndexToString(*a.output) +
                     ", which is not in the result shape");
      }
      if (a.constant) {
        if (*a.constant < 0 || *a.constant >= static_cast<int64_t>(p_.constants.size())) {
          return Error(what + " names constant " + std::to_string(*a.constant) + " but there are " +
                       std::to_string(p_.constants.size()));
        }
        const Constant& c = p_.constants[*a.constant];
        if (static_cast<int64_t>(c.bytes.size()) != a.size) {
          return Error(what + " has size " + std::to_string(a.size) + " but constant " +
                       std::to_string(*a.constant) + " (" + QuoteForMessage(c.name) + ") has " +
                       std::to_string(c.bytes.size()) + " bytes");
        }
      }
    }
    return Status::Ok();
  }

  Status CheckParameterLeaves() const {
    std::set<std::pair<int64_t, ShapeIndex>> seen;
    for (const ParameterLeaf& leaf : p_.signature.parameter_leaves) {
      const std::string what = "signature: parameter " + std::to_string(leaf.parameter_number) +
                               " leaf " + ShapeIndexToString(leaf.index);
      const Shape* shape = ParameterLeafShape(leaf.parameter_number, leaf.index);
      if (shape == nullptr || !shape->IsArray()) return Error(what + " is not an array leaf");
      if (!seen.insert({leaf.parameter_number, leaf.index}).second) {
        return Error(what + " is listed twice");
      }
      KILN_RETURN_IF_ERROR(CheckLeafSlice(leaf.slice, *shape, what));
      const Allocation& a = p_.allocations[leaf.slice.allocation];
      if (!a.parameter || a.parameter->number != leaf.parameter_number ||
          a.parameter->index != leaf.index) {
        return Error(what + " lives in allocation " + std::to_string(leaf.slice.allocation) +
                     ", which is not that parameter's allocation");
      }
    }
    size_t expected = 0;
    for (const Shape& p : p_.signature.parameters) expected += ArrayLeafIndices(p).size();
    if (seen.size() != expected) {
      return Error("signature: " + std::to_string(seen.size()) + " parameter leaves listed, " +
                   std::to_string(expected) + " expected");
    }
    return Status::Ok();
  }

  Status CheckResultLeaves() const {
    std::set<ShapeIndex> seen;
    for (const ResultLeaf& leaf : p_.signature.result_leaves) {
      const std::string what = "signature: result leaf " + ShapeIndexToString(leaf.index);
      const Shape* shape = SubShape(p_.signature.result, leaf.index);
      if (shape == nullptr || !shape->IsArray()) return Error(what + " is not an array leaf");
      if (!seen.insert(leaf.index).second) return Error(what + " is listed twice");
      KILN_RETURN_IF_ERROR(CheckLeafSlice(leaf.slice, *shape, what));
      if (p_.allocations[leaf.slice.allocation].is_temp()) {
        return Error(what + " lives in allocation " + std::to_string(leaf.slice.allocation) +
                     ", a temporary");
      }
    }
    const size_t expected = ArrayLeafIndices(p_.signature.result).size();
    if (seen.size() != expected) {
      return Error("signature: " + std::to_string(seen.size()) + " result leaves listed, " +
                   std::to_string(expected) + " expected");
    }
    return Status::Ok();
  }

  // Every dynamic dimension of a caller leaf has one s32[] size leaf of its
  // own, and the size leaves trail the caller's (see DynamicDimension).
  Status CheckDynamicDimensions() const {
    const Signature& sig = p_.signature;
    const int64_t caller_params = CallerParameterCount(sig);
    const int64_t caller_param_leaves = CallerParameterLeafCount(sig);
    const int64_t caller_result_leaves = CallerResultLeafCount(sig);
    if (caller_params < 0 || caller_param_leaves < 0 || caller_result_leaves < 0)
      return Error("signature: more dynamic dimensions than leaves");
    const bool sized_result = caller_result_leaves < static_cast<int64_t>(sig.result_leaves.size());
    if (sized_result && (!sig.result.IsTuple() ||
                         sig.result.tuple_size() != 1 + static_cast<int64_t>(sig.result_leaves.size()) -
                                                        caller_result_leaves)) {
      return Error("signature: a result with dynamic sizes must be (caller result, sizes...)");
    }
    std::set<std::pair<bool, int64_t>> sizes;
    std::set<std::tuple<bool, int64_t, int64_t>> dims;
    for (const DynamicDimension& d : sig.dynamic_dimensions) {
      const std::string what = std::string("signature: dynamic dimension ") + std::to_string(d.dimension) +
                               " of " + (d.of_result ? "result" : "parameter") + " leaf " +
                               std::to_string(d.leaf);
      const int64_t callers = d.of_result ? caller_result_leaves : caller_param_leaves;
      const int64_t leaves = d.of_result ? sig.result_leaves.size() : sig.parameter_leaves.size();
      if (d.leaf < 0 || d.leaf >= callers) return Error(what + ": no such caller leaf");
      if (d.size_leaf < callers || d.size_leaf >= leaves)
        return Error(what + ": size leaf " + std::to_string(d.size_leaf) + " is not a trailing leaf");
      const Shape* shape = DynamicLeafShape(d.of_result, d.leaf);
      if (d.dimension < 0 || d.dimension >= shape->rank() || !shape->is_dynamic_dim(d.dimension))
        return Error(what + ": " + ShapeText(*shape) + " has no such dynamic dimension");
      if (*DynamicLeafShape(d.of_result, d.size_leaf) != Shape::Scalar(ElementType::kS32))
        return Error(what + ": its size leaf is not s32[]");
      if (!SizeLeafIsWhole(d.of_result, d.size_leaf, caller_params))
        return Error(what + ": its size leaf must be a trailing parameter or root element of its own");
      if (!sizes.insert({d.of_result, d.size_leaf}).second || !dims.insert({d.of_result, d.leaf, d.dimension}).second)
        return Error(what + " is listed twice");
    }
    return CheckEveryDynamicDimensionSized(dims, caller_params, caller_param_leaves, caller_result_leaves);
  }

  const Shape* DynamicLeafShape(bool of_result, int64_t leaf) const {
    if (of_result) return SubShape(p_.signature.result, p_.signature.result_leaves[leaf].index);
    const ParameterLeaf& l = p_.signature.parameter_leaves[leaf];
    return ParameterLeafShape(l.parameter_number, l.index);
  }

  bool SizeLeafIsWhole(bool of_result, int64_t leaf, int64_t caller_params) const {
    if (of_result) {
      const ShapeIndex& index = p_.signature.result_leaves[leaf].index;
      return index.size() == 1 && index[0] >= 1;
    }
    const ParameterLeaf& l = p_.signature.parameter_leaves[leaf];
    return l.index.empty() && l.parameter_number >= caller_params;
  }

  Status CheckEveryDynamicDimensionSized(const std::set<std::tuple<bool, int64_t, int64_t>>& dims, int64_t caller_params,
                                         int64_t caller_param_leaves, int64_t caller_result_leaves) const {
    for (bool of_result : {false, true}) {
      const int64_t callers = of_result ? caller_result_leaves : caller_param_leaves;
      for (int64_t leaf = 0; leaf < callers; ++leaf) {
        const Shape* shape = DynamicLeafShape(of_result, leaf);
        if (of_result && callers < static_cast<int64_t>(p_.signature.result_leaves.size()) &&
            p_.signature.result_leaves[leaf].index.at(0) != 0) {
          return Error("signature: result leaf " + std::to_string(leaf) + " lies outside the caller result");
        }
        if (!of_result && p_.signature.parameter_leaves[leaf].parameter_number >= caller_params)
          return Error("signature: parameter leaf " + std::to_string(leaf) + " lies past the caller parameters");
        for (int64_t dim = 0; dim < shape->rank(); ++dim) {
          if (shape->is_dynamic_dim(dim) && !dims.count({of_result, leaf, dim}))
            return Error(std::string("signature: dynamic dimension ") + std::to_string(dim) + " of " +
                         (of_result ? "result" : "parameter") + " leaf " + std::to_string(leaf) +
                         " has no size leaf");
        }
      }
    }
    return Status::Ok();
  }

  // A leaf's slice holds exactly the leaf's dense bytes.
  Status CheckLeafSlice(const BufferSlice& s, const Shape& shape, const std::string& what) const {
    KILN_RETURN_IF_ERROR(CheckSlice(s, what));
    const int64_t bytes = *CheckedByteSize(shape);  // CheckShapes ran first
    if (s.size != bytes) {
      return Error(what + " (" + ShapeText(shape) + ", " + std::to_string(bytes) +
                   " bytes) has a slice of " + std::to_string(s.size) + " bytes");
    }
    return Status::Ok();
  }

  Status CheckAliases() const {
    std::set<ShapeIndex> outputs;
    for (const InputOutputAlias& alias : p_.signature.aliases) {
      const std::string what = "signature: alias of output " +
                               ShapeIndexToString(alias.output_index) + " to parameter " +
                               std::to_string(alias.parameter_number) + " " +
                               ShapeIndexToString(alias.parameter_index);
      const Shape* out = SubShape(p_.signature.result, alias.output_index);
      const Shape* in = ParameterLeafShape(alias.parameter_number, alias.parameter_index);
      if (out == nullptr || in == nullptr) return Error(what + " names a missing leaf");
      if (!out->Compatible(*in)) {
        return Error(what + ": shapes " + ShapeText(*out) + " and " + ShapeText(*in) + " differ");
      }
      if (!outputs.insert(alias.output_index).second) return Error(what + ": output aliased twice");
    }
    return Status::Ok();
  }

  Status CheckSequence(const SequenceThunk& seq, int depth) const {
    if (depth > kMaxThunkDepth) {
      return Error("the thunk tree is deeper than " + std::to_string(kMaxThunkDepth) + " levels");
    }
    for (const Thunk& thunk : seq.thunks) {
      KILN_RETURN_IF_ERROR(CheckThunk(thunk).WithContext(Describe(thunk)));
      for (const SequenceThunk* child : ChildSequences(thunk)) {
        KILN_RETURN_IF_ERROR(CheckSequence(*child, depth + 1));
      }
    }
    return Status::Ok();
  }

  Status CheckThunk(const Thunk& thunk) const {
    return std::visit([&](const auto& body) { return Check(body); }, thunk.body);
  }

  Status Check(const KernelThunk& k) const {
    if (k.kernel_name.empty()) return Error("empty kernel name");
    KILN_RETURN_IF_ERROR(CheckCudaLaunch(k.launch));
    for (size_t i = 0; i < k.args.size(); ++i) {
      KILN_RETURN_IF_ERROR(CheckSlice(k.args[i].slice, "argument " + std::to_string(i)));
    }
    return Status::Ok();
  }

  static std::optional<int64_t> Bytes(std::optional<int64_t> elements, ElementType type) {
    if (!elements || !IsArrayType(type)) return std::nullopt;
    return Mul(*elements, StorageBytes(type));
  }

  // f8 operands only in an FP8 GEMM of cuBLASLt's form (see IsFp8Gemm).
  static Status CheckFp8Form(const GemmThunk& g) {
    const bool f8_operand = IsFp8GemmOperandType(g.lhs_type) || IsFp8GemmOperandType(g.rhs_type);
    if (!f8_operand) return Status::Ok();
    const std::string types = std::string(ElementTypeName(g.lhs_type)) + " x " +
                              std::string(ElementTypeName(g.rhs_type)) + " -> " +
                              std::string(ElementTypeName(g.out_type));
    if (!IsFp8Gemm(g))
      return Error("fp8 gemm of " + types +
                   " (FP8 GEMMs take f8e4m3fn x f8e4m3fn, f8e4m3fn x f8e5m2 or f8e5m2 x f8e4m3fn -> f32, bf16 or f16)");
    if (g.lhs_transposed || !g.rhs_transposed || g.k % 16 != 0 || g.n % 16 != 0)
      return Error("fp8 gemm of " + types + " not in the TN form (lhs [m,k], rhs [n,k], k and n multiples of 16)");
    return Status::Ok();
  }

  Status Check(const GemmThunk& g) const {
    if (g.m < 0 || g.n < 0 || g.k < 0 || g.batch < 1) {
      return Error("invalid dimensions m=" + std::to_string(g.m) + " n=" + std::to_string(g.n) +
                   " k=" + std::to_string(g.k) + " batch=" + std::to_string(g.batch));
    }
    const int64_t lhs_rows = g.lhs_transposed ? g.k : g.m, lhs_cols = g.lhs_transposed ? g.m : g.k;
    const int64_t rhs_rows = g.rhs_transposed ? g.n : g.k, rhs_cols = g.rhs_transposed ? g.k : g.n;
    KILN_RETURN_IF_ERROR(CheckSliceHolds(
        g.lhs,
        Bytes(MatrixExtent(lhs_rows, lhs_cols, g.lhs_leading_dim, g.batch, g.lhs_batch_stride),
              g.lhs_type),
        "lhs"));
    KILN_RETURN_IF_ERROR(CheckSliceHolds(
        g.rhs,
        Bytes(MatrixExtent(rhs_rows, rhs_cols, g.rhs_leading_dim, g.batch, g.rhs_batch_stride),
              g.rhs_type),
        "rhs"));
    KILN_RETURN_IF_ERROR(CheckSliceHolds(
        g.out,
        Bytes(MatrixExtent(g.m, g.n, g.out_leading_dim, g.batch, g.out_batch_stride), g.out_type),
        "out"));
    if (g.workspace) KILN_RETURN_IF_ERROR(CheckSlice(*g.workspace, "workspace"));
    KILN_RETURN_IF_ERROR(CheckFp8Form(g));
    if (g.tf32 && !(g.lhs_type == ElementType::kF32 && g.rhs_type == ElementType::kF32 &&
                    g.out_type == ElementType::kF32))
      return Error("tf32 on a gemm that is not f32 x f32 -> f32");
    return Status::Ok();
  }

  static bool DimOk(int64_t d, int64_t rank) { return d >= 0 && d < rank; }
  static bool DimsOk(const std::vector<int64_t>& ds, int64_t rank, size_t count) {
    if (ds.size() != count) return false;
    for (int64_t d : ds) {
      if (!DimOk(d, rank)) return false;
    }
    return true;
  }

  Status CheckArraySlice(const BufferSlice& s, const Shape& shape, const std::string& what) const {
    if (!shape.IsArray()) return Error(what + " shape " + ShapeText(shape) + " is not an array");
    return CheckSliceHolds(s, CheckedByteSize(shape), what);
  }

  Status Check(const ConvolutionThunk& c) const {
    if (c.operands.size() < 2 || c.operands.size() != c.operand_shapes.size()) {
      return Error("needs at least 2 operands, each with a shape");
    }
    for (size_t i = 0; i < c.operands.size(); ++i) {
      KILN_RETURN_IF_ERROR(
          CheckArraySlice(c.operands[i], c.operand_shapes[i], "operand " + std::to_string(i)));
    }
    KILN_RETURN_IF_ERROR(CheckArraySlice(c.result, c.result_shape, "result"));
    if (c.scratch) KILN_RETURN_IF_ERROR(CheckSlice(*c.scratch, "scratch"));
    // Forward convolution's roles; the backward kinds permute which buffer
    // plays input/kernel/output but keep all three ranks equal.
    const int64_t rank = c.result_shape.rank();
    const size_t spatial = c.window.size();
    const ConvolutionDimensions& d = c.dimensions;
    if (c.operand_shapes[0].rank() != rank || c.operand_shapes[1].rank() != rank ||
        rank != static_cast<int64_t>(spatial) + 2 || !DimOk(d.input_batch, rank) ||
        !DimOk(d.input_feature, rank) || !DimsOk(d.input_spatial, rank, spatial) ||
        !DimOk(d.kernel_input_feature, rank) || !DimOk(d.kernel_output_feature, rank) ||
        !DimsOk(d.kernel_spatial, rank, spatial) || !DimOk(d.output_batch, rank) ||
        !DimOk(d.output_feature, rank) || !DimsOk(d.output_spatial, rank, spatial)) {
      return Error("dimension numbers do not match the operand ranks and window");
    }
    for (const WindowDimension& w : c.window) {
      if (w.size < 1 || w.stride < 1 || w.lhs_dilation < 1 || w.rhs_dilation < 1) {
        return Error("invalid window");
      }
    }
    if (c.feature_group_count < 1 || c.batch_group_count < 1) return Error("invalid group count");
    return Status::Ok();
  }

  Status Check(const FftThunk& f) const {
    if (f.fft_length.empty() || f.fft_length.size() > 3 ||
        static_cast<int64_t>(f.fft_length.size()) > f.input_shape.rank()) {
      return Error("fft_length must have 1 to 3 entries, at most the input rank");
    }
    for (int64_t n : f.fft_length) {
      if (n < 1) return Error("fft_length entries must be positive");
    }
    KILN_RETURN_IF_ERROR(CheckArraySlice(f.input, f.input_shape, "input"));
    return CheckArraySlice(f.output, f.output_shape, "output");
  }

  static bool IsLinalgType(ElementType t) {
    return t == ElementType::kF32 || t == ElementType::kF64 || t == ElementType::kC64 ||
           t == ElementType::kC128;
  }

  // `batch` dense rows x cols matrices of `type`.
  static std::optional<int64_t> MatricesBytes(int64_t batch, int64_t rows, int64_t cols,
                                              ElementType type) {
    auto matrix = Mul(rows, cols);
    return Bytes(matrix ? Mul(*matrix, batch) : std::nullopt, type);
  }

  Status Check(const CholeskyThunk& c) const {
    if (!IsLinalgType(c.type)) {
      return Error("element type " + std::string(ElementTypeName(c.type)) +
                   " (cholesky takes f32, f64, c64 and c128)");
    }
    if (c.n < 0 || c.batch < 0) return Error("negative dimension");
    KILN_RETURN_IF_ERROR(CheckSliceHolds(c.a, MatricesBytes(c.batch, c.n, c.n, c.type), "a"));
    KILN_RETURN_IF_ERROR(CheckSliceHolds(c.info, Mul(c.batch, 4), "info"));
    if (c.a.Overlaps(c.info)) return Error("a and info overlap");
    return Status::Ok();
  }

  Status Check(const TriangularSolveThunk& t) const {
    if (!IsLinalgType(t.type)) {
      return Error("element type " + std::string(ElementTypeName(t.type)) +
                   " (triangular-solve takes f32, f64, c64 and c128)");
    }
    if (t.m < 0 || t.n < 0 || t.batch < 0) return Error("negative dimension");
    if (static_cast<uint8_t>(t.transpose_a) > 2) return Error("invalid transpose_a");
    KILN_RETURN_IF_ERROR(CheckSliceHolds(t.a, MatricesBytes(t.batch, t.k(), t.k(), t.type), "a"));
    KILN_RETURN_IF_ERROR(CheckSliceHolds(t.b, MatricesBytes(t.batch, t.m, t.n, t.type), "b"));
    // a is read while b is overwritten with the solution.
    if (t.a.Overlaps(t.b)) return Error("a and b overlap");
    return Status::Ok();
  }

  Status Check(const LinalgThunk& l) const {
    KILN_ASSIGN_OR_RETURN(LinalgGeometry g, GetLinalgGeometry(l));
    KILN_RETURN_IF_ERROR(CheckSliceHolds(l.a, Bytes(Mul(g.a_elements, l.batch), l.type), "a"));
    std::vector<BufferSlice> written = {l.a};
    if (l.op == LinalgOp::kOrgqr) {
      KILN_RETURN_IF_ERROR(CheckSliceHolds(l.tau, Bytes(Mul(l.k, l.batch), l.type), "tau"));
      if (l.tau.Overlaps(l.a)) return Error("tau and a overlap");
    }
    if (l.results.size() != g.results.size())
      return Error(std::string(LinalgOpName(l.op)) + " takes " + std::to_string(g.results.size()) +
                   " results besides a, got " + std::to_string(l.results.size()));
    for (size_t i = 0; i < g.results.size(); ++i) {
      const LinalgBlock& block = g.results[i];
      KILN_RETURN_IF_ERROR(
          CheckSliceHolds(l.results[i], Bytes(Mul(block.elements, l.batch), block.type), block.name.c_str()));
      for (const BufferSlice& other : written)
        if (l.results[i].Overlaps(other)) return Error(block.name + " overlaps another result");
      written.push_back(l.results[i]);
    }
    return Status::Ok();
  }

  static bool IsRadixKeyType(ElementType t, RadixKeyOrder order) {
    const bool is_float = t == ElementType::kF16 || t == ElementType::kBF16 || t == ElementType::kF32 ||
                          t == ElementType::kF64;
    const bool is_signed = t == ElementType::kS8 || t == ElementType::kS16 || t == ElementType::kS32 ||
                           t == ElementType::kS64;
    const bool is_unsigned = t == ElementType::kPred || t == ElementType::kU8 || t == ElementType::kU16 ||
                             t == ElementType::kU32 || t == ElementType::kU64;
    switch (order) {
      case RadixKeyOrder::kUnsigned: return is_unsigned;
      case RadixKeyOrder::kSigned: return is_signed;
      default: return is_float;
    }
  }

  Status Check(const RadixSortThunk& r) const {
    if (static_cast<uint8_t>(r.order) > 4) return Error("invalid key order");
    if (!IsRadixKeyType(r.key_type, r.order)) {
      return Error("key type " + std::string(ElementTypeName(r.key_type)) + " cannot be sorted in " +
                   std::string(RadixKeyOrderName(r.order)) + " order");
    }
    if (r.rows < 0 || r.row_length < 0) return Error("negative dimension");
    if (r.row_length > (int64_t{1} << 31) - 1) return Error("rows longer than 2^31 - 1 keys");
    std::optional<int64_t> count = Mul(r.rows, r.row_length);
    KILN_RETURN_IF_ERROR(CheckSliceHolds(r.keys, Bytes(count, r.key_type), "keys"));
    KILN_RETURN_IF_ERROR(CheckSliceHolds(r.keys_out, Bytes(count, r.key_type), "keys_out"));
    if (r.values.has_value() != r.values_out.has_value()) return Error("values without values_out or back");
    std::vector<BufferSlice> outputs = {r.keys_out};
    std::vector<BufferSlice> inputs = {r.keys};
    if (r.values) {
      const int64_t width = StorageBytes(r.value_type);
      if (width != 1 && width != 2 && width != 4 && width != 8)
        return Error("value type " + std::string(ElementTypeName(r.value_type)) + " is not 1, 2, 4 or 8 bytes");
      KILN_RETURN_IF_ERROR(CheckSliceHolds(*r.values, Bytes(count, r.value_type), "values"));
      KILN_RETURN_IF_ERROR(CheckSliceHolds(*r.values_out, Bytes(count, r.value_type), "values_out"));
      outputs.push_back(*r.values_out);
      inputs.push_back(*r.values);
    }
    // The outputs are gathered from the inputs: nothing may overlap.
    for (const BufferSlice& o : outputs) {
      for (const BufferSlice& i : inputs)
        if (o.Overlaps(i)) return Error("an output overlaps an input");
    }
    if (outputs.size() == 2 && outputs[0].Overlaps(outputs[1])) return Error("keys_out and values_out overlap");
    return Status::Ok();
  }

  Status Check(const CopyThunk& c) const {
    KILN_RETURN_IF_ERROR(CheckSlice(c.source, "source"));
    KILN_RETURN_IF_ERROR(CheckSlice(c.destination, "destination"));
    if (c.source.size != c.destination.size) {
      return Error("source and destination sizes differ (" + std::to_string(c.source.size) +
                   " vs " + std::to_string(c.destination.size) + ")");
    }
    return Status::Ok();
  }

  Status Check(const MemsetThunk& m) const {
    KILN_RETURN_IF_ERROR(CheckSlice(m.destination, "destination"));
    if (m.pattern != 0 && m.destination.size % 4 != 0) {
      return Error("a 32-bit pattern needs a size that is a multiple of 4");
    }
    return Status::Ok();
  }

  Status Check(const SequenceThunk&) const { return Status::Ok(); }

  Status Check(const WhileThunk& w) const {
    KILN_RETURN_IF_ERROR(CheckSliceHolds(w.predicate, 1, "predicate"));
    if (w.trip_count && *w.trip_count < 0) return Error("negative trip count");
    return Status::Ok();
  }

  Status Check(const ConditionalThunk& c) const {
    KILN_RETURN_IF_ERROR(CheckSliceHolds(c.branch_index, c.is_pred ? 1 : 4, "branch index"));
    if (c.is_pred ? c.branches.size() != 2 : c.branches.empty()) {
      return Error(c.is_pred ? "a PRED conditional needs exactly 2 branches"
                             : "an indexed conditional needs at least 1 branch");
    }
    return Status::Ok();
  }

  Status CheckDeviceGrid() const {
    constexpr int64_t kMaxDevices = 1 << 16;
    if (p_.replica_count < 1 || p_.num_partitions < 1 || p_.replica_count > kMaxDevices ||
        p_.num_partitions > kMaxDevices || p_.replica_count * p_.num_partitions > kMaxDevices)
      return Error("invalid device grid: " + std::to_string(p_.replica_count) + " replicas x " +
                   std::to_string(p_.num_partitions) + " partitions");
    return Status::Ok();
  }

  // Every async start has one done with its id, and every done one start.
  Status CheckAsyncPairs() const {
    std::map<int64_t, int> starts, dones;
    ForEachThunk(p_.root, [&](const Thunk& t, int) {
      if (const CollectiveConfig* c = CollectiveConfigOf(t); c && c->async_id) ++starts[*c->async_id];
      if (const auto* d = t.As<CollectiveDoneThunk>()) ++dones[d->async_id];
    });
    for (const auto& [id, n] : starts)
      if (n != 1 || dones[id] != 1)
        return Error("async collective " + std::to_string(id) + " has " + std::to_string(n) + " start(s) and " +
                     std::to_string(dones[id]) + " done(s)");
    for (const auto& [id, n] : dones)
      if (!starts.count(id)) return Error("collective-done waits for async id " + std::to_string(id) + " that no collective starts");
    return Status::Ok();
  }

  Status CheckDeviceId(int64_t id, const std::string& what) const {
    if (id < 0 || id >= p_.device_count())
      return Error(what + " " + std::to_string(id) + " is outside the " + std::to_string(p_.device_count()) +
                   " devices of the program");
    return Status::Ok();
  }

  Status CheckConfig(const CollectiveConfig& config) const {
    std::set<int64_t> ids;
    for (const auto& group : config.replica_groups) {
      for (int64_t id : group) {
        if (id < 0 || !ids.insert(id).second) {
          return Error("replica id " + std::to_string(id) + " is negative or repeated");
        }
      }
    }
    // The resolved groups partition the devices.
    std::set<int64_t> devices;
    for (const auto& group : config.device_groups) {
      if (group.empty()) return Error("empty device group");
      for (int64_t id : group) {
        KILN_RETURN_IF_ERROR(CheckDeviceId(id, "device"));
        if (!devices.insert(id).second) return Error("device " + std::to_string(id) + " is in two device groups");
      }
    }
    if (static_cast<int64_t>(devices.size()) != p_.device_count())
      return Error("the device groups cover " + std::to_string(devices.size()) + " of " +
                   std::to_string(p_.device_count()) + " devices");
    return Status::Ok();
  }

  // Group sizes of the config (every group's size when they are equal).
  std::optional<int64_t> UniformGroupSize(const CollectiveConfig& config) const {
    std::optional<int64_t> size;
    for (const auto& group : config.device_groups) {
      if (size && *size != static_cast<int64_t>(group.size())) return std::nullopt;
      size = static_cast<int64_t>(group.size());
    }
    return size;
  }

  Status CheckBuffers(const std::vector<CollectiveBuffer>& buffers) const {
    for (size_t i = 0; i < buffers.size(); ++i) {
      const CollectiveBuffer& b = buffers[i];
      const std::string what = "buffer " + std::to_string(i);
      if (b.element_count < 0) return Error(what + " has a negative element count");
      std::optional<int64_t> elements = 1;
      for (int64_t d : b.dims) elements = d < 0 || !elements ? std::nullopt : Mul(*elements, d);
      if (elements != b.element_count)
        return Error(what + ": dimensions " + DimsText(b.dims) + " do not hold " +
                     std::to_string(b.element_count) + " elements");
      KILN_RETURN_IF_ERROR(CheckSliceHolds(b.source, Bytes(b.element_count, b.element_type),
                                           what + " source"));
      KILN_RETURN_IF_ERROR(CheckSlice(b.destination, what + " destination"));
    }
    return Status::Ok();
  }

  // The destination of every buffer holds `factor_num / factor_den` times
  // its source (an all-gather's n times, a reduce-scatter's 1/n).
  Status CheckDestinations(const std::vector<CollectiveBuffer>& buffers, int64_t num, int64_t den) const {
    for (size_t i = 0; i < buffers.size(); ++i) {
      const CollectiveBuffer& b = buffers[i];
      std::optional<int64_t> bytes = Bytes(b.element_count, b.element_type);
      if (bytes) bytes = Mul(*bytes, num);
      if (!bytes || *bytes % den != 0 || b.destination.size != *bytes / den)
        return Error("buffer " + std::to_string(i) + " destination " + b.destination.ToString() +
                     " does not match its source and group size");
    }
    return Status::Ok();
  }

  Status CheckDimension(const std::vector<CollectiveBuffer>& buffers, int64_t dim, int64_t divisor) const {
    for (const CollectiveBuffer& b : buffers) {
      if (b.dims.empty() && divisor == 1) continue;  // a scalar scattered over one device
      if (dim < 0 || dim >= static_cast<int64_t>(b.dims.size()))
        return Error("dimension " + std::to_string(dim) + " is outside the buffer's rank " + std::to_string(b.dims.size()));
      if (divisor > 0 && b.dims[dim] % divisor != 0)
        return Error("dimension " + std::to_string(dim) + " of size " + std::to_string(b.dims[dim]) +
                     " is not divisible by the group size " + std::to_string(divisor));
    }
    return Status::Ok();
  }

  Status CheckReduction(ReductionKind kind, const std::vector<CollectiveBuffer>& buffers) const {
    for (const CollectiveBuffer& b : buffers) {
      const bool complex = IsComplex(b.element_type);
      const bool bitwise = kind == ReductionKind::kAnd || kind == ReductionKind::kOr;
      if ((complex && kind != ReductionKind::kSum && kind != ReductionKind::kProduct) ||
          (bitwise && !IsInteger(b.element_type) && !IsPred(b.element_type)))
        return Error(std::string(ReductionKindName(kind)) + " reduction of " +
                     std::string(ElementTypeName(b.element_type)) + " is not defined");
    }
    return Status::Ok();
  }

  Status CheckGrouped(const CollectiveConfig& config) const {
    KILN_RETURN_IF_ERROR(CheckConfig(config));
    if (!UniformGroupSize(config)) return Error("device groups of different sizes");
    return Status::Ok();
  }

  Status Check(const AllReduceThunk& t) const {
    KILN_RETURN_IF_ERROR(CheckGrouped(t.config));
    KILN_RETURN_IF_ERROR(CheckReduction(t.reduction, t.buffers));
    KILN_RETURN_IF_ERROR(CheckBuffers(t.buffers));
    return CheckDestinations(t.buffers, 1, 1);
  }
  Status Check(const AllGatherThunk& t) const {
    KILN_RETURN_IF_ERROR(CheckGrouped(t.config));
    const int64_t n = *UniformGroupSize(t.config);
    KILN_RETURN_IF_ERROR(CheckBuffers(t.buffers));
    KILN_RETURN_IF_ERROR(CheckDimension(t.buffers, t.dimension, 0));
    return CheckDestinations(t.buffers, n, 1);
  }
  Status Check(const ReduceScatterThunk& t) const {
    KILN_RETURN_IF_ERROR(CheckGrouped(t.config));
    const int64_t n = *UniformGroupSize(t.config);
    KILN_RETURN_IF_ERROR(CheckReduction(t.reduction, t.buffers));
    KILN_RETURN_IF_ERROR(CheckBuffers(t.buffers));
    KILN_RETURN_IF_ERROR(CheckDimension(t.buffers, t.dimension, n));
    return CheckDestinations(t.buffers, 1, n);
  }
  Status Check(const AllToAllThunk& t) const {
    KILN_RETURN_IF_ERROR(CheckGrouped(t.config));
    const int64_t n = *UniformGroupSize(t.config);
    KILN_RETURN_IF_ERROR(CheckBuffers(t.buffers));
    KILN_RETURN_IF_ERROR(CheckDestinations(t.buffers, 1, 1));
    if (t.split_dimension) return CheckDimension(t.buffers, *t.split_dimension, n);
    if (static_cast<int64_t>(t.buffers.size()) != n)
      return Error("a tuple all-to-all needs one buffer per rank (" + std::to_string(n) + "), not " +
                   std::to_string(t.buffers.size()));
    for (const CollectiveBuffer& b : t.buffers)
      if (b.source.size != t.buffers[0].source.size) return Error("tuple all-to-all buffers of different sizes");
    return Status::Ok();
  }
  Status Check(const CollectivePermuteThunk& t) const {
    for (const auto& [source, target] : t.source_target_pairs) {
      if (source < 0 || target < 0) return Error("negative id in source_target_pairs");
    }
    std::set<int64_t> sources, targets;
    for (const auto& [source, target] : t.device_pairs) {
      KILN_RETURN_IF_ERROR(CheckDeviceId(source, "source device"));
      KILN_RETURN_IF_ERROR(CheckDeviceId(target, "target device"));
      if (!sources.insert(source).second || !targets.insert(target).second)
        return Error("device " + std::to_string(source) + " -> " + std::to_string(target) +
                     ": a device sends or receives twice");
    }
    KILN_RETURN_IF_ERROR(CheckBuffers({t.buffer}));
    if (t.buffer.source.size != t.buffer.destination.size) {
      return Error("source and destination sizes differ");
    }
    return Status::Ok();
  }
  Status Check(const CollectiveBroadcastThunk& t) const {
    KILN_RETURN_IF_ERROR(CheckConfig(t.config));
    KILN_RETURN_IF_ERROR(CheckBuffers(t.buffers));
    return CheckDestinations(t.buffers, 1, 1);
  }
  Status Check(const CollectiveDoneThunk&) const { return Status::Ok(); }
  Status Check(const DeviceIdThunk& t) const { return CheckSliceHolds(t.destination, 4, "device id"); }

  Status Check(const RngGetAndUpdateStateThunk& r) const {
    return CheckSliceHolds(r.state, 16, "state");
  }

  Status Check(const CustomCallThunk& c) const {
    if (c.target.empty()) return Error("empty custom-call target");
    for (size_t i = 0; i < c.operands.size(); ++i) {
      KILN_RETURN_IF_ERROR(CheckSlice(c.operands[i], "operand " + std::to_string(i)));
    }
    for (size_t i = 0; i < c.results.size(); ++i) {
      KILN_RETURN_IF_ERROR(CheckSlice(c.results[i], "result " + std::to_string(i)));
    }
    return Status::Ok();
  }

  const ThunkProgram& p_;
};

}  // namespace

std::optional<int64_t> CheckedByteSize(const Shape& shape) {
  if (shape.IsTuple()) {
    int64_t total = 0;
    for (const Shape& s : shape.tuple_shapes()) {
      auto bytes = CheckedByteSize(s);
      if (!bytes) return std::nullopt;
      auto sum = Add(total, *bytes);
      if (!sum) return std::nullopt;
      total = *sum;
    }
    return total;
  }
  if (shape.IsToken()) return 0;
  if (!shape.IsArray()) return std::nullopt;
  int64_t elements = 1;
  for (int64_t d : shape.dims()) {
    if (d < 0) return std::nullopt;
    auto product = Mul(elements, d);
    if (!product) return std::nullopt;
    elements = *product;
  }
  return Mul(elements, StorageBytes(shape.element_type()));
}

Status CheckCudaLaunch(const LaunchDims& launch) {
  for (const Dim3& d : {launch.grid, launch.block}) {
    if (d.x < 1 || d.y < 1 || d.z < 1 || d.x > (1LL << 31) || d.y > 65535 || d.z > 65535) {
      return Error("invalid launch dimensions (" + std::to_string(d.x) + "," + std::to_string(d.y) + "," +
                   std::to_string(d.z) + ")");
    }
  }
  if (launch.shared_memory_bytes < 0) return Error("negative shared memory size");
  return Status::Ok();
}

Status ValidateProgram(const ThunkProgram& program) { return Validator(program).Run(); }

}  // namespace kiln::thunks
