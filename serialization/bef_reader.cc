// LoadArtifact: .bef bytes -> Artifact, never trusting the input.
//
// Order of checks, each failing with one line:
//   1. size and file identifier ("not a .bef file");
//   2. the schema version and recorded file size, read after verifying
//      just those root-table fields (and the checksum field), so a file
//      from another major version or a truncated file is reported as such
//      even though the rest of it would not verify;
//   3. the whole-file checksum (bef_checksum.h); a mismatch names the
//      damaged section ("checksum mismatch in host kernel image 'x'");
//   4. the FlatBuffers verifier over the whole buffer (bounds, alignment,
//      nesting depth, table count);
//   5. conversion to C++ values: enum and union values this reader does not
//      know, element-type names, shape structure, constant alignment, and
//      the alignment of 8-byte vector elements (which the verifier skips);
//   6. ValidateArtifact (slices, signature, kernels in images, depth).
// Conversion copies every vector; copies (and each thunk and shape built)
// are charged against the file size, so a crafted file whose tables share
// one large vector or subtree cannot make the loader allocate more than a
// small multiple of its own size.
#include <flatbuffers/flatbuffers.h>

#include <cerrno>
#include <cstdio>
#include <cstring>
#include <fstream>
#include <memory>

#include "serialization/artifact.h"
#include "serialization/bef_checksum.h"
#include "serialization/bef_generated.h"
#include "serialization/bef_verifier.h"
#include "thunks/program_text.h"
#include "thunks/validate.h"

namespace kiln::bef {
namespace {

namespace th = ::kiln::thunks;
using flatbuffers::Vector;

Status Corrupt(const std::string& what) { return Error("corrupt .bef file: " + what); }

std::string PrintableIdentifier(const uint8_t* p) {
  std::string s;
  for (int i = 0; i < 4; ++i) {
    if (p[i] >= 0x20 && p[i] < 0x7f) {
      s += static_cast<char>(p[i]);
    } else {
      char hex[8];
      std::snprintf(hex, sizeof hex, "\\x%02x", p[i]);
      s += hex;
    }
  }
  return s;
}

// The fewest file bytes a genuine thunk (Thunk table plus its body table)
// and shape table occupy. Charging them per converted object bounds what a
// crafted file with shared tables can make the loader build, without ever
// rejecting a file whose tables are not shared.
constexpr size_t kMinBytesPerThunk = 16;
constexpr size_t kMinBytesPerShape = 8;

class Reader {
 public:
  Reader(const uint8_t* base, size_t size) : base_(base), budget_(size) {}

  Status Read(const fb::BefFile& f, Artifact& a) {
    KILN_RETURN_IF_ERROR(Str(f.producer(), a.producer));
    if (f.targets()) {
      for (const flatbuffers::String* t : *f.targets()) {
        a.targets.emplace_back();
        KILN_RETURN_IF_ERROR(Str(t, a.targets.back()));
      }
    }
    if (f.kernel_images()) {
      for (const fb::KernelImage* image : *f.kernel_images()) {
        a.kernel_images.emplace_back();
        KILN_RETURN_IF_ERROR(Image(image, a.kernel_images.back()));
      }
    }
    th::ThunkProgram& p = a.program;
    if (f.allocations()) {
      for (const fb::Allocation* alloc : *f.allocations()) {
        p.allocations.emplace_back();
        KILN_RETURN_IF_ERROR(Alloc(alloc, p.allocations.back()));
      }
    }
    if (f.constants()) {
      for (flatbuffers::uoffset_t i = 0; i < f.constants()->size(); ++i) {
        p.constants.emplace_back();
        KILN_RETURN_IF_ERROR(Const(i, f.constants()->Get(i), p.constants.back()));
      }
    }
    if (f.signature() == nullptr) return Corrupt("missing entry signature");
    KILN_RETURN_IF_ERROR(Sig(*f.signature(), p.signature));
    p.replica_count = f.replica_count();
    p.num_partitions = f.num_partitions();
    p.num_streams = f.num_streams();
    p.num_events = f.num_events();
    if (f.program() == nullptr) return Corrupt("missing thunk program");
    KILN_RETURN_IF_ERROR(Sequence(f.program(), p.root));
    return Str(f.hlo_text(), a.hlo_text);
  }

