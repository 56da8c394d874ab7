// A small command-line flag parser shared by the kiln tools (hlo-run,
// bef-run, bef-compile), so they agree on flag spelling and error style
// without depending on an external flags library.
//
// Accepted forms: --name=value, --name value (non-boolean flags), --name and
// --name=true|false|1|0 (booleans). "--" ends the flags; other arguments
// are positional. --help prints the usage. Repeated flags append to list
// flags and replace the value of the others. Flags bind to variables owned
// by the caller, so the parser holds no global state.
#pragma once

#include <cstdint>
#include <optional>
#include <string>
#include <string_view>
#include <variant>
#include <vector>

#include "common/status.h"

namespace kiln::tools {

class FlagParser {
 public:
  // `usage` is printed by --help before the flag list ("hlo-run [flags] FILE").
  FlagParser(std::string program, std::string usage)
      : program_(std::move(program)), usage_(std::move(usage)) {}

  void AddBool(std::string name, bool* target, std::string help);
  void AddString(std::string name, std::string* target, std::string help);
  void AddStringList(std::string name, std::vector<std::string>* target, std::string help);
  void AddInt(std::string name, int64_t* target, std::string help);
  void AddDouble(std::string name, std::optional<double>* target, std::string help);

  // Parses argv[1..argc); positional arguments go to `positional`. Sets
  // help_requested() on --help instead of failing.
  Status Parse(int argc, const char* const* argv, std::vector<std::string>* positional);

  bool help_requested() const { return help_requested_; }
  // Whether the flag appeared on the command line.
  bool Seen(std::string_view name) const;

  const std::string& program() const { return program_; }
  std::string Usage() const;

 private:
  using Target = std::variant<bool*, std::string*, std::vector<std::string>*, int64_t*,
                              std::optional<double>*>;
  struct Flag {
    std::string name;
    Target target;
    std::string help;
    bool seen = false;
  };
  Flag* Find(std::string_view name);
  Status Set(Flag& flag, std::string_view value);

  std::string program_;
  std::string usage_;
  std::vector<Flag> flags_;
  bool help_requested_ = false;
};

// Prints "<program>: error: <first line of status>" to stderr and returns
// the exit code 1; tools end every failure this way.
int ReportError(std::string_view program, const Status& status);

}  // namespace kiln::tools
