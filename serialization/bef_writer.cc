// SerializeArtifact: Artifact -> .bef bytes (see artifact.h, bef.fbs).
//
// Determinism: the builder is used in one fixed order (children before
// parents, vectors in their C++ order), with ForceDefaults off and vtable
// deduplication on, no shared strings and no hash-map iteration, so equal
// artifacts give byte-identical files. Empty vectors and strings are
// omitted (a reader treats absent as empty).
//
// Checksums (bef_checksum.h): each section's XXH3-64 is computed from the
// C++ data as its table is written; the whole-file checksum last, over the
// finished buffer, and patched into its field like the file size.
#include <flatbuffers/flatbuffers.h>

#include <fstream>

#include "serialization/artifact.h"
#include "serialization/bef_checksum.h"
#include "serialization/bef_generated.h"

namespace kiln::bef {
namespace {

using flatbuffers::Offset;
using flatbuffers::String;
using flatbuffers::Vector;
namespace th = ::kiln::thunks;

static_assert(FLATBUFFERS_MAX_ALIGNMENT >= kConstantAlignment,
              "build with FLATBUFFERS_MAX_ALIGNMENT=64 (serialization/CMakeLists.txt)");

// FlatBuffers offsets are 32-bit: stay clear of 2 GiB with a margin for the
// tables around the bulk data.
constexpr uint64_t kMaxBulkBytes = (uint64_t{1} << 31) - (uint64_t{1} << 26);

fb::BufferSlice Slice(const th::BufferSlice& s) { return fb::BufferSlice(s.allocation, s.offset, s.size); }
fb::Dim3 Dims(const th::Dim3& d) { return fb::Dim3(d.x, d.y, d.z); }

class Writer {
 public:
  Writer() : fbb_(1 << 16) {
    fbb_.ForceDefaults(false);
    fbb_.DedupVtables(true);
  }

  std::vector<uint8_t> Write(const Artifact& a) {
    // Children first: every offset must exist before its parent table starts.
    auto producer = Str(a.producer);
    auto targets = Strings(a.targets);
    std::vector<Offset<fb::KernelImage>> images;
    for (const KernelImage& image : a.kernel_images) images.push_back(Image(image));
    auto images_vec = Vec(images);
    std::vector<Offset<fb::Allocation>> allocations;
    for (const th::Allocation& alloc : a.program.allocations) allocations.push_back(Alloc(alloc));
    auto allocations_vec = Vec(allocations);
    std::vector<Offset<fb::Constant>> constants;
    for (const th::Constant& c : a.program.constants) constants.push_back(Const(c));
    auto constants_vec = Vec(constants);
    auto signature = Sig(a.program.signature);
    auto program = Sequence(a.program.root);
    auto hlo_text = Str(a.hlo_text);

    fb::BefFileBuilder file(fbb_);
    file.add_schema_version((kBefVersionMajor << 16) | kBefVersionMinor);
    // A nonzero placeholder makes the field present; patched in place once
    // the size is known (same width, so the layout does not change).
    file.add_file_size(1);
    file.add_producer(producer);
    file.add_targets(targets);
    file.add_kernel_images(images_vec);
    file.add_allocations(allocations_vec);
    file.add_constants(constants_vec);
    file.add_signature(signature);
    file.add_program(program);
    file.add_hlo_text(hlo_text);
    file.add_checksum(1);  // placeholder, like file_size
    file.add_replica_count(a.program.replica_count);
    file.add_num_partitions(a.program.num_partitions);
    file.add_num_streams(a.program.num_streams);
    file.add_num_events(a.program.num_events);
    fb::FinishBefFileBuffer(fbb_, file.Finish());
    std::vector<uint8_t> bytes(fbb_.GetBufferPointer(), fbb_.GetBufferPointer() + fbb_.GetSize());
    fb::BefFile* root = fb::GetMutableBefFile(bytes.data());
    root->mutate_file_size(bytes.size());
    const auto* table = reinterpret_cast<const flatbuffers::Table*>(root);
    const size_t field = static_cast<size_t>(reinterpret_cast<const uint8_t*>(table) - bytes.data()) +
                         table->GetOptionalFieldOffset(fb::BefFile::VT_CHECKSUM);
    root->mutate_checksum(FileChecksum(bytes, field));
    return bytes;
  }

