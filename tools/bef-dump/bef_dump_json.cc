// bef-dump --json: the artifact as one JSON object (see bef_dump.h).
//
// Layout: {file, size_bytes, format_major, checksums, producer, targets,
// signature, allocations, constants, kernel_images, program, [hlo_text]};
// a host image of a CPU level has cpu_level, cpu_features and runs_here
// (the image this machine's runtime picks);
// checksums is {algorithm, file, sections: [{section, offset, size,
// checksum}]} with each checksum a "0x..." string (64 bits do not fit a
// JSON number exactly). Slices are
// {allocation, offset, size}; every thunk has kind, name, hlo, cost, text
// (its bef-dump text line) and its kind's fields; control-flow thunks nest
// their sequences as arrays of thunks.
#include "serialization/host_image.h"
#include "thunks/program_text.h"
#include "tools/bef-dump/bef_dump.h"
#include "tools/common/json_writer.h"

namespace kiln::tools {
namespace {

namespace th = ::kiln::thunks;

class ArtifactJson {
 public:
  std::string Render(const bef::Artifact& a, const std::string& path, uint64_t file_size,
                     const bef::FileChecksums& checksums, const DumpOptions& options) {
    j_.BeginObject();
    j_.Field("file", path);
    j_.Field("size_bytes", static_cast<int64_t>(file_size));
    j_.Field("format_major", static_cast<int64_t>(bef::kBefVersionMajor));
    Checksums(checksums);
    j_.Field("producer", a.producer);
    j_.Key("targets");
    j_.BeginArray();
    for (const std::string& t : a.targets) j_.String(t);
    j_.EndArray();
    j_.Field("replica_count", a.program.replica_count);
    j_.Field("num_partitions", a.program.num_partitions);
    if (a.program.num_streams > 1) {  // streams and events (thunks/streams.h)
      j_.Field("num_streams", static_cast<int64_t>(a.program.num_streams));
      j_.Field("num_events", static_cast<int64_t>(a.program.num_events));
    }
    Signature(a.program.signature);
    Allocations(a.program);
    Constants(a.program);
    users_ = KernelUsers(a);
    StatusOr<const bef::KernelImage*> selected = bef::SelectHostImage(a);
    runs_here_ = selected.ok() ? *selected : nullptr;
    Images(a.kernel_images);
    j_.Key("program");
    Sequence(a.program.root);
    if (options.hlo) j_.Field("hlo_text", a.hlo_text);
    j_.EndObject();
    return j_.str();
  }

 private:
  void Slice(std::string_view key, const th::BufferSlice& s) {
    j_.Key(key);
    Slice(s);
  }
  void Slice(const th::BufferSlice& s) {
    j_.BeginObject();
    j_.Field("allocation", static_cast<int64_t>(s.allocation));
    j_.Field("offset", s.offset);
    j_.Field("size", s.size);
    j_.EndObject();
  }
  void OptionalSlice(std::string_view key, const std::optional<th::BufferSlice>& s) {
    j_.Key(key);
    if (s) Slice(*s);
    else j_.Null();
  }
  void Slices(std::string_view key, const std::vector<th::BufferSlice>& v) {
    j_.Key(key);
    j_.BeginArray();
    for (const th::BufferSlice& s : v) Slice(s);
    j_.EndArray();
  }
  void OptionalInt(std::string_view key, const std::optional<int64_t>& v) {
    j_.Key(key);
    if (v) j_.Int(*v);
    else j_.Null();
  }
  void Ints(std::string_view key, const std::vector<int64_t>& v) {
    j_.Key(key);
    j_.IntArray(v);
  }
  void ShapeField(std::string_view key, const Shape& s) { j_.Field(key, s.ToString()); }
  void Dims(std::string_view key, const th::Dim3& d) { Ints(key, {d.x, d.y, d.z}); }