 private:
  Status Charge(size_t bytes) {
    if (bytes > budget_) return Corrupt("tables share more data than the file holds");
    budget_ -= bytes;
    return Status::Ok();
  }
  Status Str(const flatbuffers::String* s, std::string& out) {
    if (s == nullptr) return Status::Ok();
    KILN_RETURN_IF_ERROR(Charge(s->size()));
    out.assign(s->data(), s->size());
    return Status::Ok();
  }
  // The FlatBuffers 2.0.8 verifier checks a vector's length field, not the
  // alignment of 8-byte elements; reading a misaligned one is undefined.
  static Status Aligned(const void* data, size_t alignment) {
    if (reinterpret_cast<uintptr_t>(data) % alignment != 0) return Corrupt("misaligned vector");
    return Status::Ok();
  }
  template <typename T>
  Status Scalars(const Vector<T>* v, std::vector<T>& out) {
    if (v == nullptr) return Status::Ok();
    KILN_RETURN_IF_ERROR(Aligned(v->Data(), alignof(T)));
    KILN_RETURN_IF_ERROR(Charge(v->size() * sizeof(T)));
    out.assign(v->begin(), v->end());
    return Status::Ok();
  }
  Status Type(const flatbuffers::String* s, ElementType& out) {
    std::string name;
    KILN_RETURN_IF_ERROR(Str(s, name));
    std::optional<ElementType> t = ElementTypeFromName(name);
    if (!t || !IsArrayType(*t)) return Corrupt("unknown element type " + th::QuoteForMessage(name));
    out = *t;
    return Status::Ok();
  }
  static th::BufferSlice Slice(const fb::BufferSlice& s) {
    return th::BufferSlice{s.allocation(), s.offset(), s.size()};
  }
  static Status RequiredSlice(const fb::BufferSlice* s, th::BufferSlice& out, const char* what) {
    if (s == nullptr) return Corrupt(std::string("missing ") + what + " slice");
    out = Slice(*s);
    return Status::Ok();
  }
  static std::optional<th::BufferSlice> OptionalSlice(const fb::BufferSlice* s) {
    if (s == nullptr) return std::nullopt;
    return Slice(*s);
  }
  Status Slices(const Vector<const fb::BufferSlice*>* v, std::vector<th::BufferSlice>& out) {
    if (v == nullptr) return Status::Ok();
    KILN_RETURN_IF_ERROR(Aligned(v->Data(), alignof(fb::BufferSlice)));
    KILN_RETURN_IF_ERROR(Charge(v->size() * sizeof(fb::BufferSlice)));
    for (const fb::BufferSlice* s : *v) out.push_back(Slice(*s));
    return Status::Ok();
  }
  static th::Dim3 Dims(const fb::Dim3* d) {
    return d ? th::Dim3{d->x(), d->y(), d->z()} : th::Dim3{};
  }
  // Enum values beyond what this reader knows come from a newer writer.
  template <typename Out, typename In>
  static Status Enum(In value, int count, Out& out, const char* what) {
    const auto raw = static_cast<int>(value);
    if (raw < 0 || raw >= count) return Corrupt(std::string("unknown ") + what + " " + std::to_string(raw));
    out = static_cast<Out>(raw);
    return Status::Ok();
  }

  Status ShapeOf(const fb::Shape* s, Shape& out) {
    if (s == nullptr) return Corrupt("missing shape");
    KILN_RETURN_IF_ERROR(Charge(kMinBytesPerShape));
    std::string type_name;
    KILN_RETURN_IF_ERROR(Str(s->element_type(), type_name));
    if (type_name == "tuple") {
      if (s->dims() || s->layout() || s->dynamic_dims()) return Corrupt("tuple shape with dimensions");
      std::vector<Shape> elements;
      if (s->tuple_shapes()) {
        for (const fb::Shape* e : *s->tuple_shapes()) {
          elements.emplace_back();
          KILN_RETURN_IF_ERROR(ShapeOf(e, elements.back()));
        }
      }
      out = Shape::Tuple(std::move(elements));
      return Status::Ok();
    }
    std::optional<ElementType> type = ElementTypeFromName(type_name);
    if (!type) return Corrupt("unknown element type " + th::QuoteForMessage(type_name));
    if (s->tuple_shapes()) return Corrupt("non-tuple shape with tuple elements");
    std::vector<int64_t> dims;
    KILN_RETURN_IF_ERROR(Scalars(s->dims(), dims));
    out = Shape(*type, std::move(dims));
    if (s->dynamic_dims()) {
      if (s->dynamic_dims()->size() != static_cast<size_t>(out.rank())) {
        return Corrupt("shape has " + std::to_string(s->dynamic_dims()->size()) +
                       " dynamic-dimension flags for rank " + std::to_string(out.rank()));
      }
      for (int64_t i = 0; i < out.rank(); ++i) out.set_dynamic_dim(i, s->dynamic_dims()->Get(i) != 0);
    }
    if (const fb::Layout* l = s->layout()) {
      Layout layout;
      KILN_RETURN_IF_ERROR(Scalars(l->minor_to_major(), layout.minor_to_major));
      if (l->tiles()) {
        for (const fb::Tile* t : *l->tiles()) {
          layout.tiles.emplace_back();
          KILN_RETURN_IF_ERROR(Scalars(t->dims(), layout.tiles.back().dims));
        }
      }
      layout.element_size_in_bits = l->element_size_in_bits();
      layout.memory_space = l->memory_space();
      KILN_RETURN_IF_ERROR(Str(l->other_suffix(), layout.other_suffix));
      out.set_layout(std::move(layout));
    }
    return Status::Ok();
  }
  Status Shapes(const Vector<flatbuffers::Offset<fb::Shape>>* v, std::vector<Shape>& out) {
    if (v == nullptr) return Status::Ok();
    for (const fb::Shape* s : *v) {
      out.emplace_back();
      KILN_RETURN_IF_ERROR(ShapeOf(s, out.back()));
    }
    return Status::Ok();
  }

  Status Alloc(const fb::Allocation* a, th::Allocation& out) {
    out.size = a->size();
    out.alignment = a->alignment();
    if (const fb::ParameterRef* p = a->parameter()) {
      out.parameter.emplace();
      out.parameter->number = p->number();
      KILN_RETURN_IF_ERROR(Scalars(p->index(), out.parameter->index));
    }
    if (const fb::OutputRef* o = a->output()) {
      out.output.emplace();
      KILN_RETURN_IF_ERROR(Scalars(o->index(), *out.output));
    }
    if (a->constant_index().has_value()) out.constant = a->constant_index().value();
    out.color = a->color();
    out.zero_initialize = a->zero_initialize();
    return Status::Ok();
  }

