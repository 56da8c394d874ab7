// RingAllReduce: a ring all-reduce over Gloo's transport that reads its
// input where it lies and writes a distinct output, and RingReduceScatter,
// its first half. Internal to the runtime (HostCommunicator::AllReduce when
// the result buffer is not the operand's, HostCommunicator::ReduceScatter).
//
// Gloo's own all-reduce, given an input apart from its output, first copies
// every segment of the input into the output and then reduces there: one
// more pass over the whole message than the in-place call, and the 2-device
// loopback all-reduce is bound by memory traffic (collective_bench measured
// it 15-30% slower than in place from 16 MiB up). Here the first chunk a
// rank sends goes out of `in`, and every chunk it receives is reduced with
// its own part of `in` straight into `out`, so the out-of-place operation
// moves the bytes the in-place one does.
//
// The algorithm is the usual ring: the message is cut into one chunk per
// rank; in n - 1 reduce-scatter steps each rank passes a partial sum to its
// left neighbour and takes one from its right, after which rank r holds
// chunk r reduced over every rank; n - 1 all-gather steps then pass the
// reduced chunks around. Within a step a chunk moves in segments (a
// quarter of it, from 64 KiB up to 1 MiB), two in flight in the
// reduce-scatter, so reducing one overlaps receiving the next. Each chunk accumulates as in Gloo's ring: the local value first,
// the received partial second.
#pragma once

#include <chrono>
#include <cstddef>
#include <cstdint>

#include "runtime/collective_reduction.h"

namespace gloo {
class Context;
}  // namespace gloo

namespace kiln::runtime {

// `out` (count elements of elem_size bytes, not overlapping `in`) receives
// the reduction of every rank's `in`. `slot` keeps the messages apart from
// those of other operations on the context. Throws as Gloo does (a timeout,
// a peer that went away).
void RingAllReduce(gloo::Context& context, const void* in, void* out, size_t count, size_t elem_size,
                   ReduceFunction reduce, uint64_t slot, std::chrono::milliseconds timeout);

// The ring's first half: chunk `rank` of `out` (elements count * rank / n
// up to count * (rank + 1) / n) receives that chunk reduced over every
// rank; the rest of `out` is left holding partial sums. Half the traffic of
// an all-reduce, for reduce-scatter.
void RingReduceScatter(gloo::Context& context, const void* in, void* out, size_t count, size_t elem_size,
                       ReduceFunction reduce, uint64_t slot, std::chrono::milliseconds timeout);

}  // namespace kiln::runtime
