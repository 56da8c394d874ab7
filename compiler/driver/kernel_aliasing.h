// KernelAliasing: what the thunk program's buffer slices tell codegen about
// the arguments of each kernel (codegen::KernelArgumentAliasing): which
// arguments are passed exactly the same buffer, and which overlap no other
// argument that is written. Buffer assignment decides this; codegen turns it
// into llvm.noalias and in-place pointers so that host loops vectorize and
// loop-invariant loads leave inner loops.
#pragma once

#include <map>
#include <string>

#include "compiler/codegen/kernel_codegen.h"
#include "thunks/program.h"

namespace kiln::compiler {

// One entry per kernel name launched in `program`. A kernel launched by
// several thunks gets only what holds for every launch.
std::map<std::string, codegen::KernelArgumentAliasing> KernelAliasing(const thunks::ThunkProgram& program);

}  // namespace kiln::compiler