  Status Const(size_t index, const fb::Constant* c, th::Constant& out) {
    KILN_RETURN_IF_ERROR(Str(c->name(), out.name));
    if (const Vector<uint8_t>* data = c->data()) {
      // Alignment is relative to the start of the file, which is what a
      // runtime mapping the file page-aligned relies on.
      const auto offset = static_cast<size_t>(data->data() - base_);
      if (data->size() > 0 && offset % kConstantAlignment != 0) {
        return Corrupt("data of constant " + std::to_string(index) + " (" +
                       th::QuoteForMessage(out.name) + ") is at file offset " +
                       std::to_string(offset) + ", not " + std::to_string(kConstantAlignment) +
                       "-byte aligned");
      }
      KILN_RETURN_IF_ERROR(Scalars(data, out.bytes));
    }
    return Status::Ok();
  }

  Status Sig(const fb::Signature& s, th::Signature& out) {
    KILN_RETURN_IF_ERROR(Shapes(s.parameters(), out.parameters));
    KILN_RETURN_IF_ERROR(ShapeOf(s.result(), out.result).WithContext("entry result"));
    if (s.aliases()) {
      for (const fb::InputOutputAlias* a : *s.aliases()) {
        th::InputOutputAlias& alias = out.aliases.emplace_back();
        KILN_RETURN_IF_ERROR(Scalars(a->output_index(), alias.output_index));
        alias.parameter_number = a->parameter_number();
        KILN_RETURN_IF_ERROR(Scalars(a->parameter_index(), alias.parameter_index));
        alias.must_alias = a->must_alias();
      }
    }
    if (s.parameter_leaves()) {
      for (const fb::ParameterLeaf* l : *s.parameter_leaves()) {
        th::ParameterLeaf& leaf = out.parameter_leaves.emplace_back();
        leaf.parameter_number = l->parameter_number();
        KILN_RETURN_IF_ERROR(Scalars(l->index(), leaf.index));
        KILN_RETURN_IF_ERROR(RequiredSlice(l->slice(), leaf.slice, "parameter leaf"));
      }
    }
    if (s.result_leaves()) {
      for (const fb::ResultLeaf* l : *s.result_leaves()) {
        th::ResultLeaf& leaf = out.result_leaves.emplace_back();
        KILN_RETURN_IF_ERROR(Scalars(l->index(), leaf.index));
        KILN_RETURN_IF_ERROR(RequiredSlice(l->slice(), leaf.slice, "result leaf"));
      }
    }
    if (s.dynamic_dimensions()) {
      for (const fb::DynamicDimension* d : *s.dynamic_dimensions()) {
        out.dynamic_dimensions.push_back({d->of_result(), d->leaf(), d->dimension(), d->size_leaf()});
      }
    }
    return Status::Ok();
  }

  Status Info(const fb::ThunkInfo* info, th::ThunkInfo& out) {
    if (info == nullptr) return Status::Ok();
    KILN_RETURN_IF_ERROR(Str(info->profile_name(), out.profile_name));
    if (info->hlo()) {
      for (const fb::HloInstructionRef* h : *info->hlo()) {
        th::HloInstructionRef& ref = out.hlo.emplace_back();
        KILN_RETURN_IF_ERROR(Str(h->name(), ref.name));
        KILN_RETURN_IF_ERROR(Str(h->opcode(), ref.opcode));
        KILN_RETURN_IF_ERROR(Str(h->op_name(), ref.op_name));
      }
    }
    if (const fb::CostEstimate* c = info->cost()) {
      out.cost = {c->flops(), c->transcendentals(), c->bytes_read(), c->bytes_written()};
    }
    return Status::Ok();
  }

  Status Sequence(const fb::SequenceThunk* s, th::SequenceThunk& out) {
    if (s == nullptr) return Corrupt("missing thunk sequence");
    if (s->thunks() == nullptr) return Status::Ok();
    KILN_RETURN_IF_ERROR(Charge(s->thunks()->size() * kMinBytesPerThunk));
    out.thunks.reserve(s->thunks()->size());
    for (const fb::Thunk* t : *s->thunks()) {
      out.thunks.emplace_back();
      KILN_RETURN_IF_ERROR(ThunkOf(t, out.thunks.back()));
    }
    return Status::Ok();
  }

