#include "base/flags.h"

#include <cerrno>
#include <cmath>
#include <cstdlib>
#include <sstream>

namespace surge {

void FlagParser::AddString(const std::string& name, std::string* target, std::string help) {
  flags_[name] = Flag{Kind::kString, target, std::move(help)};
}
void FlagParser::AddInt(const std::string& name, int64_t* target, std::string help) {
  flags_[name] = Flag{Kind::kInt, target, std::move(help)};
}
void FlagParser::AddDouble(const std::string& name, double* target, std::string help) {
  flags_[name] = Flag{Kind::kDouble, target, std::move(help)};
}
void FlagParser::AddBool(const std::string& name, bool* target, std::string help) {
  flags_[name] = Flag{Kind::kBool, target, std::move(help)};
}

Status FlagParser::Assign(const std::string& name, Flag& flag, const std::string& value) {
  flag.seen = true;
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
  }
  return InternalError("unreachable");
}

Status FlagParser::Parse(const std::vector<std::string>& args) {
  for (size_t i = 0; i < args.size(); ++i) {
    const std::string& arg = args[i];
    if (arg.rfind("--", 0) != 0 || arg.size() == 2) {
      return InvalidArgumentError("unexpected argument '" + arg + "' (see `surge " + command_ +
                                  " --help`)");
    }
    std::string name = arg.substr(2);
    std::optional<std::string> value;
    if (size_t eq = name.find('='); eq != std::string::npos) {
      value = name.substr(eq + 1);
      name = name.substr(0, eq);
    }
    auto it = flags_.find(name);
    if (it == flags_.end()) {
      return InvalidArgumentError("unknown flag --" + name + " (see `surge " + command_ +
                                  " --help`)");
    }
    Flag& flag = it->second;
    if (!value && flag.kind == Kind::kBool) value = "true";
    if (!value) {
      if (i + 1 >= args.size()) return InvalidArgumentError("--" + name + ": missing value");
      value = args[++i];
    }
    RETURN_IF_ERROR(Assign(name, flag, *value));
  }
  return OkStatus();
}

bool FlagParser::seen(const std::string& name) const {
  auto it = flags_.find(name);
  return it != flags_.end() && it->second.seen;
}

std::string FlagParser::Usage() const {
  std::ostringstream out;
  out << "usage: surge " << command_ << " [flags]\n";
  for (const auto& [name, flag] : flags_) {
    out << "  --" << name << (flag.kind == Kind::kBool ? "" : " VALUE") << "\n      "
        << flag.help << "\n";
  }
  return out.str();
}

}  // namespace surge