 private:
  Offset<String> Str(std::string_view s) {
    return s.empty() ? 0 : fbb_.CreateString(s.data(), s.size());
  }
  Offset<String> TypeName(ElementType t) { return Str(ElementTypeName(t)); }
  Offset<Vector<int64_t>> Ints(const std::vector<int64_t>& v) {
    return v.empty() ? 0 : fbb_.CreateVector(v);
  }
  Offset<Vector<uint8_t>> Bytes(const uint8_t* data, size_t size, size_t alignment = 1) {
    if (size == 0) return 0;
    if (alignment > 1) fbb_.ForceVectorAlignment(size, 1, alignment);
    return fbb_.CreateVector(data, size);
  }
  template <typename T>
  Offset<Vector<T>> Vec(const std::vector<T>& v) {
    return v.empty() ? 0 : fbb_.CreateVector(v);
  }
  template <typename T>
  Offset<Vector<const T*>> Structs(const std::vector<T>& v) {
    return v.empty() ? 0 : fbb_.CreateVectorOfStructs(v);
  }
  Offset<Vector<Offset<String>>> Strings(const std::vector<std::string>& v) {
    std::vector<Offset<String>> offsets;
    for (const std::string& s : v) offsets.push_back(fbb_.CreateString(s));
    return Vec(offsets);
  }
  Offset<Vector<fb::BufferSlice const*>> Slices(const std::vector<th::BufferSlice>& v) {
    std::vector<fb::BufferSlice> out;
    for (const th::BufferSlice& s : v) out.push_back(Slice(s));
    return Structs(out);
  }

  Offset<fb::Shape> ShapeOf(const Shape& s) {
    std::vector<Offset<fb::Shape>> tuple;
    for (const Shape& e : s.tuple_shapes()) tuple.push_back(ShapeOf(e));
    auto tuple_vec = Vec(tuple);
    Offset<fb::Layout> layout = 0;
    if (s.layout()) {
      const Layout& l = *s.layout();
      std::vector<Offset<fb::Tile>> tiles;
      for (const Tile& t : l.tiles) tiles.push_back(fb::CreateTile(fbb_, Ints(t.dims)));
      auto minor_to_major = Ints(l.minor_to_major);
      auto tiles_vec = Vec(tiles);
      auto suffix = Str(l.other_suffix);
      layout = fb::CreateLayout(fbb_, minor_to_major, tiles_vec, l.element_size_in_bits,
                                l.memory_space, suffix);
    }
    std::vector<uint8_t> dynamic;
    if (s.is_dynamic()) {
      for (int64_t i = 0; i < s.rank(); ++i) dynamic.push_back(s.is_dynamic_dim(i) ? 1 : 0);
    }
    auto type = TypeName(s.element_type());
    auto dims = Ints(s.dims());
    auto dynamic_vec = Vec(dynamic);
    return fb::CreateShape(fbb_, type, dims, dynamic_vec, layout, tuple_vec);
  }
  Offset<Vector<Offset<fb::Shape>>> Shapes(const std::vector<Shape>& v) {
    std::vector<Offset<fb::Shape>> out;
    for (const Shape& s : v) out.push_back(ShapeOf(s));
    return Vec(out);
  }

  Offset<fb::Allocation> Alloc(const th::Allocation& a) {
    Offset<fb::ParameterRef> parameter = 0;
    if (a.parameter) {
      parameter = fb::CreateParameterRef(fbb_, a.parameter->number, Ints(a.parameter->index));
    }
    Offset<fb::OutputRef> output = 0;
    if (a.output) output = fb::CreateOutputRef(fbb_, Ints(*a.output));
    flatbuffers::Optional<int64_t> constant = flatbuffers::nullopt;
    if (a.constant) constant = *a.constant;
    return fb::CreateAllocation(fbb_, a.size, a.alignment, parameter, output, constant, a.color,
                                 a.zero_initialize);
  }