  Status ThunkOf(const fb::Thunk* t, th::Thunk& out) {
    KILN_RETURN_IF_ERROR(Info(t->info(), out.info));
    out.stream = t->stream();
    out.record_event = t->record_event();
    KILN_RETURN_IF_ERROR(Scalars(t->wait_events(), out.wait_events));
    const int type = static_cast<int>(t->body_type());
    if (type == 0 || t->body() == nullptr) return Corrupt("thunk " + th::QuoteForMessage(out.info.profile_name) + " has no body");
    if (type > th::kNumThunkKinds) {
      return Corrupt("unknown thunk kind " + std::to_string(type) + " (written by a newer kiln?)");
    }
    switch (static_cast<th::ThunkKind>(type - 1)) {
      case th::ThunkKind::kKernel: return Body(t->body_as_KernelThunk(), out);
      case th::ThunkKind::kGemm: return Body(t->body_as_GemmThunk(), out);
      case th::ThunkKind::kConvolution: return Body(t->body_as_ConvolutionThunk(), out);
      case th::ThunkKind::kFft: return Body(t->body_as_FftThunk(), out);
      case th::ThunkKind::kCopy: return Body(t->body_as_CopyThunk(), out);
      case th::ThunkKind::kMemset: return Body(t->body_as_MemsetThunk(), out);
      case th::ThunkKind::kSequence: return Body(t->body_as_SequenceThunk(), out);
      case th::ThunkKind::kWhile: return Body(t->body_as_WhileThunk(), out);
      case th::ThunkKind::kConditional: return Body(t->body_as_ConditionalThunk(), out);
      case th::ThunkKind::kAllReduce: return Body(t->body_as_AllReduceThunk(), out);
      case th::ThunkKind::kAllGather: return Body(t->body_as_AllGatherThunk(), out);
      case th::ThunkKind::kReduceScatter: return Body(t->body_as_ReduceScatterThunk(), out);
      case th::ThunkKind::kAllToAll: return Body(t->body_as_AllToAllThunk(), out);
      case th::ThunkKind::kCollectivePermute: return Body(t->body_as_CollectivePermuteThunk(), out);
      case th::ThunkKind::kCustomCall: return Body(t->body_as_CustomCallThunk(), out);
      case th::ThunkKind::kRngGetAndUpdateState: return Body(t->body_as_RngGetAndUpdateStateThunk(), out);
      case th::ThunkKind::kCholesky: return Body(t->body_as_CholeskyThunk(), out);
      case th::ThunkKind::kTriangularSolve: return Body(t->body_as_TriangularSolveThunk(), out);
      case th::ThunkKind::kLinalg: return Body(t->body_as_LinalgThunk(), out);
      case th::ThunkKind::kRadixSort: return Body(t->body_as_RadixSortThunk(), out);
      case th::ThunkKind::kCollectiveBroadcast: return Body(t->body_as_CollectiveBroadcastThunk(), out);
      case th::ThunkKind::kCollectiveDone: return Body(t->body_as_CollectiveDoneThunk(), out);
      case th::ThunkKind::kDeviceId: return Body(t->body_as_DeviceIdThunk(), out);
    }
    return Corrupt("unknown thunk kind");
  }

  Status Body(const fb::KernelThunk* k, th::Thunk& out) {
    th::KernelThunk& kernel = out.body.emplace<th::KernelThunk>();
    KILN_RETURN_IF_ERROR(Str(k->kernel_name(), kernel.kernel_name));
    if (k->args()) {
      KILN_RETURN_IF_ERROR(Aligned(k->args()->Data(), alignof(fb::KernelArgument)));
      KILN_RETURN_IF_ERROR(Charge(k->args()->size() * sizeof(fb::KernelArgument)));
      for (const fb::KernelArgument* a : *k->args()) {
        kernel.args.push_back({Slice(a->slice()), a->written()});
      }
    }
    kernel.launch = {Dims(k->grid()), Dims(k->block()), k->shared_memory_bytes()};
    return Status::Ok();
  }

  Status Body(const fb::GemmThunk* g, th::Thunk& out) {
    th::GemmThunk& gemm = out.body.emplace<th::GemmThunk>();
    KILN_RETURN_IF_ERROR(RequiredSlice(g->lhs(), gemm.lhs, "lhs"));
    KILN_RETURN_IF_ERROR(RequiredSlice(g->rhs(), gemm.rhs, "rhs"));
    KILN_RETURN_IF_ERROR(RequiredSlice(g->out(), gemm.out, "out"));
    gemm.workspace = OptionalSlice(g->workspace());
    KILN_RETURN_IF_ERROR(Type(g->lhs_type(), gemm.lhs_type));
    KILN_RETURN_IF_ERROR(Type(g->rhs_type(), gemm.rhs_type));
    KILN_RETURN_IF_ERROR(Type(g->out_type(), gemm.out_type));
    gemm.m = g->m();
    gemm.n = g->n();
    gemm.k = g->k();
    gemm.batch = g->batch();
    gemm.lhs_transposed = g->lhs_transposed();
    gemm.rhs_transposed = g->rhs_transposed();
    gemm.lhs_leading_dim = g->lhs_leading_dim();
    gemm.rhs_leading_dim = g->rhs_leading_dim();
    gemm.out_leading_dim = g->out_leading_dim();
    gemm.lhs_batch_stride = g->lhs_batch_stride();
    gemm.rhs_batch_stride = g->rhs_batch_stride();
    gemm.out_batch_stride = g->out_batch_stride();
    gemm.alpha_real = g->alpha_real();
    gemm.alpha_imag = g->alpha_imag();
    gemm.beta = g->beta();
    gemm.tf32 = g->tf32();
    return Status::Ok();
  }