  void Signature(const th::Signature& sig) {
    j_.Key("signature");
    j_.BeginObject();
    j_.Key("parameters");
    j_.BeginArray();
    for (size_t i = 0; i < sig.parameters.size(); ++i) {
      j_.BeginObject();
      j_.Field("number", static_cast<int64_t>(i));
      ShapeField("shape", sig.parameters[i]);
      j_.Key("leaves");
      j_.BeginArray();
      for (const th::ParameterLeaf& leaf : sig.parameter_leaves) {
        if (leaf.parameter_number != static_cast<int64_t>(i)) continue;
        j_.BeginObject();
        Ints("index", leaf.index);
        Slice("slice", leaf.slice);
        j_.EndObject();
      }
      j_.EndArray();
      j_.EndObject();
    }
    j_.EndArray();
    j_.Key("result");
    j_.BeginObject();
    ShapeField("shape", sig.result);
    j_.Key("leaves");
    j_.BeginArray();
    for (const th::ResultLeaf& leaf : sig.result_leaves) {
      j_.BeginObject();
      Ints("index", leaf.index);
      Slice("slice", leaf.slice);
      j_.EndObject();
    }
    j_.EndArray();
    j_.EndObject();
    j_.Key("aliases");
    j_.BeginArray();
    for (const th::InputOutputAlias& a : sig.aliases) {
      j_.BeginObject();
      Ints("output_index", a.output_index);
      j_.Field("parameter_number", a.parameter_number);
      Ints("parameter_index", a.parameter_index);
      j_.Field("must_alias", a.must_alias);
      j_.EndObject();
    }
    j_.EndArray();
    j_.Key("dynamic_dimensions");
    j_.BeginArray();
    for (const th::DynamicDimension& d : sig.dynamic_dimensions) {
      j_.BeginObject();
      j_.Field("of_result", d.of_result);
      j_.Field("leaf", d.leaf);
      j_.Field("dimension", d.dimension);
      j_.Field("size_leaf", d.size_leaf);
      j_.EndObject();
    }
    j_.EndArray();
    j_.EndObject();
  }

  void Allocations(const th::ThunkProgram& p) {
    j_.Key("allocations");
    j_.BeginArray();
    for (size_t i = 0; i < p.allocations.size(); ++i) {
      const th::Allocation& a = p.allocations[i];
      j_.BeginObject();
      j_.Field("index", static_cast<int64_t>(i));
      j_.Field("size", a.size);
      j_.Field("alignment", a.alignment);
      j_.Field("kind", th::AllocationKindName(a.kind()));
      j_.Key("parameter");
      if (a.parameter) {
        j_.BeginObject();
        j_.Field("number", a.parameter->number);
        Ints("index", a.parameter->index);
        j_.EndObject();
      } else {
        j_.Null();
      }
      j_.Key("output_index");
      if (a.output) j_.IntArray(*a.output);
      else j_.Null();
      OptionalInt("constant", a.constant);
      j_.Field("color", a.color);
      j_.Field("zero_initialize", a.zero_initialize);
      j_.EndObject();
    }
    j_.EndArray();
  }

  void Checksums(const bef::FileChecksums& checksums) {
    j_.Key("checksums");
    j_.BeginObject();
    j_.Field("algorithm", bef::kChecksumAlgorithm);
    j_.Field("file", ChecksumHex(checksums.file));
    j_.Key("sections");
    j_.BeginArray();
    for (const bef::SectionChecksum& s : checksums.sections) {
      j_.BeginObject();
      j_.Field("section", s.section);
      j_.Field("offset", static_cast<int64_t>(s.offset));
      j_.Field("size", static_cast<int64_t>(s.size));
      j_.Field("checksum", ChecksumHex(s.stored));
      j_.EndObject();
    }
    j_.EndArray();
    j_.EndObject();
  }

  void Constants(const th::ThunkProgram& p) {
    j_.Key("constants");
    j_.BeginArray();
    for (size_t i = 0; i < p.constants.size(); ++i) {
      j_.BeginObject();
      j_.Field("index", static_cast<int64_t>(i));
      j_.Field("name", p.constants[i].name);
      j_.Field("size", static_cast<int64_t>(p.constants[i].bytes.size()));
      j_.EndObject();
    }
    j_.EndArray();
  }