  Offset<fb::Constant> Const(const th::Constant& c) {
    auto name = Str(c.name);
    auto data = Bytes(c.bytes.data(), c.bytes.size(), kConstantAlignment);
    return fb::CreateConstant(fbb_, name, data, SectionChecksum(c.bytes));
  }

  // A section's checksum; 0 (absent) for an empty one.
  static uint64_t SectionChecksum(std::span<const uint8_t> bytes) {
    return bytes.empty() ? 0 : Xxh3(bytes);
  }

  Offset<fb::Signature> Sig(const th::Signature& s) {
    auto parameters = Shapes(s.parameters);
    auto result = ShapeOf(s.result);
    std::vector<Offset<fb::InputOutputAlias>> aliases;
    for (const th::InputOutputAlias& a : s.aliases) {
      auto out_index = Ints(a.output_index);
      auto param_index = Ints(a.parameter_index);
      aliases.push_back(fb::CreateInputOutputAlias(fbb_, out_index, a.parameter_number,
                                                   param_index, a.must_alias));
    }
    auto aliases_vec = Vec(aliases);
    std::vector<Offset<fb::ParameterLeaf>> params;
    for (const th::ParameterLeaf& l : s.parameter_leaves) {
      fb::BufferSlice slice = Slice(l.slice);
      params.push_back(fb::CreateParameterLeaf(fbb_, l.parameter_number, Ints(l.index), &slice));
    }
    auto params_vec = Vec(params);
    std::vector<Offset<fb::ResultLeaf>> results;
    for (const th::ResultLeaf& l : s.result_leaves) {
      fb::BufferSlice slice = Slice(l.slice);
      results.push_back(fb::CreateResultLeaf(fbb_, Ints(l.index), &slice));
    }
    auto results_vec = Vec(results);
    std::vector<Offset<fb::DynamicDimension>> dynamic;
    for (const th::DynamicDimension& d : s.dynamic_dimensions)
      dynamic.push_back(fb::CreateDynamicDimension(fbb_, d.of_result, d.leaf, d.dimension, d.size_leaf));
    auto dynamic_vec = Vec(dynamic);
    return fb::CreateSignature(fbb_, parameters, result, aliases_vec, params_vec, results_vec,
                               dynamic_vec);
  }

  Offset<fb::ThunkInfo> Info(const th::ThunkInfo& info) {
    std::vector<Offset<fb::HloInstructionRef>> hlo;
    for (const th::HloInstructionRef& h : info.hlo) {
      auto name = Str(h.name);
      auto opcode = Str(h.opcode);
      auto op_name = Str(h.op_name);
      hlo.push_back(fb::CreateHloInstructionRef(fbb_, name, opcode, op_name));
    }
    auto profile_name = Str(info.profile_name);
    auto hlo_vec = Vec(hlo);
    fb::CostEstimate cost(info.cost.flops, info.cost.transcendentals, info.cost.bytes_read,
                          info.cost.bytes_written);
    return fb::CreateThunkInfo(fbb_, profile_name, hlo_vec, &cost);
  }

  Offset<fb::SequenceThunk> Sequence(const th::SequenceThunk& seq) {
    std::vector<Offset<fb::Thunk>> thunks;
    for (const th::Thunk& t : seq.thunks) thunks.push_back(ThunkOf(t));
    return fb::CreateSequenceThunk(fbb_, Vec(thunks));
  }

  Offset<fb::Thunk> ThunkOf(const th::Thunk& t) {
    auto body = std::visit([&](const auto& b) { return Body(b).Union(); }, t.body);
    auto info = Info(t.info);
    // Union type values are ThunkKind + 1 (0 is NONE); see bef.fbs.
    auto type = static_cast<fb::ThunkBody>(static_cast<uint8_t>(t.kind()) + 1);
    auto waits = t.wait_events.empty() ? 0 : fbb_.CreateVector(t.wait_events);
    return fb::CreateThunk(fbb_, info, type, body, t.stream, waits, t.record_event);
  }

