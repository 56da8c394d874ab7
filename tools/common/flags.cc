#include "tools/common/flags.h"

#include <charconv>
#include <cstdio>
#include <iostream>

namespace kiln::tools {

void FlagParser::AddBool(std::string name, bool* target, std::string help) {
  flags_.push_back({std::move(name), target, std::move(help)});
}
void FlagParser::AddString(std::string name, std::string* target, std::string help) {
  flags_.push_back({std::move(name), target, std::move(help)});
}
void FlagParser::AddStringList(std::string name, std::vector<std::string>* target, std::string help) {
  flags_.push_back({std::move(name), target, std::move(help)});
}
void FlagParser::AddInt(std::string name, int64_t* target, std::string help) {
  flags_.push_back({std::move(name), target, std::move(help)});
}
void FlagParser::AddDouble(std::string name, std::optional<double>* target, std::string help) {
  flags_.push_back({std::move(name), target, std::move(help)});
}

FlagParser::Flag* FlagParser::Find(std::string_view name) {
  for (Flag& flag : flags_)
    if (flag.name == name) return &flag;
  return nullptr;
}

bool FlagParser::Seen(std::string_view name) const {
  for (const Flag& flag : flags_)
    if (flag.name == name) return flag.seen;
  return false;
}

Status FlagParser::Set(Flag& flag, std::string_view value) {
  flag.seen = true;
  std::string bad = "invalid value '" + std::string(value) + "' for --" + flag.name;
  if (bool** b = std::get_if<bool*>(&flag.target)) {
    if (value == "true" || value == "1") **b = true;
    else if (value == "false" || value == "0") **b = false;
    else return Error(bad + " (expected true or false)");
  } else if (std::string** s = std::get_if<std::string*>(&flag.target)) {
    **s = std::string(value);
  } else if (auto** list = std::get_if<std::vector<std::string>*>(&flag.target)) {
    (*list)->emplace_back(value);
  } else if (int64_t** i = std::get_if<int64_t*>(&flag.target)) {
    auto [ptr, ec] = std::from_chars(value.data(), value.data() + value.size(), **i);
    if (value.empty() || ec != std::errc() || ptr != value.data() + value.size())
      return Error(bad + " (expected an integer)");
  } else if (auto** d = std::get_if<std::optional<double>*>(&flag.target)) {
    double v = 0;
    auto [ptr, ec] = std::from_chars(value.data(), value.data() + value.size(), v);
    if (value.empty() || ec != std::errc() || ptr != value.data() + value.size())
      return Error(bad + " (expected a number)");
    **d = v;
  }
  return Status::Ok();
}

Status FlagParser::Parse(int argc, const char* const* argv, std::vector<std::string>* positional) {
  bool flags_done = false;
  for (int i = 1; i < argc; ++i) {
    std::string_view arg = argv[i];
    if (flags_done || arg.size() < 2 || arg.substr(0, 2) != "--") {
      // "-" alone and other single-dash words are positional.
      positional->emplace_back(arg);
      continue;
    }
    if (arg == "--") {
      flags_done = true;
      continue;
    }
    arg.remove_prefix(2);
    size_t eq = arg.find('=');
    std::string_view name = arg.substr(0, eq);
    if (name == "help" || name == "h") {
      help_requested_ = true;
      continue;
    }
    Flag* flag = Find(name);
    if (!flag) return Error("unknown flag --" + std::string(name) + " (see --help)");
    if (eq != std::string_view::npos) {
      KILN_RETURN_IF_ERROR(Set(*flag, arg.substr(eq + 1)));
    } else if (std::holds_alternative<bool*>(flag->target)) {
      KILN_RETURN_IF_ERROR(Set(*flag, "true"));
    } else if (i + 1 < argc) {
      KILN_RETURN_IF_ERROR(Set(*flag, argv[++i]));
    } else {
      return Error("flag --" + flag->name + " needs a value");
    }
  }
  return Status::Ok();
}

std::string FlagParser::Usage() const {
  std::string s = "usage: " + usage_ + "\n\nflags:\n";
  for (const Flag& flag : flags_) {
    std::string head = "  --" + flag.name;
    if (!std::holds_alternative<bool*>(flag.target)) head += "=...";
    if (head.size() < 26) head.resize(26, ' ');
    else head += "\n" + std::string(26, ' ');
    s += head + flag.help + "\n";
  }
  return s;
}

int ReportError(std::string_view program, const Status& status) {
  std::string_view message = status.message();
  message = message.substr(0, message.find('\n'));
  std::cerr << program << ": error: " << message << "\n";
  return 1;
}

}  // namespace kiln::tools
