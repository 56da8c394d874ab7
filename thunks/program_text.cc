// Text form of thunk programs (see program_text.h).
#include "thunks/program_text.h"

#include <cstdio>

#include "thunks/streams.h"

namespace kiln::thunks {
namespace {

std::string Pad(int n) { return std::string(static_cast<size_t>(n), ' '); }

std::string Ints(const std::vector<int64_t>& v, const char* open = "[",
                 const char* close = "]") {
  std::string s = open;
  for (size_t i = 0; i < v.size(); ++i) {
    if (i) s += ",";
    s += std::to_string(v[i]);
  }
  return s + close;
}

std::string Dims(const Dim3& d) {
  return "(" + std::to_string(d.x) + "," + std::to_string(d.y) + "," + std::to_string(d.z) + ")";
}

std::string Slices(const std::vector<BufferSlice>& slices) {
  std::string s = "[";
  for (size_t i = 0; i < slices.size(); ++i) {
    if (i) s += ", ";
    s += slices[i].ToString();
  }
  return s + "]";
}

std::string FormatDouble(double v) {
  char buf[32];
  std::snprintf(buf, sizeof buf, "%.9g", v);
  return buf;
}

std::string Window(const std::vector<WindowDimension>& window) {
  std::string size, stride, pad, lhs, rhs;
  for (size_t i = 0; i < window.size(); ++i) {
    const WindowDimension& w = window[i];
    const char* sep = i ? "x" : "";
    size += sep + std::to_string(w.size);
    stride += sep + std::to_string(w.stride);
    pad += sep + std::to_string(w.padding_low) + "_" + std::to_string(w.padding_high);
    lhs += sep + std::to_string(w.lhs_dilation);
    rhs += sep + std::to_string(w.rhs_dilation);
  }
  return "{size=" + size + " stride=" + stride + " pad=" + pad + " lhs_dilate=" + lhs +
         " rhs_dilate=" + rhs + "}";
}

// " label={{0,1},{2,3}}", or nothing for no groups.
std::string Groups(const char* label, const std::vector<std::vector<int64_t>>& groups) {
  if (groups.empty()) return "";
  std::string s = std::string(" ") + label + "={";
  for (size_t i = 0; i < groups.size(); ++i) s += (i ? "," : "") + Ints(groups[i], "{", "}");
  return s + "}";
}

std::string Config(const CollectiveConfig& c) {
  std::string s = Groups("groups", c.replica_groups);
  if (c.channel_id) s += " channel=" + std::to_string(*c.channel_id);
  if (c.use_global_device_ids) s += " global_ids";
  s += Groups("devices", c.device_groups);
  if (c.async_id) s += " async=" + std::to_string(*c.async_id);
  return s;
}

std::string Buffers(const std::vector<CollectiveBuffer>& buffers) {
  std::string s = " buffers=[";
  for (size_t i = 0; i < buffers.size(); ++i) {
    const CollectiveBuffer& b = buffers[i];
    if (i) s += ", ";
    s += std::string(ElementTypeName(b.element_type)) + "x" + std::to_string(b.element_count) +
         " " + b.source.ToString() + " -> " + b.destination.ToString();
  }
  return s + "]";
}

std::string Body(const KernelThunk& k, const ThunkInfo& info) {
  std::string s;
  if (k.kernel_name != info.profile_name) s += " fn=" + k.kernel_name;
  s += " grid=" + Dims(k.launch.grid) + " block=" + Dims(k.launch.block);
  if (k.launch.shared_memory_bytes) s += " smem=" + std::to_string(k.launch.shared_memory_bytes);
  s += " args=[";
  for (size_t i = 0; i < k.args.size(); ++i) {
    if (i) s += ", ";
    s += k.args[i].slice.ToString();
    if (k.args[i].written) s += " (written)";
  }
  return s + "]";
}

std::string Body(const GemmThunk& g, const ThunkInfo&) {
  std::string s = " lhs=" + g.lhs.ToString() + (g.lhs_transposed ? "^T" : "") +
                  " rhs=" + g.rhs.ToString() + (g.rhs_transposed ? "^T" : "") +
                  " out=" + g.out.ToString();
  s += " types=" + std::string(ElementTypeName(g.lhs_type)) + "," +
       std::string(ElementTypeName(g.rhs_type)) + "->" + std::string(ElementTypeName(g.out_type));
  s += " m=" + std::to_string(g.m) + " n=" + std::to_string(g.n) + " k=" + std::to_string(g.k) +
       " batch=" + std::to_string(g.batch);
  s += " ld=" + Ints({g.lhs_leading_dim, g.rhs_leading_dim, g.out_leading_dim}, "(", ")");
  if (g.batch > 1) {
    s += " batch_stride=" +
         Ints({g.lhs_batch_stride, g.rhs_batch_stride, g.out_batch_stride}, "(", ")");
  }
  s += " alpha=" + FormatDouble(g.alpha_real);
  if (g.alpha_imag != 0) s += (g.alpha_imag > 0 ? "+" : "") + FormatDouble(g.alpha_imag) + "i";
  s += " beta=" + FormatDouble(g.beta);
  if (g.tf32) s += " tf32";
  if (IsFp8Gemm(g)) s += " fp8=cublaslt";  // the FP8 tensor cores through cuBLASLt on CUDA
  if (g.workspace) s += " workspace=" + g.workspace->ToString();
  return s;
}

std::string Body(const ConvolutionThunk& c, const ThunkInfo&) {
  std::string s = " kind=" + std::string(ConvolutionKindName(c.kind)) + " operands=[";
  for (size_t i = 0; i < c.operands.size(); ++i) {
    if (i) s += ", ";
    s += c.operands[i].ToString();
    if (i < c.operand_shapes.size()) s += " " + c.operand_shapes[i].ToString();
  }
  s += "] result=" + c.result.ToString() + " " + c.result_shape.ToString();
  s += " window=" + Window(c.window);
  const ConvolutionDimensions& d = c.dimensions;
  s += " dims={in b=" + std::to_string(d.input_batch) + " f=" + std::to_string(d.input_feature) +
       " s=" + Ints(d.input_spatial) + "; kernel i=" + std::to_string(d.kernel_input_feature) +
       " o=" + std::to_string(d.kernel_output_feature) + " s=" + Ints(d.kernel_spatial) +
       "; out b=" + std::to_string(d.output_batch) + " f=" + std::to_string(d.output_feature) +
       " s=" + Ints(d.output_spatial) + "}";
  if (c.feature_group_count != 1) s += " feature_groups=" + std::to_string(c.feature_group_count);
  if (c.batch_group_count != 1) s += " batch_groups=" + std::to_string(c.batch_group_count);
  if (c.scratch) s += " scratch=" + c.scratch->ToString();
  return s;
}

std::string Body(const FftThunk& f, const ThunkInfo&) {
  return " type=" + std::string(FftTypeName(f.type)) + " length=" + Ints(f.fft_length) +
         " in=" + f.input.ToString() + " " + f.input_shape.ToString() +
         " out=" + f.output.ToString() + " " + f.output_shape.ToString();
}

std::string Body(const CholeskyThunk& c, const ThunkInfo&) {
  return std::string(" ") + (c.lower ? "lower" : "upper") + " a=" + c.a.ToString() +
         " info=" + c.info.ToString() + " type=" + std::string(ElementTypeName(c.type)) +
         " n=" + std::to_string(c.n) + " batch=" + std::to_string(c.batch);
}

std::string Body(const RadixSortThunk& r, const ThunkInfo&) {
  std::string s = std::string(" ") + (r.descending ? "descending" : "ascending") + " " +
                  std::string(RadixKeyOrderName(r.order)) + " keys=" + r.keys.ToString() + " -> " +
                  r.keys_out.ToString() + " key_type=" + std::string(ElementTypeName(r.key_type));
  if (r.values)
    s += " values=" + r.values->ToString() + " -> " + (r.values_out ? r.values_out->ToString() : "?") +
         " value_type=" + std::string(ElementTypeName(r.value_type));
  return s + " rows=" + std::to_string(r.rows) + " row_length=" + std::to_string(r.row_length);
}

std::string Body(const TriangularSolveThunk& t, const ThunkInfo&) {
  std::string s = std::string(" ") + (t.left_side ? "left" : "right") + " " +
                  (t.lower ? "lower" : "upper") + " " +
                  std::string(TriangularSolveTransposeName(t.transpose_a));
  if (t.unit_diagonal) s += " unit_diagonal";
  return s + " a=" + t.a.ToString() + " b=" + t.b.ToString() +
         " type=" + std::string(ElementTypeName(t.type)) + " m=" + std::to_string(t.m) +
         " n=" + std::to_string(t.n) + " batch=" + std::to_string(t.batch);
}

std::string Body(const LinalgThunk& l, const ThunkInfo&) {
  std::string s = " " + std::string(LinalgOpName(l.op)) + " a=" + l.a.ToString();
  if (l.op == LinalgOp::kOrgqr) s += " tau=" + l.tau.ToString() + " k=" + std::to_string(l.k);
  for (const BufferSlice& r : l.results) s += " " + r.ToString();
  if (l.op == LinalgOp::kSyevd) s += l.lower ? " lower" : " upper";
  if (l.mode) s += std::string(" mode=") + l.mode;
  return s + " type=" + std::string(ElementTypeName(l.type)) + " m=" + std::to_string(l.m) +
         " n=" + std::to_string(l.n) + " batch=" + std::to_string(l.batch);
}

std::string Body(const CopyThunk& c, const ThunkInfo&) {
  return " " + c.source.ToString() + " -> " + c.destination.ToString();
}

std::string Body(const MemsetThunk& m, const ThunkInfo&) {
  char pattern[16];
  std::snprintf(pattern, sizeof pattern, "0x%08x", m.pattern);
  return " " + m.destination.ToString() + " pattern=" + pattern;
}

std::string Body(const SequenceThunk& s, const ThunkInfo&) {
  return " (" + std::to_string(s.thunks.size()) + " thunks)";
}

std::string Body(const WhileThunk& w, const ThunkInfo&) {
  std::string s = " pred=" + w.predicate.ToString();
  if (w.trip_count) s += " trip_count=" + std::to_string(*w.trip_count);
  return s;
}

std::string Body(const ConditionalThunk& c, const ThunkInfo&) {
  return std::string(c.is_pred ? " pred=" : " index=") + c.branch_index.ToString() +
         " branches=" + std::to_string(c.branches.size());
}

std::string Body(const AllReduceThunk& t, const ThunkInfo&) {
  return " reduction=" + std::string(ReductionKindName(t.reduction)) + Config(t.config) +
         Buffers(t.buffers);
}
std::string Body(const AllGatherThunk& t, const ThunkInfo&) {
  return " dimension=" + std::to_string(t.dimension) + Config(t.config) + Buffers(t.buffers);
}
std::string Body(const ReduceScatterThunk& t, const ThunkInfo&) {
  return " reduction=" + std::string(ReductionKindName(t.reduction)) +
         " dimension=" + std::to_string(t.dimension) + Config(t.config) + Buffers(t.buffers);
}
std::string Body(const AllToAllThunk& t, const ThunkInfo&) {
  std::string s;
  if (t.split_dimension) s += " split_dimension=" + std::to_string(*t.split_dimension);
  return s + Config(t.config) + Buffers(t.buffers);
}
std::string Body(const CollectivePermuteThunk& t, const ThunkInfo&) {
  std::string s = " pairs={";
  for (size_t i = 0; i < t.source_target_pairs.size(); ++i) {
    if (i) s += ",";
    s += "{" + std::to_string(t.source_target_pairs[i].first) + "," +
         std::to_string(t.source_target_pairs[i].second) + "}";
  }
  s += "}" + Config(t.config) + Buffers({t.buffer}) + " device_pairs={";
  for (size_t i = 0; i < t.device_pairs.size(); ++i) {
    if (i) s += ",";
    s += "{" + std::to_string(t.device_pairs[i].first) + "," + std::to_string(t.device_pairs[i].second) + "}";
  }
  return s + "}";
}
std::string Body(const CollectiveBroadcastThunk& t, const ThunkInfo&) {
  return Config(t.config) + Buffers(t.buffers);
}
std::string Body(const CollectiveDoneThunk& t, const ThunkInfo&) {
  return " async=" + std::to_string(t.async_id);
}
std::string Body(const DeviceIdThunk& t, const ThunkInfo&) {
  return " " + std::string(DeviceIdKindName(t.kind)) + " -> " + t.destination.ToString();
}
std::string Body(const RngGetAndUpdateStateThunk& r, const ThunkInfo&) {
  return " " + r.state.ToString() + " delta=" + std::to_string(r.delta);
}
std::string Body(const CustomCallThunk& c, const ThunkInfo&) {
  std::string s = " target=\"" + EscapeForDisplay(c.target) + "\" operands=" +
                  Slices(c.operands) + " results=" + Slices(c.results);
  if (!c.backend_config.empty()) {
    constexpr size_t kMaxShown = 80;
    std::string shown = EscapeForDisplay(c.backend_config.substr(0, kMaxShown));
    if (c.backend_config.size() > kMaxShown) shown += "...";
    s += " config=\"" + shown + "\"";
  }
  if (c.api_version) s += " api_version=" + std::to_string(c.api_version);
  return s;
}

// Labels of the nested sequences of a control-flow thunk, in
// ChildSequences() order.
std::vector<std::string> ChildLabels(const Thunk& thunk) {
  if (thunk.As<WhileThunk>()) return {"condition:", "body:"};
  std::vector<std::string> labels;
  if (const auto* c = thunk.As<ConditionalThunk>()) {
    for (size_t i = 0; i < c->branches.size(); ++i) {
      labels.push_back("branch " + std::to_string(i) + ":");
    }
  }
  return labels;
}

void AppendTree(const SequenceThunk& seq, int indent, std::string& out) {
  for (const Thunk& thunk : seq.thunks) {
    out += Pad(indent) + ThunkLine(thunk) + "\n";
    const std::vector<const SequenceThunk*> children = ChildSequences(thunk);
    const std::vector<std::string> labels = ChildLabels(thunk);
    for (size_t i = 0; i < children.size(); ++i) {
      if (i < labels.size()) {
        out += Pad(indent + 2) + labels[i] + "\n";
        AppendTree(*children[i], indent + 4, out);
      } else {
        AppendTree(*children[i], indent + 2, out);  // a plain nested sequence
      }
    }
  }
}

std::string LeafLine(const ShapeIndex& index, const BufferSlice& slice) {
  return ShapeIndexToString(index) + " -> " + slice.ToString();
}

}  // namespace

std::string EscapeForDisplay(std::string_view s) {
  std::string out;
  for (unsigned char c : s) {
    switch (c) {
      case '"': out += "\\\""; break;
      case '\\': out += "\\\\"; break;
      case '\n': out += "\\n"; break;
      case '\t': out += "\\t"; break;
      default:
        if (c < 0x20 || c >= 0x7f) {
          char buf[8];
          std::snprintf(buf, sizeof buf, "\\x%02x", c);
          out += buf;
        } else {
          out += static_cast<char>(c);
        }
    }
  }
  return out;
}

std::string QuoteForMessage(std::string_view s, size_t max_chars) {
  if (s.size() <= max_chars) return "'" + EscapeForDisplay(s) + "'";
  return "'" + EscapeForDisplay(s.substr(0, max_chars)) + "...'";
}

std::string ThunkLine(const Thunk& thunk) {
  std::string line(ThunkKindName(thunk.kind()));
  if (!thunk.info.profile_name.empty()) line += " " + thunk.info.profile_name;
  line += std::visit([&](const auto& body) { return Body(body, thunk.info); }, thunk.body);
  line += StreamAnnotation(thunk);
  if (!thunk.info.hlo.empty()) {
    line += "  ; hlo: ";
    for (size_t i = 0; i < thunk.info.hlo.size(); ++i) {
      if (i) line += ", ";
      line += thunk.info.hlo[i].name;
    }
  }
  return line;
}

std::string ThunkTreeToText(const SequenceThunk& root, int indent) {
  std::string out;
  AppendTree(root, indent, out);
  return out;
}

std::string SignatureToText(const ThunkProgram& program, int indent) {
  const Signature& sig = program.signature;
  std::string out;
  for (size_t i = 0; i < sig.parameters.size(); ++i) {
    out += Pad(indent) + "parameter " + std::to_string(i) + ": " + sig.parameters[i].ToString() +
           "\n";
    for (const ParameterLeaf& leaf : sig.parameter_leaves) {
      if (leaf.parameter_number == static_cast<int64_t>(i)) {
        out += Pad(indent + 2) + LeafLine(leaf.index, leaf.slice) + "\n";
      }
    }
  }
  out += Pad(indent) + "result: " + sig.result.ToString() + "\n";
  for (const ResultLeaf& leaf : sig.result_leaves) {
    out += Pad(indent + 2) + LeafLine(leaf.index, leaf.slice) + "\n";
  }
  for (const DynamicDimension& d : sig.dynamic_dimensions) {
    const char* list = d.of_result ? "result" : "parameter";
    out += Pad(indent) + "dynamic: " + list + " leaf " + std::to_string(d.leaf) + " dimension " +
           std::to_string(d.dimension) + " sized by " + list + " leaf " + std::to_string(d.size_leaf) +
           "\n";
  }
  for (const InputOutputAlias& a : sig.aliases) {
    out += Pad(indent) + "alias: output " + ShapeIndexToString(a.output_index) + " <- parameter " +
           std::to_string(a.parameter_number) + " " + ShapeIndexToString(a.parameter_index) +
           (a.must_alias ? " (must-alias)" : " (may-alias)") + "\n";
  }
  return out;
}

std::string AllocationsToText(const ThunkProgram& program, int indent) {
  std::string out;
  for (size_t i = 0; i < program.allocations.size(); ++i) {
    out += Pad(indent) + "a" + std::to_string(i) + " " + program.allocations[i].ToString() + "\n";
  }
  return out;
}

std::string ConstantsToText(const ThunkProgram& program, int indent) {
  constexpr size_t kShownBytes = 16;
  std::string out;
  for (size_t i = 0; i < program.constants.size(); ++i) {
    const Constant& c = program.constants[i];
    out += Pad(indent) + "c" + std::to_string(i) + " " + c.name + " " +
           std::to_string(c.bytes.size()) + " bytes";
    if (!c.bytes.empty()) out += ":";
    for (size_t b = 0; b < c.bytes.size() && b < kShownBytes; ++b) {
      char hex[4];
      std::snprintf(hex, sizeof hex, " %02x", c.bytes[b]);
      out += hex;
    }
    if (c.bytes.size() > kShownBytes) out += " ...";
    out += "\n";
  }
  return out;
}

std::string ProgramToText(const ThunkProgram& program) {
  return "signature:\n" + SignatureToText(program) + "allocations:\n" +
         AllocationsToText(program) + "constants:\n" + ConstantsToText(program) + "program:" +
         (program.num_streams > 1 ? " " + StreamSummary(program) : std::string()) + "\n" +
         ThunkTreeToText(program.root);
}

}  // namespace kiln::thunks