  Offset<fb::KernelThunk> Body(const th::KernelThunk& k) {
    std::vector<fb::KernelArgument> args;
    for (const th::KernelArgument& a : k.args) args.emplace_back(Slice(a.slice), a.written);
    auto name = Str(k.kernel_name);
    auto args_vec = Structs(args);
    fb::Dim3 grid = Dims(k.launch.grid), block = Dims(k.launch.block);
    return fb::CreateKernelThunk(fbb_, name, args_vec, &grid, &block,
                                 k.launch.shared_memory_bytes);
  }

  Offset<fb::GemmThunk> Body(const th::GemmThunk& g) {
    auto lhs_type = TypeName(g.lhs_type);
    auto rhs_type = TypeName(g.rhs_type);
    auto out_type = TypeName(g.out_type);
    fb::BufferSlice lhs = Slice(g.lhs), rhs = Slice(g.rhs), out = Slice(g.out);
    fb::BufferSlice workspace = g.workspace ? Slice(*g.workspace) : fb::BufferSlice();
    return fb::CreateGemmThunk(fbb_, &lhs, &rhs, &out, g.workspace ? &workspace : nullptr,
                               lhs_type, rhs_type, out_type, g.m, g.n, g.k, g.batch,
                               g.lhs_transposed, g.rhs_transposed, g.lhs_leading_dim,
                               g.rhs_leading_dim, g.out_leading_dim, g.lhs_batch_stride,
                               g.rhs_batch_stride, g.out_batch_stride, g.alpha_real, g.alpha_imag,
                               g.beta, g.tf32);
  }

  Offset<fb::ConvolutionThunk> Body(const th::ConvolutionThunk& c) {
    auto operands = Slices(c.operands);
    auto operand_shapes = Shapes(c.operand_shapes);
    auto result_shape = ShapeOf(c.result_shape);
    const th::ConvolutionDimensions& d = c.dimensions;
    auto in_spatial = Ints(d.input_spatial);
    auto kernel_spatial = Ints(d.kernel_spatial);
    auto out_spatial = Ints(d.output_spatial);
    auto dims = fb::CreateConvolutionDimensions(
        fbb_, d.input_batch, d.input_feature, in_spatial, d.kernel_input_feature,
        d.kernel_output_feature, kernel_spatial, d.output_batch, d.output_feature, out_spatial);
    std::vector<fb::WindowDimension> window;
    for (const th::WindowDimension& w : c.window) {
      window.emplace_back(w.size, w.stride, w.padding_low, w.padding_high, w.lhs_dilation,
                          w.rhs_dilation, w.reversal);
    }
    auto window_vec = Structs(window);
    fb::BufferSlice result = Slice(c.result);
    fb::BufferSlice scratch = c.scratch ? Slice(*c.scratch) : fb::BufferSlice();
    return fb::CreateConvolutionThunk(fbb_, static_cast<fb::ConvolutionKind>(c.kind), operands,
                                      operand_shapes, &result, result_shape,
                                      c.scratch ? &scratch : nullptr, dims, window_vec,
                                      c.feature_group_count, c.batch_group_count);
  }

  Offset<fb::FftThunk> Body(const th::FftThunk& f) {
    auto lengths = Ints(f.fft_length);
    auto in_shape = ShapeOf(f.input_shape);
    auto out_shape = ShapeOf(f.output_shape);
    fb::BufferSlice in = Slice(f.input), out = Slice(f.output);
    return fb::CreateFftThunk(fbb_, static_cast<fb::FftType>(f.type), lengths, &in, &out, in_shape,
                              out_shape);
  }

  Offset<fb::CholeskyThunk> Body(const th::CholeskyThunk& c) {
    auto type = TypeName(c.type);
    fb::BufferSlice a = Slice(c.a), info = Slice(c.info);
    return fb::CreateCholeskyThunk(fbb_, &a, &info, type, c.n, c.batch, c.lower);
  }

