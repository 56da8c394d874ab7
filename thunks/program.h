// ThunkProgram: everything the runtime needs to run a compiled module's
// entry computation on one device, except the kernels' machine code (which
// lives in the artifact's per-target kernel images).
//
// The program owns all of its data by value: allocations, constant bytes,
// the entry signature (how caller arguments and results map onto slices)
// and the root sequence of thunks.
#pragma once

#include <cstdint>
#include <string>
#include <vector>

#include "common/shape.h"
#include "thunks/buffer.h"
#include "thunks/thunk.h"

namespace kiln::thunks {

// Constant data that initializes a constant allocation. Serialized 64-byte
// aligned so a runtime can use it in place (mmap) or DMA it directly.
struct Constant {
  std::string name;  // the HLO constant instruction, for dumps
  std::vector<uint8_t> bytes;
  bool operator==(const Constant&) const = default;
};

// Where one array leaf of an entry parameter lives.
struct ParameterLeaf {
  int64_t parameter_number = 0;
  ShapeIndex index;  // within the parameter's shape; {} for an array parameter
  BufferSlice slice;
  bool operator==(const ParameterLeaf&) const = default;
};

// Where one array leaf of the entry result lives.
struct ResultLeaf {
  ShapeIndex index;  // within the result shape
  BufferSlice slice;
  bool operator==(const ResultLeaf&) const = default;
};

// HLO's input_output_alias: the result leaf at output_index reuses the
// buffer of parameter parameter_number at parameter_index when the caller
// donates it. must_alias: the caller has to donate (XLA's kMustAlias).
struct InputOutputAlias {
  ShapeIndex output_index;
  int64_t parameter_number = 0;
  ShapeIndex parameter_index;
  bool must_alias = false;
  bool operator==(const InputOutputAlias&) const = default;
};

// A bounded dynamic dimension (HLO's `<=N`) of a caller's parameter or
// result leaf. The program computes on the bound; the dimension's size
// travels in an s32[] leaf of its own that the caller never sees: a trailing
// entry parameter that the runtime fills from the argument's shape, or a
// trailing element of the root tuple (caller result, sizes...) that the
// runtime reads to trim the output to its size. The leaves' shapes keep
// their dynamic flags, so the signature prints as the HLO declared it.
struct DynamicDimension {
  bool of_result = false;  // a result leaf's dimension, else a parameter leaf's
  int64_t leaf = 0;        // index into parameter_leaves or result_leaves
  int64_t dimension = 0;
  int64_t size_leaf = 0;   // index, in the same list, of the s32[] holding the size
  bool operator==(const DynamicDimension&) const = default;
};

struct Signature {
  std::vector<Shape> parameters;
  Shape result;  // may be a (nested) tuple
  std::vector<InputOutputAlias> aliases;
  std::vector<ParameterLeaf> parameter_leaves;  // one per array leaf of every parameter
  std::vector<ResultLeaf> result_leaves;        // one per array leaf of the result
  std::vector<DynamicDimension> dynamic_dimensions;
  bool operator==(const Signature&) const = default;
};

// The caller's view of a signature: the leaves that do not carry dynamic
// sizes. They come first in parameter_leaves and result_leaves (checked by
// ValidateProgram), so leaf i of the caller is leaf i of the program.
int64_t CallerParameterCount(const Signature& sig);
int64_t CallerParameterLeafCount(const Signature& sig);
int64_t CallerResultLeafCount(const Signature& sig);
// The result shape the caller sees: element 0 of the root tuple when the
// program returns dynamic sizes, else the whole result.
const Shape& CallerResultShape(const Signature& sig);

struct ThunkProgram {
  // The module's device grid (HLO's replica_count and num_partitions): the
  // program runs on replica_count * num_partitions devices, device d being
  // replica d / num_partitions, partition d % num_partitions.
  int64_t replica_count = 1;
  int64_t num_partitions = 1;
  int64_t device_count() const { return replica_count * num_partitions; }
  std::vector<Allocation> allocations;
  std::vector<Constant> constants;
  Signature signature;
  SequenceThunk root;
  // The streams and events root's thunks use (thunks/streams.h): one stream
  // and no events run the root in order, as every program did before.
  int32_t num_streams = 1;
  int32_t num_events = 0;
  bool operator==(const ThunkProgram&) const = default;
};

// The indices of the array leaves of `shape` in depth-first order ({} for an
// array shape; none for a token).
std::vector<ShapeIndex> ArrayLeafIndices(const Shape& shape);

// Calls fn(thunk, depth) for every thunk under `seq` in pre-order, children
// of control flow included; depth is 1 for the direct children of `seq`.
// Stops descending below max_depth (the thunks at max_depth are visited).
template <typename Fn>
void ForEachThunk(const SequenceThunk& seq, Fn&& fn, int max_depth = 1 << 30, int depth = 1) {
  for (const Thunk& thunk : seq.thunks) {
    fn(thunk, depth);
    if (depth >= max_depth) continue;
    for (const SequenceThunk* child : ChildSequences(thunk)) {
      ForEachThunk(*child, fn, max_depth, depth + 1);
    }
  }
}

}  // namespace kiln::thunks