  Status Body(const fb::ConvolutionThunk* c, th::Thunk& out) {
    th::ConvolutionThunk& conv = out.body.emplace<th::ConvolutionThunk>();
    KILN_RETURN_IF_ERROR(Enum(c->kind(), 3, conv.kind, "convolution kind"));
    KILN_RETURN_IF_ERROR(Slices(c->operands(), conv.operands));
    KILN_RETURN_IF_ERROR(Shapes(c->operand_shapes(), conv.operand_shapes));
    KILN_RETURN_IF_ERROR(RequiredSlice(c->result(), conv.result, "result"));
    KILN_RETURN_IF_ERROR(ShapeOf(c->result_shape(), conv.result_shape));
    conv.scratch = OptionalSlice(c->scratch());
    if (const fb::ConvolutionDimensions* d = c->dimensions()) {
      th::ConvolutionDimensions& dims = conv.dimensions;
      dims.input_batch = d->input_batch();
      dims.input_feature = d->input_feature();
      KILN_RETURN_IF_ERROR(Scalars(d->input_spatial(), dims.input_spatial));
      dims.kernel_input_feature = d->kernel_input_feature();
      dims.kernel_output_feature = d->kernel_output_feature();
      KILN_RETURN_IF_ERROR(Scalars(d->kernel_spatial(), dims.kernel_spatial));
      dims.output_batch = d->output_batch();
      dims.output_feature = d->output_feature();
      KILN_RETURN_IF_ERROR(Scalars(d->output_spatial(), dims.output_spatial));
    }
    if (c->window()) {
      KILN_RETURN_IF_ERROR(Aligned(c->window()->Data(), alignof(fb::WindowDimension)));
      KILN_RETURN_IF_ERROR(Charge(c->window()->size() * sizeof(fb::WindowDimension)));
      for (const fb::WindowDimension* w : *c->window()) {
        conv.window.push_back({w->size(), w->stride(), w->padding_low(), w->padding_high(),
                               w->lhs_dilation(), w->rhs_dilation(), w->reversal()});
      }
    }
    conv.feature_group_count = c->feature_group_count();
    conv.batch_group_count = c->batch_group_count();
    return Status::Ok();
  }

  Status Body(const fb::FftThunk* f, th::Thunk& out) {
    th::FftThunk& fft = out.body.emplace<th::FftThunk>();
    KILN_RETURN_IF_ERROR(Enum(f->type(), 4, fft.type, "FFT type"));
    KILN_RETURN_IF_ERROR(Scalars(f->fft_length(), fft.fft_length));
    KILN_RETURN_IF_ERROR(RequiredSlice(f->input(), fft.input, "input"));
    KILN_RETURN_IF_ERROR(RequiredSlice(f->output(), fft.output, "output"));
    KILN_RETURN_IF_ERROR(ShapeOf(f->input_shape(), fft.input_shape));
    return ShapeOf(f->output_shape(), fft.output_shape);
  }

  Status Body(const fb::CholeskyThunk* c, th::Thunk& out) {
    th::CholeskyThunk& chol = out.body.emplace<th::CholeskyThunk>();
    KILN_RETURN_IF_ERROR(RequiredSlice(c->a(), chol.a, "a"));
    KILN_RETURN_IF_ERROR(RequiredSlice(c->info(), chol.info, "info"));
    KILN_RETURN_IF_ERROR(Type(c->type(), chol.type));
    chol.n = c->n();
    chol.batch = c->batch();
    chol.lower = c->lower();
    return Status::Ok();
  }

  Status Body(const fb::RadixSortThunk* r, th::Thunk& out) {
    th::RadixSortThunk& sort = out.body.emplace<th::RadixSortThunk>();
    KILN_RETURN_IF_ERROR(RequiredSlice(r->keys(), sort.keys, "keys"));
    KILN_RETURN_IF_ERROR(RequiredSlice(r->keys_out(), sort.keys_out, "keys_out"));
    sort.values = OptionalSlice(r->values());
    sort.values_out = OptionalSlice(r->values_out());
    KILN_RETURN_IF_ERROR(Type(r->key_type(), sort.key_type));
    if (sort.values) KILN_RETURN_IF_ERROR(Type(r->value_type(), sort.value_type));
    KILN_RETURN_IF_ERROR(Enum(r->order(), 5, sort.order, "order"));
    sort.rows = r->rows();
    sort.row_length = r->row_length();
    sort.descending = r->descending();
    return Status::Ok();
  }

  Status Body(const fb::TriangularSolveThunk* t, th::Thunk& out) {
    th::TriangularSolveThunk& solve = out.body.emplace<th::TriangularSolveThunk>();
    KILN_RETURN_IF_ERROR(RequiredSlice(t->a(), solve.a, "a"));
    KILN_RETURN_IF_ERROR(RequiredSlice(t->b(), solve.b, "b"));
    KILN_RETURN_IF_ERROR(Type(t->type(), solve.type));
    KILN_RETURN_IF_ERROR(Enum(t->transpose_a(), 3, solve.transpose_a, "transpose_a"));
    solve.m = t->m();
    solve.n = t->n();
    solve.batch = t->batch();
    solve.left_side = t->left_side();
    solve.lower = t->lower();
    solve.unit_diagonal = t->unit_diagonal();
    return Status::Ok();
  }

  Status Body(const fb::LinalgThunk* l, th::Thunk& out) {
    th::LinalgThunk& linalg = out.body.emplace<th::LinalgThunk>();
    KILN_RETURN_IF_ERROR(Enum(l->op(), 5, linalg.op, "linalg op"));
    KILN_RETURN_IF_ERROR(Type(l->type(), linalg.type));
    KILN_RETURN_IF_ERROR(RequiredSlice(l->a(), linalg.a, "a"));
    if (linalg.op == th::LinalgOp::kOrgqr) KILN_RETURN_IF_ERROR(RequiredSlice(l->tau(), linalg.tau, "tau"));
    KILN_RETURN_IF_ERROR(Slices(l->results(), linalg.results));
    linalg.m = l->m();
    linalg.n = l->n();
    linalg.k = l->k();
    linalg.batch = l->batch();
    linalg.lower = l->lower();
    linalg.mode = static_cast<char>(l->mode());
    return Status::Ok();
  }

