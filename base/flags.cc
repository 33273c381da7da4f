#include "base/flags.h"

#include <cerrno>
#include <cmath>
#include <cstdlib>
#include <sstream>

namespace surge {

void FlagParser::AddString(const std::string& name, std::string* target, std::string help) {
  flags_[name] = Flag{Kind::kString, target, std::move(help), FlagSource::kDefault, {}};
}
void FlagParser::AddInt(const std::string& name, int64_t* target, std::string help) {
  flags_[name] = Flag{Kind::kInt, target, std::move(help), FlagSource::kDefault, {}};
}
void FlagParser::AddDouble(const std::string& name, double* target, std::string help) {
  flags_[name] = Flag{Kind::kDouble, target, std::move(help), FlagSource::kDefault, {}};
}
void FlagParser::AddBool(const std::string& name, bool* target, std::string help) {
  flags_[name] = Flag{Kind::kBool, target, std::move(help), FlagSource::kDefault, {}};
}
void FlagParser::AddRefused(const std::string& name, std::string why) {
  flags_[name] = Flag{Kind::kRefused, nullptr, std::move(why), FlagSource::kDefault, {}};
}
void FlagParser::AddAlias(const std::string& alias, const std::string& name) {
  aliases_[alias.substr(alias.find_first_not_of('-'))] = name;
  alias_spellings_[name].push_back(alias[0] == '-' ? alias : "--" + alias);
}
void FlagParser::AddEnvironmentAlias(const std::string& variable, const std::string& name) {
  flags_.at(name).env_aliases.push_back(variable);
}

Status FlagParser::Assign(const std::string& name, Flag& flag, const std::string& value, FlagSource source) {
  flag.source = source;
  switch (flag.kind) {
    case Kind::kString:
      *static_cast<std::string*>(flag.target) = value;
      return OkStatus();
    case Kind::kInt: {
      errno = 0;
      char* end = nullptr;
      long long parsed = std::strtoll(value.c_str(), &end, 10);
      if (value.empty() || *end != '\0' || errno == ERANGE) {
        return InvalidArgumentError("--" + name + ": expected an integer, got '" + value + "'");
      }
      *static_cast<int64_t*>(flag.target) = parsed;
      return OkStatus();
    }
    case Kind::kDouble: {
      char* end = nullptr;
      double parsed = std::strtod(value.c_str(), &end);
      if (value.empty() || *end != '\0' || !std::isfinite(parsed)) {
        return InvalidArgumentError("--" + name + ": expected a number, got '" + value + "'");
      }
      *static_cast<double*>(flag.target) = parsed;
      return OkStatus();
    }
    case Kind::kBool:
      if (value == "true" || value == "1") {
        *static_cast<bool*>(flag.target) = true;
      } else if (value == "false" || value == "0") {
        *static_cast<bool*>(flag.target) = false;
      } else {
        return InvalidArgumentError("--" + name + ": expected true or false, got '" + value + "'");
      }
      return OkStatus();
    case Kind::kRefused:
      return InvalidArgumentError("--" + name + " is not supported: " + flag.help);
  }
  return InternalError("unreachable");
}

FlagParser::Flag* FlagParser::Find(const std::string& name, std::string* canonical, bool* negated) {
  *negated = false;
  *canonical = name;
  if (auto alias = aliases_.find(name); alias != aliases_.end()) *canonical = alias->second;
  if (auto it = flags_.find(*canonical); it != flags_.end()) return &it->second;
  if (name.rfind("no-", 0) == 0) {
    bool unused = false;
    Flag* positive = Find(name.substr(3), canonical, &unused);
    if (positive != nullptr && positive->kind == Kind::kBool) {
      *negated = true;
      return positive;
    }
  }
  return nullptr;
}

Status FlagParser::ParseArgument(const std::vector<std::string>& args, size_t* i, std::string* config_path) {
  const std::string& arg = args[*i];
  const bool long_form = arg.rfind("--", 0) == 0 && arg.size() > 2;
  const bool short_form = !long_form && arg.size() > 1 && arg[0] == '-' && arg[1] != '-';
  if (!long_form && !short_form) {
    return InvalidArgumentError("unexpected argument '" + arg + "' (see `surge " + command_ + " --help`)");
  }
  std::string name = arg.substr(long_form ? 2 : 1);
  std::optional<std::string> value;
  if (size_t eq = name.find('='); eq != std::string::npos) {
    value = name.substr(eq + 1);
    name = name.substr(0, eq);
  }
  if (long_form && name == "config" && OwnsConfigFlag()) {
    if (!value && *i + 1 >= args.size()) return InvalidArgumentError("--config: missing value");
    *config_path = value ? *value : args[++*i];
    return OkStatus();
  }
  std::string canonical;
  bool negated = false;
  Flag* flag = (short_form && !aliases_.contains(name)) ? nullptr : Find(name, &canonical, &negated);
  if (flag == nullptr) {
    return InvalidArgumentError("unknown flag " + arg.substr(0, arg.find('=')) + " (see `surge " + command_ +
                                " --help`)");
  }
  if (negated) {
    if (value) return InvalidArgumentError("--" + name + " takes no value");
    value = "false";
  }
  if (!value && (flag->kind == Kind::kBool || flag->kind == Kind::kRefused)) value = "true";
  if (!value) {
    if (*i + 1 >= args.size()) return InvalidArgumentError("--" + canonical + ": missing value");
    value = args[++*i];
  }
  return Assign(canonical, *flag, *value, FlagSource::kCommandLine);
}

Status FlagParser::ParseCommandLine(const std::vector<std::string>& args, std::string* config_path) {
  for (size_t i = 0; i < args.size(); ++i) RETURN_IF_ERROR(ParseArgument(args, &i, config_path));
  return OkStatus();
}

Status FlagParser::Parse(const std::vector<std::string>& args) { return Parse(args, ProcessEnvironment()); }

Status FlagParser::Parse(const std::vector<std::string>& args, const Environment& env) {
  std::string config_path;
  RETURN_IF_ERROR(ParseCommandLine(args, &config_path));
  RETURN_IF_ERROR(ApplyEnvironment(env, &config_path));
  if (!config_path.empty()) RETURN_IF_ERROR(ApplyConfigFile(config_path));
  return OkStatus();
}

bool FlagParser::seen(const std::string& name) const { return source(name) != FlagSource::kDefault; }

FlagSource FlagParser::source(const std::string& name) const {
  auto it = flags_.find(name);
  return it == flags_.end() ? FlagSource::kDefault : it->second.source;
}

std::string FlagParser::Usage() const {
  std::ostringstream out;
  out << "usage: surge " << command_ << " [flags]\n";
  for (const auto& [name, flag] : flags_) {
    if (flag.kind == Kind::kRefused) continue;
    out << "  --" << name << (flag.kind == Kind::kBool ? "" : " VALUE");
    if (auto it = alias_spellings_.find(name); it != alias_spellings_.end()) {
      for (const std::string& alias : it->second) out << ", " << alias;
    }
    out << "\n      " << flag.help << "\n";
  }
  out << "Every flag may also come from the environment as " << FlagEnvironmentName("flag-name");
  if (OwnsConfigFlag()) out << " or from --config FILE (YAML or JSON, keys are flag names)";
  out << "; the command line wins, then the environment";
  if (OwnsConfigFlag()) out << ", then the config file";
  out << ".\n";
  return out.str();
}

}  // namespace surge
