// Buffers of a thunk program: allocations and the slices thunks address.
//
// Like XLA's BufferAllocation, an allocation is one contiguous device (or
// host) buffer that the runtime reserves before running the program; a slice
// is a byte range of one allocation. Thunks never hold pointers, only
// slices, so a program is plain data that serializes without fix-ups and can
// be run against any set of buffers of the recorded sizes.
#pragma once

#include <cstdint>
#include <optional>
#include <string>

#include "common/shape.h"

namespace kiln::thunks {

// Bytes [offset, offset + size) of allocation number `allocation`.
struct BufferSlice {
  int32_t allocation = 0;
  int64_t offset = 0;
  int64_t size = 0;

  // End of the byte range; only meaningful once the slice is known to be in
  // bounds (see ValidateProgram), which rules out overflow.
  int64_t end() const { return offset + size; }
  // Whether the two slices share a byte (empty slices share none).
  bool Overlaps(const BufferSlice& other) const {
    return allocation == other.allocation && size > 0 && other.size > 0 && offset < other.end() &&
           other.offset < end();
  }
  // "a2[0:4096]": allocation 2, bytes 0 up to (excluding) 4096.
  std::string ToString() const;
  bool operator==(const BufferSlice&) const = default;
};

// The entry parameter (and the leaf within a tuple parameter) an allocation
// receives from the caller.
struct ParameterRef {
  int64_t number = 0;
  ShapeIndex index;
  bool operator==(const ParameterRef&) const = default;
};

// An allocation's role. Roles combine: with input_output_alias a donated
// parameter's allocation is also an output, and a constant that is the
// result is both a constant and an output. An allocation with no role holds
// temporaries (kTemp). kind() reports the primary role for display.
enum class AllocationKind { kParameter, kOutput, kConstant, kTemp };
std::string_view AllocationKindName(AllocationKind kind);  // "parameter", ...

struct Allocation {
  int64_t size = 0;
  int64_t alignment = 64;  // bytes; a power of two
  std::optional<ParameterRef> parameter;  // set: filled from a caller's argument
  std::optional<ShapeIndex> output;       // set: live out, at this result index
  std::optional<int64_t> constant;        // set: index into ThunkProgram::constants
  // Memory space (XLA's layout S(n)) of the values it holds: temporaries of
  // different colors never share an arena. 0 is the default device memory.
  int64_t color = 0;
  // The runtime zeroes it before every execution: some thunk (or the
  // caller, for a result) may read bytes of it before anything writes them
  // (thunks/initialization_analysis.h). True unless proven otherwise, so
  // hand-built programs and files without the bit keep zeroed memory.
  // Only writable memory is zeroed: never a constant, and of a parameter's
  // allocation only the bytes outside the argument's slice.
  bool zero_initialize = true;

  bool is_parameter() const { return parameter.has_value(); }
  bool is_output() const { return output.has_value(); }
  bool is_constant() const { return constant.has_value(); }
  bool is_temp() const { return !is_parameter() && !is_output() && !is_constant(); }
  // Parameter before constant before output before temp.
  AllocationKind kind() const;
  // "size=4096 align=64 parameter 0 {} output {1}" (" color 1" when not 0)
  std::string ToString() const;
  bool operator==(const Allocation&) const = default;
};

}  // namespace kiln::thunks
