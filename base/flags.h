// FlagParser: --name value / --name=value command-line flags with typed targets.
#pragma once

#include <cstdint>
#include <map>
#include <optional>
#include <string>
#include <vector>

#include "base/status.h"

namespace surge {

class FlagParser {
 public:
  explicit FlagParser(std::string command) : command_(std::move(command)) {}

  // Each Add* binds a flag to a variable that already holds its default.
  void AddString(const std::string& name, std::string* target, std::string help);
  void AddInt(const std::string& name, int64_t* target, std::string help);
  void AddDouble(const std::string& name, double* target, std::string help);
  // A bool flag takes no value: `--json` sets it true.
  void AddBool(const std::string& name, bool* target, std::string help);

  // Parses args (without the program and command names). Errors name the flag:
  // unknown flag, missing value, malformed number, stray positional argument.
  Status Parse(const std::vector<std::string>& args);
  bool seen(const std::string& name) const;
  std::string Usage() const;

 private:
  enum class Kind { kString, kInt, kDouble, kBool };
  struct Flag {
    Kind kind;
    void* target;
    std::string help;
    bool seen = false;
  };
  Status Assign(const std::string& name, Flag& flag, const std::string& value);

  std::string command_;
  std::map<std::string, Flag> flags_;
};

}  // namespace surge