  Status Body(const fb::CopyThunk* c, th::Thunk& out) {
    th::CopyThunk& copy = out.body.emplace<th::CopyThunk>();
    KILN_RETURN_IF_ERROR(RequiredSlice(c->source(), copy.source, "source"));
    return RequiredSlice(c->destination(), copy.destination, "destination");
  }

  Status Body(const fb::MemsetThunk* m, th::Thunk& out) {
    th::MemsetThunk& memset = out.body.emplace<th::MemsetThunk>();
    memset.pattern = m->pattern();
    return RequiredSlice(m->destination(), memset.destination, "destination");
  }

  Status Body(const fb::RngGetAndUpdateStateThunk* r, th::Thunk& out) {
    th::RngGetAndUpdateStateThunk& rng = out.body.emplace<th::RngGetAndUpdateStateThunk>();
    rng.delta = r->delta();
    return RequiredSlice(r->state(), rng.state, "state");
  }

  Status Body(const fb::SequenceThunk* s, th::Thunk& out) {
    return Sequence(s, out.body.emplace<th::SequenceThunk>());
  }

  Status Body(const fb::WhileThunk* w, th::Thunk& out) {
    th::WhileThunk& loop = out.body.emplace<th::WhileThunk>();
    KILN_RETURN_IF_ERROR(Sequence(w->condition(), loop.condition));
    KILN_RETURN_IF_ERROR(RequiredSlice(w->predicate(), loop.predicate, "predicate"));
    KILN_RETURN_IF_ERROR(Sequence(w->body(), loop.body));
    if (w->trip_count().has_value()) loop.trip_count = w->trip_count().value();
    return Status::Ok();
  }

  Status Body(const fb::ConditionalThunk* c, th::Thunk& out) {
    th::ConditionalThunk& cond = out.body.emplace<th::ConditionalThunk>();
    KILN_RETURN_IF_ERROR(RequiredSlice(c->branch_index(), cond.branch_index, "branch index"));
    cond.is_pred = c->is_pred();
    if (c->branches()) {
      for (const fb::SequenceThunk* b : *c->branches()) {
        cond.branches.emplace_back();
        KILN_RETURN_IF_ERROR(Sequence(b, cond.branches.back()));
      }
    }
    return Status::Ok();
  }

  Status Config(const fb::CollectiveConfig* c, th::CollectiveConfig& out) {
    if (c == nullptr) return Status::Ok();
    if (c->replica_groups()) {
      for (const fb::ReplicaGroup* g : *c->replica_groups()) {
        out.replica_groups.emplace_back();
        KILN_RETURN_IF_ERROR(Scalars(g->ids(), out.replica_groups.back()));
      }
    }
    if (c->channel_id().has_value()) out.channel_id = c->channel_id().value();
    out.use_global_device_ids = c->use_global_device_ids();
    if (c->device_groups()) {
      for (const fb::ReplicaGroup* g : *c->device_groups()) {
        out.device_groups.emplace_back();
        KILN_RETURN_IF_ERROR(Scalars(g->ids(), out.device_groups.back()));
      }
    }
    if (c->async_id().has_value()) out.async_id = c->async_id().value();
    return Status::Ok();
  }
  Status Buffer(const fb::CollectiveBuffer* b, th::CollectiveBuffer& out) {
    if (b == nullptr) return Corrupt("missing collective buffer");
    KILN_RETURN_IF_ERROR(RequiredSlice(b->source(), out.source, "source"));
    KILN_RETURN_IF_ERROR(RequiredSlice(b->destination(), out.destination, "destination"));
    KILN_RETURN_IF_ERROR(Type(b->element_type(), out.element_type));
    out.element_count = b->element_count();
    return Scalars(b->dims(), out.dims);
  }
  Status Buffers(const Vector<flatbuffers::Offset<fb::CollectiveBuffer>>* v,
                 std::vector<th::CollectiveBuffer>& out) {
    if (v == nullptr) return Status::Ok();
    for (const fb::CollectiveBuffer* b : *v) {
      out.emplace_back();
      KILN_RETURN_IF_ERROR(Buffer(b, out.back()));
    }
    return Status::Ok();
  }