  Offset<fb::TriangularSolveThunk> Body(const th::TriangularSolveThunk& t) {
    auto type = TypeName(t.type);
    fb::BufferSlice a = Slice(t.a), b = Slice(t.b);
    return fb::CreateTriangularSolveThunk(fbb_, &a, &b, type, t.m, t.n, t.batch, t.left_side, t.lower,
                                          t.unit_diagonal,
                                          static_cast<fb::TriangularSolveTranspose>(t.transpose_a));
  }

  Offset<fb::LinalgThunk> Body(const th::LinalgThunk& l) {
    auto type = TypeName(l.type);
    auto results = Slices(l.results);
    fb::BufferSlice a = Slice(l.a), tau = Slice(l.tau);
    return fb::CreateLinalgThunk(fbb_, static_cast<fb::LinalgOp>(l.op), type, l.m, l.n, l.k, l.batch, l.lower,
                                 static_cast<uint8_t>(l.mode), &a, l.op == th::LinalgOp::kOrgqr ? &tau : nullptr,
                                 results);
  }

  Offset<fb::RadixSortThunk> Body(const th::RadixSortThunk& r) {
    auto key_type = TypeName(r.key_type);
    auto value_type = r.values ? TypeName(r.value_type) : 0;
    fb::BufferSlice keys = Slice(r.keys), keys_out = Slice(r.keys_out);
    fb::BufferSlice values = r.values ? Slice(*r.values) : fb::BufferSlice();
    fb::BufferSlice values_out = r.values_out ? Slice(*r.values_out) : fb::BufferSlice();
    return fb::CreateRadixSortThunk(fbb_, &keys, &keys_out, r.values ? &values : nullptr,
                                    r.values_out ? &values_out : nullptr, key_type, value_type, r.rows,
                                    r.row_length, static_cast<fb::RadixKeyOrder>(r.order), r.descending);
  }

  Offset<fb::CopyThunk> Body(const th::CopyThunk& c) {
    fb::BufferSlice src = Slice(c.source), dst = Slice(c.destination);
    return fb::CreateCopyThunk(fbb_, &src, &dst);
  }

  Offset<fb::MemsetThunk> Body(const th::MemsetThunk& m) {
    fb::BufferSlice dst = Slice(m.destination);
    return fb::CreateMemsetThunk(fbb_, &dst, m.pattern);
  }

  Offset<fb::RngGetAndUpdateStateThunk> Body(const th::RngGetAndUpdateStateThunk& r) {
    fb::BufferSlice state = Slice(r.state);
    return fb::CreateRngGetAndUpdateStateThunk(fbb_, &state, r.delta);
  }

  Offset<fb::SequenceThunk> Body(const th::SequenceThunk& s) { return Sequence(s); }

  Offset<fb::WhileThunk> Body(const th::WhileThunk& w) {
    auto condition = Sequence(w.condition);
    auto body = Sequence(w.body);
    fb::BufferSlice pred = Slice(w.predicate);
    flatbuffers::Optional<int64_t> trip = flatbuffers::nullopt;
    if (w.trip_count) trip = *w.trip_count;
    return fb::CreateWhileThunk(fbb_, condition, &pred, body, trip);
  }

  Offset<fb::ConditionalThunk> Body(const th::ConditionalThunk& c) {
    std::vector<Offset<fb::SequenceThunk>> branches;
    for (const th::SequenceThunk& b : c.branches) branches.push_back(Sequence(b));
    auto branches_vec = Vec(branches);
    fb::BufferSlice index = Slice(c.branch_index);
    return fb::CreateConditionalThunk(fbb_, &index, c.is_pred, branches_vec);
  }

