// Error reporting of the emulated driver: CUresult names and texts, and the
// calling thread's error detail (kilnEmuLastErrorDetail).
//
// A CUresult says what kind of failure happened; the detail says where and
// why, in one line (the bad address and the allocation it missed, the PTX
// line that did not parse, the kernel, block and thread that faulted).
// Every entry point that can fail clears the detail when it starts, so the
// detail always belongs to the last failing call on the thread.
#pragma once

#include <cuda.h>

#include <string>

namespace kiln::emu::driver {

// NVIDIA's enum name and message for `result`, or nullptr if unknown.
const char* ErrorName(CUresult result);
const char* ErrorString(CUresult result);

void ClearErrorDetail();
// Sets the calling thread's detail, made one line.
void SetErrorDetail(std::string detail);
// Sets the calling thread's detail (made one line) and returns `result`,
// for `return Fail(CUDA_ERROR_INVALID_VALUE, "...")`.
CUresult Fail(CUresult result, std::string detail);
const std::string& ErrorDetail();

}  // namespace kiln::emu::driver