  Status Body(const fb::AllReduceThunk* t, th::Thunk& out) {
    th::AllReduceThunk& op = out.body.emplace<th::AllReduceThunk>();
    KILN_RETURN_IF_ERROR(Config(t->config(), op.config));
    KILN_RETURN_IF_ERROR(Enum(t->reduction(), 6, op.reduction, "reduction kind"));
    return Buffers(t->buffers(), op.buffers);
  }
  Status Body(const fb::AllGatherThunk* t, th::Thunk& out) {
    th::AllGatherThunk& op = out.body.emplace<th::AllGatherThunk>();
    KILN_RETURN_IF_ERROR(Config(t->config(), op.config));
    op.dimension = t->dimension();
    return Buffers(t->buffers(), op.buffers);
  }
  Status Body(const fb::ReduceScatterThunk* t, th::Thunk& out) {
    th::ReduceScatterThunk& op = out.body.emplace<th::ReduceScatterThunk>();
    KILN_RETURN_IF_ERROR(Config(t->config(), op.config));
    KILN_RETURN_IF_ERROR(Enum(t->reduction(), 6, op.reduction, "reduction kind"));
    op.dimension = t->dimension();
    return Buffers(t->buffers(), op.buffers);
  }
  Status Body(const fb::AllToAllThunk* t, th::Thunk& out) {
    th::AllToAllThunk& op = out.body.emplace<th::AllToAllThunk>();
    KILN_RETURN_IF_ERROR(Config(t->config(), op.config));
    if (t->split_dimension().has_value()) op.split_dimension = t->split_dimension().value();
    return Buffers(t->buffers(), op.buffers);
  }
  Status Body(const fb::CollectivePermuteThunk* t, th::Thunk& out) {
    th::CollectivePermuteThunk& op = out.body.emplace<th::CollectivePermuteThunk>();
    KILN_RETURN_IF_ERROR(Config(t->config(), op.config));
    if (const auto* pairs = t->source_target_pairs()) {
      KILN_RETURN_IF_ERROR(Aligned(pairs->Data(), alignof(fb::SourceTargetPair)));
      KILN_RETURN_IF_ERROR(Charge(pairs->size() * sizeof(fb::SourceTargetPair)));
      for (const fb::SourceTargetPair* p : *pairs) {
        op.source_target_pairs.emplace_back(p->source(), p->target());
      }
    }
    if (const auto* pairs = t->device_pairs()) {
      KILN_RETURN_IF_ERROR(Aligned(pairs->Data(), alignof(fb::SourceTargetPair)));
      KILN_RETURN_IF_ERROR(Charge(pairs->size() * sizeof(fb::SourceTargetPair)));
      for (const fb::SourceTargetPair* p : *pairs) op.device_pairs.emplace_back(p->source(), p->target());
    }
    return Buffer(t->buffer(), op.buffer);
  }
  Status Body(const fb::CollectiveBroadcastThunk* t, th::Thunk& out) {
    th::CollectiveBroadcastThunk& op = out.body.emplace<th::CollectiveBroadcastThunk>();
    KILN_RETURN_IF_ERROR(Config(t->config(), op.config));
    return Buffers(t->buffers(), op.buffers);
  }
  Status Body(const fb::CollectiveDoneThunk* t, th::Thunk& out) {
    out.body.emplace<th::CollectiveDoneThunk>().async_id = t->async_id();
    return Status::Ok();
  }
  Status Body(const fb::DeviceIdThunk* t, th::Thunk& out) {
    th::DeviceIdThunk& op = out.body.emplace<th::DeviceIdThunk>();
    KILN_RETURN_IF_ERROR(Enum(t->kind(), 2, op.kind, "device id kind"));
    return RequiredSlice(t->destination(), op.destination, "destination");
  }
  Status Body(const fb::CustomCallThunk* c, th::Thunk& out) {
    th::CustomCallThunk& call = out.body.emplace<th::CustomCallThunk>();
    KILN_RETURN_IF_ERROR(Str(c->target(), call.target));
    KILN_RETURN_IF_ERROR(Slices(c->operands(), call.operands));
    KILN_RETURN_IF_ERROR(Slices(c->results(), call.results));
    if (const Vector<uint8_t>* config = c->backend_config()) {
      KILN_RETURN_IF_ERROR(Charge(config->size()));
      call.backend_config.assign(reinterpret_cast<const char*>(config->data()), config->size());
    }
    call.api_version = c->api_version();
    return Status::Ok();
  }

  Status Image(const fb::KernelImage* image, KernelImage& out) {
    KILN_RETURN_IF_ERROR(Str(image->target(), out.target));
    KILN_RETURN_IF_ERROR(Enum(image->kind(), 2, out.kind, "target kind"));
    if (image->cubins()) {
      for (const fb::Cubin* c : *image->cubins()) {
        CubinImage& cubin = out.cubins.emplace_back();
        cubin.sm_arch = c->sm_arch();
        KILN_RETURN_IF_ERROR(Scalars(c->image(), cubin.data));
      }
    }
    KILN_RETURN_IF_ERROR(Str(image->ptx(), out.ptx));
    KILN_RETURN_IF_ERROR(Scalars(image->shared_object(), out.shared_object));
    if (image->cpu_level()) KILN_RETURN_IF_ERROR(Str(image->cpu_level(), out.cpu_level));
    if (image->cpu_features()) {
      for (const flatbuffers::String* f : *image->cpu_features())
        KILN_RETURN_IF_ERROR(Str(f, out.cpu_features.emplace_back()));
    }
    if (image->kernels()) {
      for (const fb::KernelEntry* k : *image->kernels()) {
        KernelEntry& entry = out.kernels.emplace_back();
        KILN_RETURN_IF_ERROR(Str(k->name(), entry.name));
        entry.launch = {Dims(k->grid()), Dims(k->block()), k->shared_memory_bytes()};
      }
    }
    return Status::Ok();
  }

