// Build identities: which build of kiln's compiler (and of the shared
// libraries it generates code with) is running, for cache keys. A cache
// entry holds what one build produced; another build (any change to the
// compiler, LLVM or the code generators) may produce something else, so its
// entries must not match.
#pragma once

#include <string>

namespace kiln::cache {

// "build-id:<hex>", the GNU build-id of the loaded ELF object (program or
// shared library) that contains `address` (the linker derives it from the
// linked contents, so it changes with the code); when the object has none,
// "xxh3-128:<hex>" of the object file's bytes instead; "" when neither can
// be found (then nothing may be cached).
std::string ObjectBuildIdentity(const void* address);

// ObjectBuildIdentity of the object that contains kiln's compiler.
std::string KilnBuildIdentity();

}  // namespace kiln::cache
