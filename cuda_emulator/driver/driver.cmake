# libkiln_cuda_emulator.so: the CUDA driver API subset kiln's runtime calls
# and the cuBLAS, cuDNN, cuFFT, cuSOLVER and NCCL doubles, over kiln_cuda_emulator_core. Included by
# cuda_emulator/CMakeLists.txt.
#
# Only the C entry points are exported: sources are compiled with hidden
# visibility (the entry points are marked KILN_EMU_EXPORT), the static
# libraries' symbols are kept local with --exclude-libs, and exports.map
# localizes what header templates still make public, so nothing of
# kiln_common, the core or libstdc++'s inline code can collide with the
# program that loads the library.
add_library(kiln_cuda_emulator SHARED
  driver/device_properties.cc
  driver/driver_api.cc
  driver/driver_errors.cc
  driver/driver_graphs.cc
  driver/driver_launch.cc
  driver/driver_memory.cc
  driver/driver_modules.cc
  driver/driver_streams.cc
  driver/emulated_device.cc
  driver/fault_injector.cc
  driver/graphs.cc
  driver/module_table.cc
  driver/timeline.cc
  libs/cublas_double.cc
  libs/cublaslt_double.cc
  libs/cudnn_double.cc
  libs/cufft_double.cc
  libs/reference_dft.cc
  libs/cusolver_double.cc
  libs/cusolver_decompositions_double.cc
  libs/dense_jacobi.cc
  libs/dense_factorizations.cc
  libs/matrix_operand.cc
  libs/nccl_clique.cc
  libs/nccl_double.cc
)
set_target_properties(kiln_cuda_emulator PROPERTIES
  OUTPUT_NAME kiln_cuda_emulator
  CXX_VISIBILITY_PRESET hidden
  VISIBILITY_INLINES_HIDDEN ON)
target_include_directories(kiln_cuda_emulator PRIVATE ${KILN_CBLAS_INCLUDE_DIR})
target_link_libraries(kiln_cuda_emulator PRIVATE kiln_cuda_emulator_core ${KILN_OPENBLAS_LIBRARY}
                                                 Threads::Threads)
target_link_options(kiln_cuda_emulator PRIVATE -Wl,--no-undefined -Wl,--exclude-libs,ALL
                    -Wl,--version-script=${CMAKE_CURRENT_SOURCE_DIR}/driver/exports.map)
set_property(TARGET kiln_cuda_emulator APPEND PROPERTY LINK_DEPENDS
             ${CMAKE_CURRENT_SOURCE_DIR}/driver/exports.map)
kiln_forbid_llvm(kiln_cuda_emulator)
