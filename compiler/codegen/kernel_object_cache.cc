// Keys and the stored form of cached kernel objects (kernel_object_cache.h).
#include "compiler/codegen/kernel_object_cache.h"

#include <cstring>

#include "compiler/cache/cache_key.h"
#include "compiler/codegen/codegen_session.h"
#include "compiler/cache/compile_cache.h"
#include "compiler/hlo/structural_fingerprint.h"

namespace kiln::codegen {
namespace {

// Bumped whenever KernelObject or its encoding changes.
constexpr int64_t kKernelObjectFormat = 1;

std::string Ints(const std::vector<int64_t>& v) {
  std::string out;
  for (int64_t x : v) out += std::to_string(x) + ",";
  return out;
}

std::string Bools(const std::vector<bool>& v) {
  std::string out;
  for (bool b : v) out += b ? '1' : '0';
  return out;
}

// Length-prefixed fields; int64s in host byte order (entries are read by
// the build that wrote them: their keys name it).
class Writer {
 public:
  void Int(int64_t v) { bytes_.insert(bytes_.end(), reinterpret_cast<uint8_t*>(&v), reinterpret_cast<uint8_t*>(&v) + 8); }
  void Bytes(const void* data, size_t n) {
    Int(static_cast<int64_t>(n));
    const auto* p = static_cast<const uint8_t*>(data);
    bytes_.insert(bytes_.end(), p, p + n);
  }
  std::vector<uint8_t> Take() { return std::move(bytes_); }

 private:
  std::vector<uint8_t> bytes_;
};

// Reads what Writer wrote; any read past the end fails the whole decode.
class Reader {
 public:
  explicit Reader(std::span<const uint8_t> bytes) : bytes_(bytes) {}
  bool Int(int64_t& v) {
    if (bytes_.size() - pos_ < 8) return false;
    std::memcpy(&v, bytes_.data() + pos_, 8);
    pos_ += 8;
    return true;
  }
  template <typename Container>
  bool Bytes(Container& out) {
    int64_t n;
    if (!Int(n) || n < 0 || static_cast<uint64_t>(n) > bytes_.size() - pos_) return false;
    out.assign(bytes_.data() + pos_, bytes_.data() + pos_ + n);
    pos_ += static_cast<size_t>(n);
    return true;
  }
  bool AtEnd() const { return pos_ == bytes_.size(); }

