// VerifyBefStructure: see bef_verifier.h.
#include "serialization/bef_verifier.h"

#include <flatbuffers/flatbuffers.h>

#include "serialization/bef_generated.h"
#include "thunks/validate.h"

namespace kiln::bef {
namespace {

// A table nests at most three levels per thunk level (Thunk -> While ->
// Sequence), so this admits kMaxThunkDepth with room for shapes;
// ValidateProgram applies the precise thunk-depth limit.
constexpr flatbuffers::uoffset_t kMaxVerifierDepth = 3 * thunks::kMaxThunkDepth + 64;

}  // namespace

bool VerifyBefStructure(const uint8_t* buf, size_t size) {
  flatbuffers::Verifier::Options options;
  options.max_depth = kMaxVerifierDepth;
  // Each table visit needs its own 4-byte offset slot unless tables are
  // shared (which kiln's writer never does), so this bound never rejects a
  // genuine file and caps the work on a crafted one.
  options.max_tables = static_cast<flatbuffers::uoffset_t>(size / 4 + 16);
  options.check_alignment = true;
  flatbuffers::Verifier verifier(buf, size, options);
  return fb::VerifyBefFileBuffer(verifier);
}

}  // namespace kiln::bef
