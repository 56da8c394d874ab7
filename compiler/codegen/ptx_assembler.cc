// PTX -> cubin with NVIDIA's ptxas, run as a subprocess (posix_spawn, no
// shell). ptxas is optional: without it the CUDA image carries PTX only.
#include <fcntl.h>
#include <spawn.h>
#include <sys/wait.h>
#include <unistd.h>

#include <cerrno>
#include <cstdlib>
#include <cstring>

#include "compiler/codegen/codegen_internal.h"

extern char** environ;

namespace kiln::codegen::internal {

std::string FindPtxas() {
  const char* home = std::getenv("CUDA_HOME");
  for (std::string root : {home ? std::string(home) : std::string(), std::string("/usr/local/cuda")}) {
    if (root.empty()) continue;
    std::string path = root + "/bin/ptxas";
    if (access(path.c_str(), X_OK) == 0) return path;
  }
  return "";
}

StatusOr<std::vector<uint8_t>> AssemblePtx(const std::string& ptxas, const std::string& ptx,
                                           const std::string& arch) {
  KILN_ASSIGN_OR_RETURN(TempFile input, TempFile::Create(".ptx"));
  KILN_RETURN_IF_ERROR(input.Write(ptx.data(), ptx.size()));
  KILN_ASSIGN_OR_RETURN(TempFile output, TempFile::Create(".cubin"));
  KILN_ASSIGN_OR_RETURN(TempFile log, TempFile::Create(".log"));

  std::vector<std::string> args = {ptxas, "-arch=" + arch, "-o", output.path(), input.path()};
  std::vector<char*> argv;
  for (std::string& a : args) argv.push_back(a.data());
  argv.push_back(nullptr);

  // ptxas's stdout and stderr go to the log file, stdin is /dev/null.
  posix_spawn_file_actions_t actions;
  posix_spawn_file_actions_init(&actions);
  posix_spawn_file_actions_addopen(&actions, 0, "/dev/null", O_RDONLY, 0);
  posix_spawn_file_actions_addopen(&actions, 1, log.path().c_str(), O_WRONLY | O_TRUNC, 0);
  posix_spawn_file_actions_adddup2(&actions, 1, 2);
  pid_t pid = 0;
  int rc = posix_spawn(&pid, ptxas.c_str(), &actions, nullptr, argv.data(), environ);
  posix_spawn_file_actions_destroy(&actions);
  if (rc != 0) return Error("cannot run " + ptxas + ": " + std::strerror(rc));
  int status = 0;
  while (waitpid(pid, &status, 0) < 0) {
    if (errno != EINTR) return Error("waiting for ptxas failed: " + std::string(std::strerror(errno)));
  }
  if (!WIFEXITED(status) || WEXITSTATUS(status) != 0) {
    StatusOr<std::vector<uint8_t>> text = log.Read();
    std::string message = text.ok() ? std::string(text->begin(), text->end()) : "";
    return Error("ptxas -arch=" + arch + " rejected the generated PTX: " + message);
  }
  return output.Read();
}

}  // namespace kiln::codegen::internal