 private:
  std::span<const uint8_t> bytes_;
  size_t pos_ = 0;
};

}  // namespace

std::string KernelObjectCache::Key(const KernelSpec& spec, CodegenTarget target,
                                   const std::string& variant) const {
  cache::CacheKey key("kernel-object");
  key.Add("format", kKernelObjectFormat)
      .Add("codegen", codegen_identity_)
      .Add("target", target == CodegenTarget::kCuda ? "cuda" : "host");
  key.Add(target == CodegenTarget::kCuda ? "cuda-arch" : "host-cpu", variant);
  key.Add("name", spec.name)
      .Add("same-buffer", Ints(spec.aliasing.same_buffer))
      .Add("disjoint", Bools(spec.aliasing.disjoint))
      .Add("computation", hlo::StructuralFingerprint(*spec.computation));
  return key.str();
}

std::vector<uint8_t> EncodeKernelObject(const KernelObject& object) {
  Writer w;
  w.Int(kKernelObjectFormat);
  const CompiledKernel& k = object.kernel;
  w.Bytes(k.name.data(), k.name.size());
  for (int64_t v : k.launch.grid) w.Int(v);
  for (int64_t v : k.launch.block) w.Int(v);
  w.Int(k.launch.shared_mem_bytes);
  w.Int(k.num_args);
  w.Bytes(object.host_object.data(), object.host_object.size());
  w.Bytes(object.ptx.data(), object.ptx.size());
  w.Bytes(object.cubin.data(), object.cubin.size());
  return w.Take();
}

std::optional<KernelObject> DecodeKernelObject(std::span<const uint8_t> bytes) {
  Reader r(bytes);
  KernelObject object;
  CompiledKernel& k = object.kernel;
  int64_t format = 0, num_args = 0;
  bool ok = r.Int(format) && format == kKernelObjectFormat && r.Bytes(k.name);
  for (int64_t& v : k.launch.grid) ok = ok && r.Int(v);
  for (int64_t& v : k.launch.block) ok = ok && r.Int(v);
  ok = ok && r.Int(k.launch.shared_mem_bytes) && r.Int(num_args) && r.Bytes(object.host_object) &&
       r.Bytes(object.ptx) && r.Bytes(object.cubin) && r.AtEnd();
  if (!ok || num_args < 0 || num_args > (1 << 20)) return std::nullopt;
  k.num_args = static_cast<int>(num_args);
  return object;
}

std::optional<KernelObject> KernelObjectCache::Lookup(const KernelSpec& spec, CodegenTarget target,
                                                      const std::string& variant) const {
  std::optional<std::vector<uint8_t>> bytes = cache_.Lookup(Key(spec, target, variant));
  if (!bytes) return std::nullopt;
  std::optional<KernelObject> object = DecodeKernelObject(*bytes);
  // The key names the kernel: an intact entry holds that kernel.
  if (!object || object->kernel.name != spec.name) return std::nullopt;
  return object;
}

void KernelObjectCache::Store(const KernelSpec& spec, CodegenTarget target, const std::string& variant,
                              const KernelObject& object) const {
  Status stored = cache_.Store(Key(spec, target, variant), EncodeKernelObject(object));
  if (stored.ok()) return;
  std::lock_guard<std::mutex> lock(mutex_);
  if (store_error_.empty()) store_error_ = stored.message();
}

std::string KernelObjectCache::store_error() const {
  std::lock_guard<std::mutex> lock(mutex_);
  return store_error_;
}

StatusOr<KernelObject> CompileOneKernelCached(const KernelSpec& spec, CodegenTarget target,
                                              const CodegenOptions& options, const HostCpu& host_cpu,
                                              bool* from_cache) {
  *from_cache = false;
  const KernelObjectCache* cache = options.keep_kernel_ir ? nullptr : options.kernel_cache;
  const std::string variant = target == CodegenTarget::kCuda ? options.cuda_arch : host_cpu.Key();
  if (cache) {
    if (std::optional<KernelObject> hit = cache->Lookup(spec, target, variant)) {
      *from_cache = true;
      return std::move(*hit);
    }
  }
  KILN_ASSIGN_OR_RETURN(KernelObject object, CompileOneKernel(spec, target, options, host_cpu));
  if (cache) cache->Store(spec, target, variant, object);
  return object;
}

StatusOr<std::vector<KernelObject>> CompileOneKernelForHostCpusCached(const KernelSpec& spec,
                                                                      const CodegenOptions& options,
                                                                      const std::vector<HostCpu>& cpus,
                                                                      int64_t* compiled, int64_t* from_cache) {
  return internal::CompileOneKernelForHostCpusCached(spec, options, cpus, compiled, from_cache, nullptr);
}

namespace internal {

StatusOr<std::vector<KernelObject>> CompileOneKernelForHostCpusCached(const KernelSpec& spec,
                                                                      const CodegenOptions& options,
                                                                      const std::vector<HostCpu>& cpus,
                                                                      int64_t* compiled, int64_t* from_cache,
                                                                      CodegenSession* session) {
  const KernelObjectCache* cache = options.keep_kernel_ir ? nullptr : options.kernel_cache;
  std::vector<std::optional<KernelObject>> found(cpus.size());
  std::vector<HostCpu> missing;
  for (size_t c = 0; c < cpus.size(); ++c) {
    if (cache) found[c] = cache->Lookup(spec, CodegenTarget::kHost, cpus[c].Key());
    if (!found[c]) missing.push_back(cpus[c]);
  }
  *from_cache += static_cast<int64_t>(cpus.size() - missing.size());
  *compiled += static_cast<int64_t>(missing.size());
  std::vector<KernelObject> fresh;
  if (!missing.empty()) {
    KILN_ASSIGN_OR_RETURN(fresh, CompileOneKernelForHostCpus(spec, options, missing, session));
  }
  std::vector<KernelObject> objects;
  size_t next = 0;
  for (size_t c = 0; c < cpus.size(); ++c) {
    if (found[c]) {
      objects.push_back(std::move(*found[c]));
      continue;
    }
    if (cache) cache->Store(spec, CodegenTarget::kHost, cpus[c].Key(), fresh[next]);
    objects.push_back(std::move(fresh[next++]));
  }
  return objects;
}

}  // namespace internal

}  // namespace kiln::codegen