  void Images(const std::vector<bef::KernelImage>& images) {
    j_.Key("kernel_images");
    j_.BeginArray();
    for (const bef::KernelImage& image : images) {
      j_.BeginObject();
      j_.Field("target", image.target);
      j_.Field("kind", bef::TargetKindName(image.kind));
      j_.Key("cubins");
      j_.BeginArray();
      for (const bef::CubinImage& c : image.cubins) {
        j_.BeginObject();
        j_.Field("sm_arch", static_cast<int64_t>(c.sm_arch));
        j_.Field("size", static_cast<int64_t>(c.data.size()));
        j_.EndObject();
      }
      j_.EndArray();
      if (!image.cpu_level.empty()) {
        j_.Field("cpu_level", image.cpu_level);
        j_.Key("cpu_features");
        j_.BeginArray();
        for (const std::string& f : image.cpu_features) j_.String(f);
        j_.EndArray();
        j_.Field("runs_here", runs_here_ == &image);
      }
      j_.Field("ptx_size", static_cast<int64_t>(image.ptx.size()));
      j_.Field("shared_object_size", static_cast<int64_t>(image.shared_object.size()));
      j_.Key("kernels");
      j_.BeginArray();
      for (const bef::KernelEntry& k : image.kernels) {
        j_.BeginObject();
        j_.Field("name", k.name);
        Dims("grid", k.launch.grid);
        Dims("block", k.launch.block);
        j_.Field("shared_memory_bytes", k.launch.shared_memory_bytes);
        auto u = users_.find(k.name);
        j_.Field("users", u == users_.end() ? int64_t{0} : u->second);
        j_.EndObject();
      }
      j_.EndArray();
      j_.EndObject();
    }
    j_.EndArray();
  }

  void Sequence(const th::SequenceThunk& seq) {
    j_.BeginArray();
    for (const th::Thunk& t : seq.thunks) Thunk(t);
    j_.EndArray();
  }

  void Thunk(const th::Thunk& t) {
    j_.BeginObject();
    j_.Field("kind", th::ThunkKindName(t.kind()));
    j_.Field("name", t.info.profile_name);
    if (t.stream != 0 || !t.wait_events.empty() || t.record_event != -1) {
      j_.Field("stream", static_cast<int64_t>(t.stream));
      j_.Key("wait_events");
      j_.BeginArray();
      for (int32_t e : t.wait_events) j_.Int(e);
      j_.EndArray();
      j_.Field("record_event", static_cast<int64_t>(t.record_event));
    }
    j_.Key("hlo");
    j_.BeginArray();
    for (const th::HloInstructionRef& h : t.info.hlo) {
      j_.BeginObject();
      j_.Field("name", h.name);
      j_.Field("opcode", h.opcode);
      j_.Field("op_name", h.op_name);
      j_.EndObject();
    }
    j_.EndArray();
    j_.Key("cost");
    j_.BeginObject();
    j_.Field("flops", t.info.cost.flops);
    j_.Field("transcendentals", t.info.cost.transcendentals);
    j_.Field("bytes_read", t.info.cost.bytes_read);
    j_.Field("bytes_written", t.info.cost.bytes_written);
    j_.EndObject();
    j_.Field("text", th::ThunkLine(t));
    std::visit([&](const auto& body) { Body(body); }, t.body);
    j_.EndObject();
  }

