// The FlatBuffers verifier over a whole .bef buffer, with kiln's limits on
// nesting depth and table count. Shared by the loader and the checksum
// diagnosis, which must not walk tables the verifier has not accepted.
#pragma once

#include <cstddef>
#include <cstdint>

namespace kiln::bef {

// True if `buf` (8-byte aligned) is a structurally valid BefFile buffer:
// offsets, vectors and strings in bounds and aligned, depth and table
// count within limits. Says nothing about checksums or semantics.
bool VerifyBefStructure(const uint8_t* buf, size_t size);

}  // namespace kiln::bef
