// FlagParser: every command's settings, from the command line, SURGE_<FLAG> environment
// variables and a --config FILE (YAML or JSON), with typed targets.
//
// Precedence, highest first: command line > environment > config file > the default the
// target already holds. One mechanism for every command: a command only registers its flags.
#pragma once

#include <cstdint>
#include <map>
#include <optional>
#include <string>
#include <vector>

#include "base/status.h"

namespace surge {

// Where a flag's value came from.
enum class FlagSource { kDefault, kConfigFile, kEnvironment, kCommandLine };

// "SURGE_MAX_MODEL_LEN" for "max-model-len".
std::string FlagEnvironmentName(const std::string& flag);

// The process environment as a map (what Parse reads by default).
std::map<std::string, std::string> ProcessEnvironment();

class FlagParser {
 public:
  using Environment = std::map<std::string, std::string>;

  explicit FlagParser(std::string command) : command_(std::move(command)) {}

  // Each Add* binds a flag to a variable that already holds its default.
  void AddString(const std::string& name, std::string* target, std::string help);
  void AddInt(const std::string& name, int64_t* target, std::string help);
  void AddDouble(const std::string& name, double* target, std::string help);
  // A bool flag takes no value: `--json` sets it true, `--no-json` false (unless a flag
  // named no-json exists), `--json=false` too.
  void AddBool(const std::string& name, bool* target, std::string help);
  // A flag that cannot mean anything for this command: given from any source, Parse fails
  // with "--NAME: <why>" (never silently ignored).
  void AddRefused(const std::string& name, std::string why);
  // Another spelling of a registered flag: "-tp" (single dash, as `-tp 2` or `-tp=2`) or
  // "served-model" (as --served-model); also a config key. The environment knows only the
  // flag's own name.
  void AddAlias(const std::string& alias, const std::string& name);
  // An extra environment variable for a flag, below SURGE_<FLAG> (e.g. VLLM_API_KEY).
  void AddEnvironmentAlias(const std::string& variable, const std::string& name);

  // Parses args (without the program and command names), then fills the flags the command
  // line left from SURGE_<FLAG> variables of `env`, then from `--config FILE` (given on the
  // command line or as SURGE_CONFIG), unless the command registered its own "config" flag.
  // Errors name the flag, variable or config key: unknown flag or key, missing value,
  // malformed number, stray positional argument, a refused flag.
  Status Parse(const std::vector<std::string>& args);
  Status Parse(const std::vector<std::string>& args, const Environment& env);
  // Given from any source (not the default).
  bool seen(const std::string& name) const;
  FlagSource source(const std::string& name) const;
  std::string Usage() const;

 private:
  enum class Kind { kString, kInt, kDouble, kBool, kRefused };
  struct Flag {
    Kind kind;
    void* target;
    std::string help;
    FlagSource source = FlagSource::kDefault;
    std::vector<std::string> env_aliases;
  };
  Status Assign(const std::string& name, Flag& flag, const std::string& value, FlagSource source);
  Status ParseCommandLine(const std::vector<std::string>& args, std::string* config_path);
  Status ParseArgument(const std::vector<std::string>& args, size_t* i, std::string* config_path);
  Status ApplyEnvironment(const Environment& env, std::string* config_path);
  Status ApplyConfigFile(const std::string& path);
  // The flag for a name or alias, and whether `--no-NAME` negated a bool; null if unknown.
  Flag* Find(const std::string& name, std::string* canonical, bool* negated);
  bool OwnsConfigFlag() const { return !flags_.contains("config"); }

  std::string command_;
  std::map<std::string, Flag> flags_;
  std::map<std::string, std::string> aliases_;  // alias (without dashes) -> flag name
  std::map<std::string, std::vector<std::string>> alias_spellings_;  // flag name -> "-tp", ...
};

}  // namespace surge