  Offset<fb::CollectiveConfig> Config(const th::CollectiveConfig& c) {
    std::vector<Offset<fb::ReplicaGroup>> groups;
    for (const auto& g : c.replica_groups) groups.push_back(fb::CreateReplicaGroup(fbb_, Ints(g)));
    auto groups_vec = Vec(groups);
    flatbuffers::Optional<int64_t> channel = flatbuffers::nullopt;
    if (c.channel_id) channel = *c.channel_id;
    std::vector<Offset<fb::ReplicaGroup>> devices;
    for (const auto& g : c.device_groups) devices.push_back(fb::CreateReplicaGroup(fbb_, Ints(g)));
    auto devices_vec = Vec(devices);
    flatbuffers::Optional<int64_t> async = flatbuffers::nullopt;
    if (c.async_id) async = *c.async_id;
    return fb::CreateCollectiveConfig(fbb_, groups_vec, channel, c.use_global_device_ids, devices_vec, async);
  }

  Offset<fb::CollectiveBuffer> Buffer(const th::CollectiveBuffer& b) {
    auto type = TypeName(b.element_type);
    auto dims = Ints(b.dims);
    fb::BufferSlice src = Slice(b.source), dst = Slice(b.destination);
    return fb::CreateCollectiveBuffer(fbb_, &src, &dst, type, b.element_count, dims);
  }
  Offset<Vector<Offset<fb::CollectiveBuffer>>> Buffers(const std::vector<th::CollectiveBuffer>& v) {
    std::vector<Offset<fb::CollectiveBuffer>> out;
    for (const th::CollectiveBuffer& b : v) out.push_back(Buffer(b));
    return Vec(out);
  }

  Offset<fb::AllReduceThunk> Body(const th::AllReduceThunk& t) {
    auto config = Config(t.config);
    auto buffers = Buffers(t.buffers);
    return fb::CreateAllReduceThunk(fbb_, config, static_cast<fb::ReductionKind>(t.reduction),
                                    buffers);
  }
  Offset<fb::AllGatherThunk> Body(const th::AllGatherThunk& t) {
    auto config = Config(t.config);
    auto buffers = Buffers(t.buffers);
    return fb::CreateAllGatherThunk(fbb_, config, t.dimension, buffers);
  }
  Offset<fb::ReduceScatterThunk> Body(const th::ReduceScatterThunk& t) {
    auto config = Config(t.config);
    auto buffers = Buffers(t.buffers);
    return fb::CreateReduceScatterThunk(fbb_, config, static_cast<fb::ReductionKind>(t.reduction),
                                        t.dimension, buffers);
  }
  Offset<fb::AllToAllThunk> Body(const th::AllToAllThunk& t) {
    auto config = Config(t.config);
    auto buffers = Buffers(t.buffers);
    flatbuffers::Optional<int64_t> split = flatbuffers::nullopt;
    if (t.split_dimension) split = *t.split_dimension;
    return fb::CreateAllToAllThunk(fbb_, config, split, buffers);
  }
  Offset<fb::CollectivePermuteThunk> Body(const th::CollectivePermuteThunk& t) {
    auto config = Config(t.config);
    std::vector<fb::SourceTargetPair> pairs;
    for (const auto& [s, d] : t.source_target_pairs) pairs.emplace_back(s, d);
    auto pairs_vec = Structs(pairs);
    auto buffer = Buffer(t.buffer);
    std::vector<fb::SourceTargetPair> device_pairs;
    for (const auto& [s, d] : t.device_pairs) device_pairs.emplace_back(s, d);
    auto device_pairs_vec = Structs(device_pairs);
    return fb::CreateCollectivePermuteThunk(fbb_, config, pairs_vec, buffer, device_pairs_vec);
  }
  Offset<fb::CollectiveBroadcastThunk> Body(const th::CollectiveBroadcastThunk& t) {
    auto config = Config(t.config);
    auto buffers = Buffers(t.buffers);
    return fb::CreateCollectiveBroadcastThunk(fbb_, config, buffers);
  }
  Offset<fb::CollectiveDoneThunk> Body(const th::CollectiveDoneThunk& t) {
    return fb::CreateCollectiveDoneThunk(fbb_, t.async_id);
  }
  Offset<fb::DeviceIdThunk> Body(const th::DeviceIdThunk& t) {
    fb::BufferSlice dst = Slice(t.destination);
    return fb::CreateDeviceIdThunk(fbb_, static_cast<fb::DeviceIdKind>(t.kind), &dst);
  }
  Offset<fb::CustomCallThunk> Body(const th::CustomCallThunk& c) {
    auto target = Str(c.target);
    auto operands = Slices(c.operands);
    auto results = Slices(c.results);
    auto config = Bytes(reinterpret_cast<const uint8_t*>(c.backend_config.data()),
                        c.backend_config.size());
    return fb::CreateCustomCallThunk(fbb_, target, operands, results, config, c.api_version);
  }