  const uint8_t* base_;
  size_t budget_;
};

// The fields read before full verification (see bef.fbs).
struct Preamble {
  uint32_t schema_version = 0;
  uint64_t file_size = 0;
  size_t checksum_offset = 0;  // of the checksum field in the file; 0 if absent
  uint64_t checksum = 0;
};

// Reads the preamble after verifying only what those reads touch.
StatusOr<Preamble> ReadPreamble(const uint8_t* buf, size_t size) {
  flatbuffers::Verifier::Options options;
  flatbuffers::Verifier verifier(buf, size, options);
  const flatbuffers::uoffset_t root = verifier.VerifyOffset(0);
  if (root == 0) return Corrupt("bad root offset");
  const auto* table = reinterpret_cast<const flatbuffers::Table*>(buf + root);
  if (!table->VerifyTableStart(verifier) ||
      !table->VerifyField<uint32_t>(verifier, fb::BefFile::VT_SCHEMA_VERSION, 4) ||
      !table->VerifyField<uint64_t>(verifier, fb::BefFile::VT_FILE_SIZE, 8) ||
      !table->VerifyField<uint64_t>(verifier, fb::BefFile::VT_CHECKSUM, 8)) {
    return Corrupt("bad root table");
  }
  const flatbuffers::voffset_t checksum_field = table->GetOptionalFieldOffset(fb::BefFile::VT_CHECKSUM);
  return Preamble{table->GetField<uint32_t>(fb::BefFile::VT_SCHEMA_VERSION, 0),
                  table->GetField<uint64_t>(fb::BefFile::VT_FILE_SIZE, 0),
                  checksum_field == 0 ? 0 : root + checksum_field,
                  table->GetField<uint64_t>(fb::BefFile::VT_CHECKSUM, 0)};
}

StatusOr<Artifact> LoadAligned(const uint8_t* buf, size_t size) {
  KILN_ASSIGN_OR_RETURN(Preamble preamble, ReadPreamble(buf, size));
  const uint32_t version = preamble.schema_version;
  if ((version >> 16) != kBefVersionMajor) {
    return Error("unsupported .bef version " + std::to_string(version >> 16) + "." +
                 std::to_string(version & 0xffff) + " (this runtime reads " +
                 std::to_string(kBefVersionMajor) + ".x)");
  }
  if (preamble.file_size != size) {
    return Error(std::string(preamble.file_size > size ? "truncated" : "oversized") +
                 " .bef file (" + std::to_string(size) + " bytes, the file records " +
                 std::to_string(preamble.file_size) + ")");
  }
  // Before anything walks the tables, let alone maps or runs a kernel.
  if (preamble.checksum_offset == 0) return Corrupt("no checksum");
  KILN_RETURN_IF_ERROR(VerifyChecksums({buf, size}, preamble.checksum_offset, preamble.checksum)
                           .WithContext("corrupt .bef file"));
  if (!VerifyBefStructure(buf, size)) {
    return Corrupt("FlatBuffers verification failed (damaged file)");
  }
  Artifact artifact;
  KILN_RETURN_IF_ERROR(Reader(buf, size).Read(*fb::GetBefFile(buf), artifact));
  KILN_RETURN_IF_ERROR(ValidateArtifact(artifact).WithContext("invalid .bef file"));
  return artifact;
}

}  // namespace

StatusOr<Artifact> LoadArtifact(std::span<const uint8_t> bytes) {
  // Identifier sits after the 4-byte root offset.
  if (bytes.size() < 8) {
    return Error("not a .bef file (" + std::to_string(bytes.size()) + " bytes is too short)");
  }
  if (std::memcmp(bytes.data() + 4, kBefFileIdentifier, 4) != 0) {
    return Error("not a .bef file (file identifier '" + PrintableIdentifier(bytes.data() + 4) +
                 "', expected '" + kBefFileIdentifier + "')");
  }
  if (bytes.size() >= FLATBUFFERS_MAX_BUFFER_SIZE) {
    return Error(".bef file too large (" + std::to_string(bytes.size()) + " bytes)");
  }
  // FlatBuffers reads scalars in place; give it 8-byte aligned memory.
  if (reinterpret_cast<uintptr_t>(bytes.data()) % 8 == 0) {
    return LoadAligned(bytes.data(), bytes.size());
  }
  std::unique_ptr<uint64_t[]> copy(new uint64_t[(bytes.size() + 7) / 8]);
  std::memcpy(copy.get(), bytes.data(), bytes.size());
  return LoadAligned(reinterpret_cast<const uint8_t*>(copy.get()), bytes.size());
}

StatusOr<Artifact> LoadArtifactFile(const std::string& path) {
  std::ifstream in(path, std::ios::binary | std::ios::ate);
  if (!in) return Error("cannot open " + path + ": " + std::strerror(errno));
  const std::streamoff size = in.tellg();
  if (size < 0) return Error("cannot read " + path);
  if (static_cast<uint64_t>(size) >= FLATBUFFERS_MAX_BUFFER_SIZE) {
    return Error(path + ": .bef file too large (" + std::to_string(size) + " bytes)");
  }
  std::vector<uint8_t> bytes(static_cast<size_t>(size));
  in.seekg(0);
  in.read(reinterpret_cast<char*>(bytes.data()), size);
  if (!in) return Error("cannot read " + path);
  StatusOr<Artifact> artifact = LoadArtifact(bytes);
  if (!artifact.ok()) return artifact.status().WithContext(path);
  return artifact;
}

}  // namespace kiln::bef
