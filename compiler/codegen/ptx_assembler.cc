// PTX -> cubin with NVIDIA's ptxas, and relocatable cubins -> one cubin
// with nvlink, each run as a subprocess (posix_spawn, no shell). Both are
// optional: without ptxas the CUDA image carries PTX only.
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
namespace {

std::string FindCudaTool(const std::string& name) {
  const char* home = std::getenv("CUDA_HOME");
  for (std::string root : {home ? std::string(home) : std::string(), std::string("/usr/local/cuda")}) {
    if (root.empty()) continue;
    std::string path = root + "/bin/" + name;
    if (access(path.c_str(), X_OK) == 0) return path;
  }
  return "";
}

// Runs `args` (args[0] the executable) with stdin from /dev/null and
// stdout and stderr into `log`; returns whether it exited with status 0.
StatusOr<bool> RunTool(std::vector<std::string> args, const TempFile& log) {
  std::vector<char*> argv;
  for (std::string& a : args) argv.push_back(a.data());
  argv.push_back(nullptr);
  posix_spawn_file_actions_t actions;
  posix_spawn_file_actions_init(&actions);
  posix_spawn_file_actions_addopen(&actions, 0, "/dev/null", O_RDONLY, 0);
  posix_spawn_file_actions_addopen(&actions, 1, log.path().c_str(), O_WRONLY | O_TRUNC, 0);
  posix_spawn_file_actions_adddup2(&actions, 1, 2);
  pid_t pid = 0;
  int rc = posix_spawn(&pid, args[0].c_str(), &actions, nullptr, argv.data(), environ);
  posix_spawn_file_actions_destroy(&actions);
  if (rc != 0) return Error("cannot run " + args[0] + ": " + std::strerror(rc));
  int status = 0;
  while (waitpid(pid, &status, 0) < 0) {
    if (errno != EINTR) return Error("waiting for " + args[0] + " failed: " + std::string(std::strerror(errno)));
  }
  return WIFEXITED(status) && WEXITSTATUS(status) == 0;
}

std::string LogText(const TempFile& log) {
  StatusOr<std::vector<uint8_t>> text = log.Read();
  return text.ok() ? std::string(text->begin(), text->end()) : "";
}

}  // namespace

std::string FindPtxas() { return FindCudaTool("ptxas"); }
std::string FindNvlink() { return FindCudaTool("nvlink"); }

StatusOr<std::vector<uint8_t>> AssemblePtx(const std::string& ptxas, const std::string& ptx,
                                           const std::string& arch, bool relocatable) {
  KILN_ASSIGN_OR_RETURN(TempFile input, TempFile::Create(".ptx"));
  KILN_RETURN_IF_ERROR(input.Write(ptx.data(), ptx.size()));
  KILN_ASSIGN_OR_RETURN(TempFile output, TempFile::Create(".cubin"));
  KILN_ASSIGN_OR_RETURN(TempFile log, TempFile::Create(".log"));
  std::vector<std::string> args = {ptxas, "-arch=" + arch, "-o", output.path(), input.path()};
  if (relocatable) args.insert(args.begin() + 1, "-c");
  KILN_ASSIGN_OR_RETURN(bool ok, RunTool(std::move(args), log));
  if (!ok) return Error("ptxas -arch=" + arch + " rejected the generated PTX: " + LogText(log));
  return output.Read();
}

StatusOr<std::vector<uint8_t>> LinkCubins(const std::string& nvlink, const std::vector<std::vector<uint8_t>>& cubins,
                                          const std::string& arch) {
  std::vector<TempFile> inputs;
  std::vector<std::string> args = {nvlink, "-arch=" + arch};
  for (const std::vector<uint8_t>& cubin : cubins) {
    KILN_ASSIGN_OR_RETURN(TempFile input, TempFile::Create(".cubin"));
    KILN_RETURN_IF_ERROR(input.Write(cubin.data(), cubin.size()));
    args.push_back(input.path());
    inputs.push_back(std::move(input));
  }
  KILN_ASSIGN_OR_RETURN(TempFile output, TempFile::Create(".cubin"));
  KILN_ASSIGN_OR_RETURN(TempFile log, TempFile::Create(".log"));
  args.push_back("-o");
  args.push_back(output.path());
  KILN_ASSIGN_OR_RETURN(bool ok, RunTool(std::move(args), log));
  if (!ok) return Error("nvlink -arch=" + arch + " failed to link the kernels' cubins: " + LogText(log));
  return output.Read();
}

}  // namespace kiln::codegen::internal
