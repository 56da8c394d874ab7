// Ring all-reduce from a separate input (see host_ring_allreduce.h).
#include "runtime/host_ring_allreduce.h"

#include <algorithm>
#include <memory>
#include <stdexcept>
#include <string>
#include <vector>

#include <gloo/context.h>
#include <gloo/transport/unbound_buffer.h>

namespace kiln::runtime {
namespace {

// A chunk moves in segments of at most kMaxSegmentBytes, and in about
// kSegmentsPerChunk when it is small (down to kMinSegmentBytes), so that
// even a mid-sized message overlaps reducing with receiving.
constexpr size_t kMaxSegmentBytes = size_t{1} << 20;
constexpr size_t kMinSegmentBytes = size_t{64} << 10;
constexpr size_t kSegmentsPerChunk = 4;

// The segment size of `count` elements on n ranks, a whole number of
// elements; the same on every rank.
size_t SegmentBytes(size_t count, int n, size_t elem_size) {
  const size_t chunk = (count + n - 1) / n * elem_size;
  const size_t bytes = std::clamp((chunk + kSegmentsPerChunk - 1) / kSegmentsPerChunk, kMinSegmentBytes,
                                  kMaxSegmentBytes);
  return elem_size * std::max<size_t>(1, bytes / elem_size);
}

struct Range {
  size_t offset = 0, bytes = 0;
};

// One ring all-reduce on one rank: its buffers and the chunk layout.
class Ring {
 public:
  Ring(gloo::Context& context, const void* in, void* out, size_t count, size_t elem_size, ReduceFunction reduce,
       uint64_t slot, std::chrono::milliseconds timeout)
      : n_(context.size),
        rank_(context.rank),
        left_((context.rank + context.size - 1) % context.size),
        right_((context.rank + 1) % context.size),
        count_(count),
        elem_size_(elem_size),
        segment_bytes_(SegmentBytes(count, context.size, elem_size)),
        reduce_(reduce),
        slot_(slot),
        timeout_(timeout),
        in_bytes_(static_cast<const uint8_t*>(in)),
        out_bytes_(static_cast<uint8_t*>(out)),
        scratch_(new uint8_t[2 * segment_bytes_]),
        in_(context.createUnboundBuffer(const_cast<void*>(in), count * elem_size)),
        out_(context.createUnboundBuffer(out, count * elem_size)),
        tmp_(context.createUnboundBuffer(scratch_.get(), 2 * segment_bytes_)) {}

  // Reduce-scatter: step s sends chunk rank+s+1 (at s = 0 this rank's own
  // input, later the partial received the step before) and reduces chunk
  // rank+s+2 from the right neighbour; the last is chunk rank, which `out`
  // then holds reduced over every rank (the other chunks hold partials).
  void ReduceScatter() {
    for (int s = 0; s + 1 < n_; ++s) {
      const std::vector<Range> send = Segments(rank_ + s + 1), recv = Segments(rank_ + s + 2);
      gloo::transport::UnboundBuffer& source = s == 0 ? *in_ : *out_;
      for (const Range& r : send) source.send(left_, slot_, r.offset, r.bytes);
      for (size_t k = 0; k < recv.size() && k < 2; ++k) tmp_->recv(right_, slot_, k * segment_bytes_, recv[k].bytes);
      for (size_t k = 0; k < recv.size(); ++k) {
        Wait(tmp_->waitRecv(timeout_), "receiving");
        const Range& r = recv[k];
        reduce_(out_bytes_ + r.offset, in_bytes_ + r.offset, scratch_.get() + (k % 2) * segment_bytes_,
                r.bytes / elem_size_);
        if (k + 2 < recv.size()) tmp_->recv(right_, slot_, (k % 2) * segment_bytes_, recv[k + 2].bytes);
      }
      for (size_t k = 0; k < send.size(); ++k) Wait(source.waitSend(timeout_), "sending");
    }
  }

  // All-gather: step s passes on chunk rank+s (reduced here, or received
  // the step before) and receives chunk rank+s+1.
  void AllGather() {
    for (int s = 0; s + 1 < n_; ++s) {
      const std::vector<Range> send = Segments(rank_ + s), recv = Segments(rank_ + s + 1);
      for (const Range& r : recv) out_->recv(right_, slot_, r.offset, r.bytes);
      for (const Range& r : send) out_->send(left_, slot_, r.offset, r.bytes);
      for (size_t k = 0; k < recv.size(); ++k) Wait(out_->waitRecv(timeout_), "receiving");
      for (size_t k = 0; k < send.size(); ++k) Wait(out_->waitSend(timeout_), "sending");
    }
  }

 private:
  // Chunk c (mod n) in segments; element-aligned, the same on every rank.
  std::vector<Range> Segments(int c) const {
    c %= n_;
    const size_t first = count_ * c / n_, last = count_ * (c + 1) / n_;
    std::vector<Range> segments;
    for (size_t at = first * elem_size_, end = last * elem_size_; at < end; at += segment_bytes_)
      segments.push_back({at, std::min(segment_bytes_, end - at)});
    return segments;
  }
  static void Wait(bool completed, const char* what) {
    if (!completed) throw std::runtime_error(std::string("ring all-reduce: ") + what + " was aborted");
  }

  const int n_, rank_, left_, right_;
  const size_t count_, elem_size_, segment_bytes_;
  const ReduceFunction reduce_;
  const uint64_t slot_;
  const std::chrono::milliseconds timeout_;
  const uint8_t* in_bytes_;
  uint8_t* out_bytes_;
  std::unique_ptr<uint8_t[]> scratch_;
  std::unique_ptr<gloo::transport::UnboundBuffer> in_, out_, tmp_;
};

}  // namespace

void RingAllReduce(gloo::Context& context, const void* in, void* out, size_t count, size_t elem_size,
                   ReduceFunction reduce, uint64_t slot, std::chrono::milliseconds timeout) {
  Ring ring(context, in, out, count, elem_size, reduce, slot, timeout);
  ring.ReduceScatter();
  ring.AllGather();
}

void RingReduceScatter(gloo::Context& context, const void* in, void* out, size_t count, size_t elem_size,
                       ReduceFunction reduce, uint64_t slot, std::chrono::milliseconds timeout) {
  Ring(context, in, out, count, elem_size, reduce, slot, timeout).ReduceScatter();
}

}  // namespace kiln::runtime
