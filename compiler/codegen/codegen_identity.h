// CodegenIdentity: what, besides kiln's own code, shapes the code that
// codegen produces: the build of the shared LLVM library it lowers with,
// and the CUDA tools and files it uses (ptxas assembles the cubins, nvlink
// links them, libdevice supplies the math functions). Compile cache keys
// include it, so upgrading LLVM or installing another CUDA toolkit
// invalidates cached code. (nvlink runs on every compile, after the kernel
// cache, so only whole artifacts depend on it; the kernel keys carry it
// too, which costs nothing.)
#pragma once

#include <string>

namespace kiln::codegen {

// "llvm=<build identity>;ptxas=<path>,<bytes>,<mtime ns>;nvlink=...;libdevice=..."
// ("none" for a missing file); "" when LLVM's build cannot be identified
// (then nothing may be cached).
std::string CodegenIdentity();

}  // namespace kiln::codegen