  void Body(const th::KernelThunk& k) {
    j_.Field("kernel_name", k.kernel_name);
    Dims("grid", k.launch.grid);
    Dims("block", k.launch.block);
    j_.Field("shared_memory_bytes", k.launch.shared_memory_bytes);
    j_.Key("args");
    j_.BeginArray();
    for (const th::KernelArgument& a : k.args) {
      j_.BeginObject();
      Slice("slice", a.slice);
      j_.Field("written", a.written);
      j_.EndObject();
    }
    j_.EndArray();
  }
  void Body(const th::GemmThunk& g) {
    Slice("lhs", g.lhs);
    Slice("rhs", g.rhs);
    Slice("out", g.out);
    OptionalSlice("workspace", g.workspace);
    j_.Field("lhs_type", ElementTypeName(g.lhs_type));
    j_.Field("rhs_type", ElementTypeName(g.rhs_type));
    j_.Field("out_type", ElementTypeName(g.out_type));
    j_.Field("m", g.m);
    j_.Field("n", g.n);
    j_.Field("k", g.k);
    j_.Field("batch", g.batch);
    j_.Field("lhs_transposed", g.lhs_transposed);
    j_.Field("rhs_transposed", g.rhs_transposed);
    Ints("leading_dims", {g.lhs_leading_dim, g.rhs_leading_dim, g.out_leading_dim});
    Ints("batch_strides", {g.lhs_batch_stride, g.rhs_batch_stride, g.out_batch_stride});
    j_.FieldDouble("alpha_real", g.alpha_real);
    j_.FieldDouble("alpha_imag", g.alpha_imag);
    j_.FieldDouble("beta", g.beta);
    j_.Field("tf32", g.tf32);
    j_.Field("fp8_cublaslt", th::IsFp8Gemm(g));
  }
  void Body(const th::ConvolutionThunk& c) {
    j_.Field("convolution_kind", th::ConvolutionKindName(c.kind));
    j_.Key("operands");
    j_.BeginArray();
    for (size_t i = 0; i < c.operands.size(); ++i) {
      j_.BeginObject();
      Slice("slice", c.operands[i]);
      if (i < c.operand_shapes.size()) ShapeField("shape", c.operand_shapes[i]);
      j_.EndObject();
    }
    j_.EndArray();
    Slice("result", c.result);
    ShapeField("result_shape", c.result_shape);
    OptionalSlice("scratch", c.scratch);
    const th::ConvolutionDimensions& d = c.dimensions;
    j_.Key("dimensions");
    j_.BeginObject();
    j_.Field("input_batch", d.input_batch);
    j_.Field("input_feature", d.input_feature);
    Ints("input_spatial", d.input_spatial);
    j_.Field("kernel_input_feature", d.kernel_input_feature);
    j_.Field("kernel_output_feature", d.kernel_output_feature);
    Ints("kernel_spatial", d.kernel_spatial);
    j_.Field("output_batch", d.output_batch);
    j_.Field("output_feature", d.output_feature);
    Ints("output_spatial", d.output_spatial);
    j_.EndObject();
    j_.Key("window");
    j_.BeginArray();
    for (const th::WindowDimension& w : c.window) {
      j_.BeginObject();
      j_.Field("size", w.size);
      j_.Field("stride", w.stride);
      j_.Field("padding_low", w.padding_low);
      j_.Field("padding_high", w.padding_high);
      j_.Field("lhs_dilation", w.lhs_dilation);
      j_.Field("rhs_dilation", w.rhs_dilation);
      j_.Field("reversal", w.reversal);
      j_.EndObject();
    }
    j_.EndArray();
    j_.Field("feature_group_count", c.feature_group_count);
    j_.Field("batch_group_count", c.batch_group_count);
  }
  void Body(const th::FftThunk& f) {
    j_.Field("fft_type", th::FftTypeName(f.type));
    Ints("fft_length", f.fft_length);
    Slice("input", f.input);
    Slice("output", f.output);
    ShapeField("input_shape", f.input_shape);
    ShapeField("output_shape", f.output_shape);
  }
  void Body(const th::CholeskyThunk& c) {
    Slice("a", c.a);
    Slice("info", c.info);
    j_.Field("type", ElementTypeName(c.type));
    j_.Field("n", c.n);
    j_.Field("batch", c.batch);
    j_.Field("lower", c.lower);
  }
  void Body(const th::RadixSortThunk& r) {
    Slice("keys", r.keys);
    Slice("keys_out", r.keys_out);
    if (r.values) Slice("values", *r.values);
    if (r.values_out) Slice("values_out", *r.values_out);
    j_.Field("key_type", ElementTypeName(r.key_type));
    if (r.values) j_.Field("value_type", ElementTypeName(r.value_type));
    j_.Field("rows", r.rows);
    j_.Field("row_length", r.row_length);
    j_.Field("order", th::RadixKeyOrderName(r.order));
    j_.Field("descending", r.descending);
  }
  void Body(const th::TriangularSolveThunk& t) {
    Slice("a", t.a);
    Slice("b", t.b);
    j_.Field("type", ElementTypeName(t.type));
    j_.Field("m", t.m);
    j_.Field("n", t.n);
    j_.Field("batch", t.batch);
    j_.Field("left_side", t.left_side);
    j_.Field("lower", t.lower);
    j_.Field("unit_diagonal", t.unit_diagonal);
    j_.Field("transpose_a", th::TriangularSolveTransposeName(t.transpose_a));
  }
  void Body(const th::LinalgThunk& l) {
    j_.Field("op", th::LinalgOpName(l.op));
    Slice("a", l.a);
    if (l.op == th::LinalgOp::kOrgqr) Slice("tau", l.tau);
    Slices("results", l.results);
    j_.Field("type", ElementTypeName(l.type));
    j_.Field("m", l.m);
    j_.Field("n", l.n);
    j_.Field("k", l.k);
    j_.Field("batch", l.batch);
    j_.Field("lower", l.lower);
    j_.Field("mode", std::string(l.mode ? 1 : 0, l.mode));
  }
  void Body(const th::CopyThunk& c) {
    Slice("source", c.source);
    Slice("destination", c.destination);
  }
  void Body(const th::MemsetThunk& m) {
    Slice("destination", m.destination);
    j_.Field("pattern", static_cast<int64_t>(m.pattern));
  }
  void Body(const th::RngGetAndUpdateStateThunk& r) {
    Slice("state", r.state);
    j_.Field("delta", r.delta);
  }
  void Body(const th::SequenceThunk& s) {
    j_.Key("thunks");
    Sequence(s);
  }
  void Body(const th::WhileThunk& w) {
    Slice("predicate", w.predicate);
    OptionalInt("trip_count", w.trip_count);
    j_.Key("condition");
    Sequence(w.condition);
    j_.Key("body");
    Sequence(w.body);
  }
  void Body(const th::ConditionalThunk& c) {
    Slice("branch_index", c.branch_index);
    j_.Field("is_pred", c.is_pred);
    j_.Key("branches");
    j_.BeginArray();
    for (const th::SequenceThunk& b : c.branches) Sequence(b);
    j_.EndArray();
  }
  void Config(const th::CollectiveConfig& c) {
    j_.Key("replica_groups");
    j_.BeginArray();
    for (const auto& g : c.replica_groups) j_.IntArray(g);
    j_.EndArray();
    OptionalInt("channel_id", c.channel_id);
    j_.Field("use_global_device_ids", c.use_global_device_ids);
    j_.Key("device_groups");
    j_.BeginArray();
    for (const auto& g : c.device_groups) j_.IntArray(g);
    j_.EndArray();
    OptionalInt("async_id", c.async_id);
  }
  void Buffer(const th::CollectiveBuffer& b) {
    j_.BeginObject();
    Slice("source", b.source);
    Slice("destination", b.destination);
    j_.Field("element_type", ElementTypeName(b.element_type));
    j_.Field("element_count", b.element_count);
    j_.Key("dims");
    j_.IntArray(b.dims);
    j_.EndObject();
  }
  void Buffers(const std::vector<th::CollectiveBuffer>& v) {
    j_.Key("buffers");
    j_.BeginArray();
    for (const th::CollectiveBuffer& b : v) Buffer(b);
    j_.EndArray();
  }
  void Body(const th::AllReduceThunk& t) {
    Config(t.config);
    j_.Field("reduction", th::ReductionKindName(t.reduction));
    Buffers(t.buffers);
  }
  void Body(const th::AllGatherThunk& t) {
    Config(t.config);
    j_.Field("dimension", t.dimension);
    Buffers(t.buffers);
  }
  void Body(const th::ReduceScatterThunk& t) {
    Config(t.config);
    j_.Field("reduction", th::ReductionKindName(t.reduction));
    j_.Field("dimension", t.dimension);
    Buffers(t.buffers);
  }
  void Body(const th::AllToAllThunk& t) {
    Config(t.config);
    OptionalInt("split_dimension", t.split_dimension);
    Buffers(t.buffers);
  }
  void Body(const th::CollectivePermuteThunk& t) {
    Config(t.config);
    j_.Key("source_target_pairs");
    j_.BeginArray();
    for (const auto& [s, d] : t.source_target_pairs) j_.IntArray({s, d});
    j_.EndArray();
    j_.Key("buffer");
    Buffer(t.buffer);
    j_.Key("device_pairs");
    j_.BeginArray();
    for (const auto& [s, d] : t.device_pairs) j_.IntArray({s, d});
    j_.EndArray();
  }
  void Body(const th::CollectiveBroadcastThunk& t) {
    Config(t.config);
    Buffers(t.buffers);
  }
  void Body(const th::CollectiveDoneThunk& t) { j_.Field("async_id", t.async_id); }
  void Body(const th::DeviceIdThunk& t) {
    j_.Field("id", th::DeviceIdKindName(t.kind));
    Slice("destination", t.destination);
  }
  void Body(const th::CustomCallThunk& c) {
    j_.Field("target", c.target);
    Slices("operands", c.operands);
    Slices("results", c.results);
    j_.Field("backend_config", c.backend_config);
    j_.Field("api_version", static_cast<int64_t>(c.api_version));
  }

  JsonWriter j_;
  std::map<std::string, int64_t> users_;  // KernelUsers of the artifact being rendered
  const bef::KernelImage* runs_here_ = nullptr;  // the host image this machine runs
};

}  // namespace

std::string ArtifactToJson(const bef::Artifact& artifact, const std::string& path,
                           uint64_t file_size, const bef::FileChecksums& checksums,
                           const DumpOptions& options) {
  return ArtifactJson().Render(artifact, path, file_size, checksums, options);
}

}  // namespace kiln::tools
