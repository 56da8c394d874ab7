// CodegenIdentity: what, besides kiln's own code, shapes the code that
// codegen produces: the build of the shared LLVM library it lowers with, and the CUDA tools and files it uses (ptxas assembles the
// cubin, libdevice supplies the math functions). Compile cache keys include
// it, so upgrading LLVM or installing another CUDA toolkit invalidates
// cached code.
#pragma once

#include <string>

namespace kiln::codegen {

// "llvm=<build identity>;ptxas=<path>,<bytes>,<mtime ns>;libdevice=..."
// ("none" for a missing file); "" when LLVM's build cannot be identified
// (then nothing may be cached).
std::string CodegenIdentity();

}  // namespace kiln::codegen
