# Locates kiln's external dependencies. LLVM/MLIR are needed only by the
# compiler's code generator; CUDA is optional and only its headers are used
# at build time (libraries are opened with dlopen at run time).

list(APPEND CMAKE_PREFIX_PATH /usr/lib/llvm-22)
find_package(MLIR CONFIG QUIET)
if(MLIR_FOUND)
  message(STATUS "kiln: MLIR ${LLVM_PACKAGE_VERSION} found at ${MLIR_DIR}")
  set(KILN_HAVE_MLIR ON)
else()
  message(STATUS "kiln: MLIR not found; the compiler's code generator is not built (run scripts/setup.sh)")
  set(KILN_HAVE_MLIR OFF)
endif()

if(EXISTS /usr/local/cuda/include/cuda.h)
  set(KILN_CUDA_INCLUDE_DIR /usr/local/cuda/include)
  set(KILN_HAVE_CUDA_HEADERS ON)
  message(STATUS "kiln: CUDA headers found at ${KILN_CUDA_INCLUDE_DIR}; CUDA backend enabled")
else()
  set(KILN_HAVE_CUDA_HEADERS OFF)
  message(STATUS "kiln: no CUDA headers in /usr/local/cuda; building host-only")
endif()

if(KILN_BUILD_TESTS)
  find_package(GTest REQUIRED)
endif()
find_package(benchmark QUIET)
