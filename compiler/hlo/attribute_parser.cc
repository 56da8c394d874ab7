// Attribute value parsing for HLO instructions.
//
// The attribute's name decides its type (as in XLA, where each opcode
// declares its attributes): integer lists for dimension numbers, windows,
// dim labels, padding, slices, replica groups, computation references,
// scalars and enum words. Names kiln does not interpret keep their value's
// verbatim text (RawAttr) so that printing reproduces it.
#include <string>
#include <unordered_map>

#include "compiler/hlo/parse_context.h"

namespace kiln::hlo::internal {
namespace {

enum class AttrKind : uint8_t {
  kRaw, kIntList, kInt, kFloat, kBool, kString, kStringOrRaw, kEnum, kSlice, kWindow,
  kDimLabels, kPadding, kReplicaGroups, kIntListList, kComputations,
};

AttrKind Classify(std::string_view name) {
  static const std::unordered_map<std::string_view, AttrKind> kKinds = {
      {"dimensions", AttrKind::kIntList}, {"slice_sizes", AttrKind::kIntList},
      {"dynamic_slice_sizes", AttrKind::kIntList}, {"fft_length", AttrKind::kIntList},
      {"start_index_map", AttrKind::kIntList},
      {"index", AttrKind::kInt}, {"iota_dimension", AttrKind::kInt},
      {"feature_group_count", AttrKind::kInt}, {"batch_group_count", AttrKind::kInt},
      {"index_vector_dim", AttrKind::kInt}, {"channel_id", AttrKind::kInt},
      {"exponent_bits", AttrKind::kInt}, {"mantissa_bits", AttrKind::kInt},
      {"split_dimension", AttrKind::kInt}, {"split_count", AttrKind::kInt},
      {"concat_dimension", AttrKind::kInt}, {"k", AttrKind::kInt},
      {"feature_index", AttrKind::kInt}, {"delta", AttrKind::kInt},
      {"tuple_index", AttrKind::kInt}, {"all_gather_dimension", AttrKind::kInt},
      {"cross_program_prefetch_index", AttrKind::kInt},
      {"epsilon", AttrKind::kFloat},
      {"indices_are_sorted", AttrKind::kBool}, {"unique_indices", AttrKind::kBool},
      {"is_stable", AttrKind::kBool}, {"use_global_device_ids", AttrKind::kBool},
      {"constrain_layout", AttrKind::kBool}, {"largest", AttrKind::kBool},
      {"left_side", AttrKind::kBool}, {"lower", AttrKind::kBool},
      {"unit_diagonal", AttrKind::kBool}, {"custom_call_has_side_effect", AttrKind::kBool},
      {"is_host_transfer", AttrKind::kBool}, {"is_cross_program_prefetch", AttrKind::kBool},
      {"descending", AttrKind::kBool}, {"radix_order", AttrKind::kString},
      {"custom_call_target", AttrKind::kString}, {"backend_config", AttrKind::kStringOrRaw},
      {"direction", AttrKind::kEnum}, {"type", AttrKind::kEnum}, {"fft_type", AttrKind::kEnum},
      {"kind", AttrKind::kEnum}, {"distribution", AttrKind::kEnum},
      {"algorithm", AttrKind::kEnum}, {"transpose_a", AttrKind::kEnum},
      {"api_version", AttrKind::kEnum}, {"padding_type", AttrKind::kEnum},
      {"custom_call_schedule", AttrKind::kEnum},
      {"slice", AttrKind::kSlice}, {"window", AttrKind::kWindow},
      {"dim_labels", AttrKind::kDimLabels}, {"padding", AttrKind::kPadding},
      {"replica_groups", AttrKind::kReplicaGroups},
      {"source_target_pairs", AttrKind::kIntListList},
      {"to_apply", AttrKind::kComputations}, {"calls", AttrKind::kComputations},
      {"condition", AttrKind::kComputations}, {"body", AttrKind::kComputations},
      {"true_computation", AttrKind::kComputations},
      {"false_computation", AttrKind::kComputations},
      {"branch_computations", AttrKind::kComputations}, {"select", AttrKind::kComputations},
      {"scatter", AttrKind::kComputations}, {"called_computations", AttrKind::kComputations},
  };
  auto it = kKinds.find(name);
  if (it != kKinds.end()) return it->second;
  constexpr std::string_view kDimsSuffix = "_dims";
  if (name.size() > kDimsSuffix.size() &&
      name.substr(name.size() - kDimsSuffix.size()) == kDimsSuffix)
    return AttrKind::kIntList;
  return AttrKind::kRaw;
}

// Splits `text` on `sep` into integers; false on any malformed piece.
bool SplitInts(std::string_view text, char sep, std::vector<int64_t>* out) {
  while (true) {
    size_t cut = text.find(sep);
    int64_t v;
    if (!ParseInt64Text(text.substr(0, cut), &v)) return false;
    out->push_back(v);
    if (cut == std::string_view::npos) return true;
    text.remove_prefix(cut + 1);
  }
}

// Splits on 'x' into groups, each group split on '_' into 2 or 3 integers
// (window pads, padding configs); -1 for a missing interior value.
bool SplitPads(std::string_view text, size_t min_parts, size_t max_parts,
               std::vector<std::vector<int64_t>>* out) {
  while (true) {
    size_t cut = text.find('x');
    std::vector<int64_t> parts;
    if (!SplitInts(text.substr(0, cut), '_', &parts) || parts.size() < min_parts ||
        parts.size() > max_parts)
      return false;
    out->push_back(std::move(parts));
    if (cut == std::string_view::npos) return true;
    text.remove_prefix(cut + 1);
  }
}

StatusOr<Window> ParseWindow(ParseContext& ctx) {
  SourcePos start = ctx.pos();
  KILN_RETURN_IF_ERROR(ctx.Expect(TokKind::kLBrace, "'{' to start the window"));
  std::vector<int64_t> size, stride, lhs, rhs, reversal;
  std::vector<std::vector<int64_t>> pad;
  bool seen[6] = {};
  while (!ctx.EatIf(TokKind::kRBrace)) {
    SourcePos p = ctx.pos();
    KILN_ASSIGN_OR_RETURN(std::string_view key, ctx.ParseName("a window field or '}'"));
    KILN_RETURN_IF_ERROR(ctx.Expect(TokKind::kEqual, "'=' after window field"));
    SourcePos vpos = ctx.pos();
    std::string_view value = ctx.lex().ScanAtom();
    int slot;
    bool ok;
    if (key == "size") slot = 0, ok = SplitInts(value, 'x', &size);
    else if (key == "stride") slot = 1, ok = SplitInts(value, 'x', &stride);
    else if (key == "pad") slot = 2, ok = SplitPads(value, 2, 2, &pad);
    else if (key == "lhs_dilate") slot = 3, ok = SplitInts(value, 'x', &lhs);
    else if (key == "rhs_dilate") slot = 4, ok = SplitInts(value, 'x', &rhs);
    else if (key == "rhs_reversal") slot = 5, ok = SplitInts(value, 'x', &reversal);
    else return ctx.ErrorAt(p, "unknown window field '" + std::string(key) + "'");
    if (seen[slot]) return ctx.ErrorAt(p, "window field '" + std::string(key) + "' repeated");
    seen[slot] = true;
    if (!ok) return ctx.ErrorAt(vpos, "malformed window " + std::string(key) + " value");
  }
  auto check = [&](size_t n, const char* what) -> Status {
    if (n != 0 && n != size.size())
      return ctx.ErrorAt(start, std::string("window ") + what + " has " + std::to_string(n) +
                                    " dimensions but size has " + std::to_string(size.size()));
    return Status::Ok();
  };
  KILN_RETURN_IF_ERROR(check(stride.size(), "stride"));
  KILN_RETURN_IF_ERROR(check(pad.size(), "pad"));
  KILN_RETURN_IF_ERROR(check(lhs.size(), "lhs_dilate"));
  KILN_RETURN_IF_ERROR(check(rhs.size(), "rhs_dilate"));
  KILN_RETURN_IF_ERROR(check(reversal.size(), "rhs_reversal"));
  Window w;
  for (size_t i = 0; i < size.size(); ++i) {
    WindowDim d;
    d.size = size[i];
    if (!stride.empty()) d.stride = stride[i];
    if (!pad.empty()) d.pad_low = pad[i][0], d.pad_high = pad[i][1];
    if (!lhs.empty()) d.lhs_dilation = lhs[i];
    if (!rhs.empty()) d.rhs_dilation = rhs[i];
    if (!reversal.empty()) {
      if (reversal[i] != 0 && reversal[i] != 1)
        return ctx.ErrorAt(start, "window rhs_reversal values must be 0 or 1");
      d.reversal = reversal[i] == 1;
    }
    w.dims.push_back(d);
  }
  return w;
}

// One side of dim labels: `batch`/`feature` letters, digits for spatial
// dimensions in order, '?' for dimensions with no role.
bool ParseLabels(std::string_view s, char first, char second, int64_t* a, int64_t* b,
                 std::vector<int64_t>* spatial) {
  int64_t n_spatial = 0;
  for (char c : s)
    if (c != first && c != second && c != '?') ++n_spatial;
  spatial->assign(n_spatial, -1);
  bool seen_a = false, seen_b = false;
  for (size_t i = 0; i < s.size(); ++i) {
    char c = s[i];
    if (c == '?') continue;
    if (c == first) {
      if (seen_a) return false;
      seen_a = true;
      *a = static_cast<int64_t>(i);
    } else if (c == second) {
      if (seen_b) return false;
      seen_b = true;
      *b = static_cast<int64_t>(i);
    } else if (c >= '0' && c <= '9' && c - '0' < n_spatial) {
      int64_t& slot = (*spatial)[c - '0'];
      if (slot != -1) return false;
      slot = static_cast<int64_t>(i);
    } else {
      return false;
    }
  }
  return seen_a && seen_b;
}

StatusOr<ConvDimensionNumbers> ParseDimLabels(ParseContext& ctx) {
  SourcePos pos = ctx.pos();
  std::string_view text = ctx.lex().ScanAtom();
  size_t us = text.find('_');
  size_t arrow = text.find("->");
  auto bad = [&](const std::string& why) {
    return ctx.ErrorAt(pos, "malformed dim_labels '" + std::string(text.substr(0, 60)) +
                                "': " + why);
  };
  if (us == std::string_view::npos || arrow == std::string_view::npos || arrow < us)
    return bad("expected lhs_rhs->out");
  ConvDimensionNumbers d;
  if (!ParseLabels(text.substr(0, us), 'b', 'f', &d.input_batch, &d.input_feature,
                   &d.input_spatial))
    return bad("bad input labels");
  if (!ParseLabels(text.substr(us + 1, arrow - us - 1), 'i', 'o', &d.kernel_input_feature,
                   &d.kernel_output_feature, &d.kernel_spatial))
    return bad("bad kernel labels");
  if (!ParseLabels(text.substr(arrow + 2), 'b', 'f', &d.output_batch, &d.output_feature,
                   &d.output_spatial))
    return bad("bad output labels");
  if (d.input_spatial.size() != d.kernel_spatial.size() ||
      d.input_spatial.size() != d.output_spatial.size())
    return bad("input, kernel and output must have the same number of spatial dimensions");
  return d;
}

StatusOr<PaddingConfig> ParsePadding(ParseContext& ctx) {
  SourcePos pos = ctx.pos();
  std::string_view text = ctx.lex().ScanAtom();
  std::vector<std::vector<int64_t>> parts;
  if (!SplitPads(text, 2, 3, &parts))
    return ctx.ErrorAt(pos, "malformed padding '" + std::string(text.substr(0, 60)) +
                                "', expected low_high_interior x ...");
  PaddingConfig config;
  for (const auto& p : parts) {
    if (p.size() == 3 && p[2] < 0) return ctx.ErrorAt(pos, "interior padding must be >= 0");
    config.dims.push_back({p[0], p[1], p.size() == 3 ? p[2] : 0});
  }
  return config;
}

StatusOr<std::vector<SliceDim>> ParseSlice(ParseContext& ctx) {
  KILN_RETURN_IF_ERROR(ctx.Expect(TokKind::kLBrace, "'{' to start the slice"));
  std::vector<SliceDim> dims;
  if (ctx.EatIf(TokKind::kRBrace)) return dims;
  while (true) {
    SourcePos p = ctx.pos();
    std::vector<int64_t> v;
    KILN_RETURN_IF_ERROR(ctx.ParseIntList(TokKind::kLSquare, TokKind::kRSquare, TokKind::kColon, &v));
    if (v.size() != 2 && v.size() != 3)
      return ctx.ErrorAt(p, "expected [start:limit] or [start:limit:stride]");
    dims.push_back({v[0], v[1], v.size() == 3 ? v[2] : 1});
    if (!ctx.EatIf(TokKind::kComma)) break;
  }
  KILN_RETURN_IF_ERROR(ctx.Expect(TokKind::kRBrace, "'}' to end the slice"));
  return dims;
}

StatusOr<IntListList> ParseIntListList(ParseContext& ctx) {
  KILN_RETURN_IF_ERROR(ctx.Expect(TokKind::kLBrace, "'{'"));
  IntListList result;
  if (ctx.EatIf(TokKind::kRBrace)) return result;
  while (true) {
    std::vector<int64_t> list;
    KILN_RETURN_IF_ERROR(ctx.ParseIntList(TokKind::kLBrace, TokKind::kRBrace, TokKind::kComma, &list));
    result.lists.push_back(std::move(list));
    if (!ctx.EatIf(TokKind::kComma)) break;
  }
  KILN_RETURN_IF_ERROR(ctx.Expect(TokKind::kRBrace, "'}'"));
  return result;
}

StatusOr<ReplicaGroups> ParseReplicaGroups(ParseContext& ctx) {
  ReplicaGroups groups;
  if (ctx.kind() == TokKind::kLBrace) {
    KILN_ASSIGN_OR_RETURN(IntListList lists, ParseIntListList(ctx));
    groups.groups = std::move(lists.lists);
    return groups;
  }
  SourcePos pos = ctx.pos();
  KILN_RETURN_IF_ERROR(ctx.ParseIntList(TokKind::kLSquare, TokKind::kRSquare, TokKind::kComma,
                                        &groups.iota_group_shape));
  KILN_RETURN_IF_ERROR(ctx.Expect(TokKind::kLeq, "'<=' in iota replica groups"));
  KILN_RETURN_IF_ERROR(ctx.ParseIntList(TokKind::kLSquare, TokKind::kRSquare, TokKind::kComma,
                                        &groups.iota_reshape_dims));
  if (ctx.AtWord("T") && ctx.lex().FollowedBy('(')) {
    ctx.lex().Lex();
    KILN_RETURN_IF_ERROR(ctx.ParseIntList(TokKind::kLParen, TokKind::kRParen, TokKind::kComma,
                                          &groups.iota_transpose_perm));
  }
  Status s = MaterializeIotaGroups(groups);
  if (!s.ok()) return ctx.ErrorAt(pos, s.message());
  return groups;
}

StatusOr<ComputationRefs> ParseComputationRefs(ParseContext& ctx,
                                               std::vector<ComputationName>* names) {
  auto one = [&]() -> Status {
    SourcePos p = ctx.pos();
    KILN_ASSIGN_OR_RETURN(std::string_view name, ctx.ParseName("a computation name"));
    names->push_back({name, p});
    return Status::Ok();
  };
  if (ctx.EatIf(TokKind::kLBrace)) {
    if (!ctx.EatIf(TokKind::kRBrace)) {
      while (true) {
        KILN_RETURN_IF_ERROR(one());
        if (!ctx.EatIf(TokKind::kComma)) break;
      }
      KILN_RETURN_IF_ERROR(ctx.Expect(TokKind::kRBrace, "'}' after computation names"));
    }
  } else {
    KILN_RETURN_IF_ERROR(one());
  }
  return ComputationRefs{};
}

}  // namespace

Status MaterializeIotaGroups(ReplicaGroups& groups) {
  const auto& shape = groups.iota_group_shape;
  const auto& dims = groups.iota_reshape_dims;
  const auto& perm = groups.iota_transpose_perm;
  if (shape.size() != 2) return Error("iota replica groups need [num_groups,group_size]");
  constexpr int64_t kMaxDevices = int64_t{1} << 20;
  int64_t total = 1;
  for (int64_t d : dims) {
    if (d < 0 || (d > 0 && total > kMaxDevices / d))
      return Error("iota replica groups: bad or too many devices");
    total *= d;
  }
  // Both factors are bounded too: [huge,0]<=[0] must not allocate huge
  // numbers of empty groups.
  if (shape[0] < 0 || shape[1] < 0 || shape[0] > kMaxDevices || shape[1] > kMaxDevices ||
      shape[0] * shape[1] != total)
    return Error("iota replica groups: group shape does not match the device count " +
                 std::to_string(total));
  if (!perm.empty()) {
    if (perm.size() != dims.size()) return Error("iota transpose has the wrong rank");
    std::vector<bool> seen(perm.size(), false);
    for (int64_t p : perm) {
      if (p < 0 || p >= static_cast<int64_t>(perm.size()) || seen[p])
        return Error("iota transpose is not a permutation");
      seen[p] = true;
    }
  }
  // Device ids: iota over `dims`, transposed by `perm`, read in row-major
  // order. Element j of the transposed array is source index s with
  // s[perm[i]] = j[i].
  std::vector<int64_t> tdims(dims.size());
  for (size_t i = 0; i < dims.size(); ++i) tdims[i] = perm.empty() ? dims[i] : dims[perm[i]];
  std::vector<int64_t> strides = RowMajorStrides(dims);
  std::vector<int64_t> ids;
  ids.reserve(total);
  if (total > 0) {
    std::vector<int64_t> j(dims.size(), 0);
    do {
      int64_t id = 0;
      for (size_t i = 0; i < j.size(); ++i)
        id += j[i] * strides[perm.empty() ? i : static_cast<size_t>(perm[i])];
      ids.push_back(id);
    } while (NextIndex(tdims, j));
  }
  groups.groups.assign(shape[0], {});
  for (int64_t g = 0; g < shape[0]; ++g)
    groups.groups[g].assign(ids.begin() + g * shape[1], ids.begin() + (g + 1) * shape[1]);
  return Status::Ok();
}

StatusOr<std::string_view> ParseRawValue(ParseContext& ctx) {
  SourcePos pos = ctx.pos();
  std::string_view text;
  const char* error = nullptr;
  if (!ctx.lex().ScanBalanced(kMaxNestingDepth, &text, &error))
    return ctx.ErrorAt(pos, std::string("malformed attribute value: ") + error);
  if (text.empty()) return ctx.ErrorAt(pos, "expected an attribute value");
  return text;
}

StatusOr<AttrValue> ParseAttributeValue(ParseContext& ctx, std::string_view name,
                                        std::vector<ComputationName>* computation_names) {
  switch (Classify(name)) {
    case AttrKind::kIntList: {
      std::vector<int64_t> v;
      KILN_RETURN_IF_ERROR(ctx.ParseIntList(TokKind::kLBrace, TokKind::kRBrace, TokKind::kComma, &v));
      return AttrValue(std::move(v));
    }
    case AttrKind::kInt: {
      KILN_ASSIGN_OR_RETURN(int64_t v, ctx.ParseInt64());
      return AttrValue(v);
    }
    case AttrKind::kFloat: {
      KILN_ASSIGN_OR_RETURN(double v, ctx.ParseDouble());
      return AttrValue(v);
    }
    case AttrKind::kBool: {
      KILN_ASSIGN_OR_RETURN(bool v, ctx.ParseBool());
      return AttrValue(v);
    }
    case AttrKind::kString:
    case AttrKind::kStringOrRaw: {
      if (ctx.kind() == TokKind::kString) {
        StringAttr s{Unescape(ctx.tok().text)};
        ctx.lex().Lex();
        return AttrValue(std::move(s));
      }
      if (Classify(name) == AttrKind::kString) return ctx.TokenError("expected a quoted string");
      KILN_ASSIGN_OR_RETURN(std::string_view raw, ParseRawValue(ctx));
      return AttrValue(RawAttr{std::string(raw)});
    }
    case AttrKind::kEnum: {
      if (ctx.kind() != TokKind::kIdent) return ctx.TokenError("expected a word");
      EnumAttr e{std::string(ctx.tok().text)};
      ctx.lex().Lex();
      return AttrValue(std::move(e));
    }
    case AttrKind::kSlice: {
      KILN_ASSIGN_OR_RETURN(std::vector<SliceDim> v, ParseSlice(ctx));
      return AttrValue(std::move(v));
    }
    case AttrKind::kWindow: {
      KILN_ASSIGN_OR_RETURN(Window v, ParseWindow(ctx));
      return AttrValue(std::move(v));
    }
    case AttrKind::kDimLabels: {
      KILN_ASSIGN_OR_RETURN(ConvDimensionNumbers v, ParseDimLabels(ctx));
      return AttrValue(std::move(v));
    }
    case AttrKind::kPadding: {
      KILN_ASSIGN_OR_RETURN(PaddingConfig v, ParsePadding(ctx));
      return AttrValue(std::move(v));
    }
    case AttrKind::kReplicaGroups: {
      KILN_ASSIGN_OR_RETURN(ReplicaGroups v, ParseReplicaGroups(ctx));
      return AttrValue(std::move(v));
    }
    case AttrKind::kIntListList: {
      KILN_ASSIGN_OR_RETURN(IntListList v, ParseIntListList(ctx));
      return AttrValue(std::move(v));
    }
    case AttrKind::kComputations: {
      KILN_ASSIGN_OR_RETURN(ComputationRefs v, ParseComputationRefs(ctx, computation_names));
      return AttrValue(std::move(v));
    }
    case AttrKind::kRaw:
      break;
  }
  KILN_ASSIGN_OR_RETURN(std::string_view raw, ParseRawValue(ctx));
  return AttrValue(RawAttr{std::string(raw)});
}

}  // namespace kiln::hlo::internal