  Offset<fb::KernelImage> Image(const KernelImage& image) {
    auto target = Str(image.target);
    std::vector<Offset<fb::Cubin>> cubins;
    for (const CubinImage& c : image.cubins) {
      cubins.push_back(fb::CreateCubin(fbb_, c.sm_arch, Bytes(c.data.data(), c.data.size(), 16),
                                       SectionChecksum(c.data)));
    }
    auto cubins_vec = Vec(cubins);
    auto ptx = Str(image.ptx);
    auto so = Bytes(image.shared_object.data(), image.shared_object.size(), kConstantAlignment);
    std::vector<Offset<fb::KernelEntry>> kernels;
    for (const KernelEntry& k : image.kernels) {
      auto name = Str(k.name);
      fb::Dim3 grid = Dims(k.launch.grid), block = Dims(k.launch.block);
      kernels.push_back(
          fb::CreateKernelEntry(fbb_, name, &grid, &block, k.launch.shared_memory_bytes));
    }
    auto kernels_vec = Vec(kernels);
    // Absent rather than empty for CUDA images and unleveled host images.
    Offset<String> level = image.cpu_level.empty() ? Offset<String>() : Str(image.cpu_level);
    auto features = Strings(image.cpu_features);
    const auto* ptx_bytes = reinterpret_cast<const uint8_t*>(image.ptx.data());
    return fb::CreateKernelImage(fbb_, target, static_cast<fb::TargetKind>(image.kind),
                                 cubins_vec, ptx, so, kernels_vec,
                                 SectionChecksum(image.shared_object),
                                 SectionChecksum({ptx_bytes, image.ptx.size()}), level, features);
  }

  flatbuffers::FlatBufferBuilder fbb_;
};

// Bytes of bulk data (constants, images, text): what decides whether the
// artifact fits FlatBuffers' 32-bit offsets.
uint64_t BulkBytes(const Artifact& a) {
  uint64_t total = a.hlo_text.size() + a.producer.size();
  for (const th::Constant& c : a.program.constants) total += c.bytes.size() + kConstantAlignment;
  for (const KernelImage& image : a.kernel_images) {
    total += image.ptx.size() + image.shared_object.size() + kConstantAlignment;
    for (const CubinImage& c : image.cubins) total += c.data.size() + 16;
  }
  return total;
}

}  // namespace

StatusOr<std::vector<uint8_t>> SerializeArtifact(const Artifact& artifact) {
  KILN_RETURN_IF_ERROR(ValidateArtifact(artifact).WithContext("cannot serialize artifact"));
  const uint64_t bulk = BulkBytes(artifact);
  if (bulk > kMaxBulkBytes) {
    return Error("cannot serialize artifact: " + std::to_string(bulk) +
                 " bytes of constants and kernel images exceed the 2 GiB limit of a .bef file");
  }
  return Writer().Write(artifact);
}

Status WriteArtifactFile(const Artifact& artifact, const std::string& path) {
  KILN_ASSIGN_OR_RETURN(std::vector<uint8_t> bytes, SerializeArtifact(artifact));
  return WriteBefFile(bytes, path);
}

Status WriteBefFile(std::span<const uint8_t> bytes, const std::string& path) {
  std::ofstream out(path, std::ios::binary | std::ios::trunc);
  if (!out) return Error("cannot open " + path + " for writing");
  out.write(reinterpret_cast<const char*>(bytes.data()), static_cast<std::streamsize>(bytes.size()));
  out.close();
  if (!out) return Error("cannot write " + path);
  return Status::Ok();
}

}  // namespace kiln::bef
