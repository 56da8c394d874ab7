// runtime_probe: a program linked against kiln_runtime alone, the way an
// application embedding kiln's runtime is, for the layering test to inspect
// (ldd / nm must find no LLVM, MLIR or lld in it).
//
//   runtime_probe [MODULE.bef]
//
// It references the runtime's whole public path (device, artifact loading,
// executable loading, execution) so the linker pulls those objects in from
// the static libraries. Without an argument it creates a host device and
// prints "ok"; with one it loads the artifact on the host device and prints
// its thunk count.
#include <cstdio>
#include <memory>

#include "runtime/runtime.h"
#include "serialization/artifact.h"

int main(int argc, char** argv) {
  auto device = kiln::runtime::Device::Create(kiln::runtime::DeviceKind::kHost);
  if (!device.ok()) {
    std::fprintf(stderr, "runtime_probe: error: %s\n", device.status().message().c_str());
    return 1;
  }
  if (argc < 2) {
    std::printf("ok\n");
    return 0;
  }
  auto artifact = kiln::bef::LoadArtifactFile(argv[1]);
  if (!artifact.ok()) {
    std::fprintf(stderr, "runtime_probe: error: %s\n", artifact.status().message().c_str());
    return 1;
  }
  auto exe = kiln::runtime::LoadedExecutable::Load(**device, *artifact);
  if (!exe.ok()) {
    std::fprintf(stderr, "runtime_probe: error: %s\n", exe.status().message().c_str());
    return 1;
  }
  auto result = (*exe)->ExecuteSync({});  // fails cleanly if arguments are needed
  std::printf("%zu thunks%s\n", (*exe)->program().root.thunks.size(),
              result.ok() ? "" : " (not executed: needs arguments)");
  return 0;
}
