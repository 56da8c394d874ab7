// The allocation table of a thunk program (bef-run --print_memory), in the
// spirit of IREE's --print_statistics: what memory one execution needs.
//
//    alloc  kind              bytes  align  role
//        0  parameter            24     64  parameter 0 {}
//        2  output               16     64  output {0}
//        4  constant             16     64  constant 0 'constant.3'
//        5  temp                 64     64
//   parameters     2 allocations           48 bytes (48 B)
//   ... outputs, constants, temps, then the total
//
// An allocation with several roles (a donated parameter that is also an
// output, a constant that is the result) is counted once, under its primary
// kind (thunks::Allocation::kind(): parameter, constant, output, temp).
#pragma once

#include <cstdint>
#include <string>

#include "thunks/program.h"

namespace kiln::tools {

// "64 B", "4.0 KiB", "1.5 MiB", "2.0 GiB".
std::string FormatBytes(int64_t bytes);

std::string FormatMemoryReport(const thunks::ThunkProgram& program);

}  // namespace kiln::tools
