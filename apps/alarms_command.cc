// surge alarms: the --alarm-rules file outside a server. `export --prometheus` writes it as
// a Prometheus alerting-rules file (obs/alarms/prometheus_export.h); `check` validates it.
#include <cstdio>
#include <fstream>
#include <string>
#include <vector>

#include "apps/alarm_rules_file.h"
#include "apps/commands.h"
#include "base/flags.h"
#include "obs/alarms/prometheus_export.h"

namespace surge {
namespace {

const char kSummary[] =
    "usage: surge alarms export --prometheus --rules FILE [--out FILE] [--group NAME]\n"
    "       surge alarms check --rules FILE\n"
    "export: the alarm rules of FILE (YAML or JSON, as for --alarm-rules) as a Prometheus alerting-rules file,\n"
    "for Prometheus + Alertmanager: each rule's expression in PromQL, for, keep_firing_for, labels.severity and\n"
    "annotations (summary, the surge action). check: parse and validate FILE, print the rules.\n";

struct AlarmsFlags {
  std::string rules;
  std::string out;
  std::string group = "surge";
  bool prometheus = false;
  bool help = false;
};

int Export(const AlarmsFlags& f, const obs::AlarmConfig& config) {
  if (!f.prometheus) {
    std::fprintf(stderr, "surge alarms export: say the format: --prometheus (the only one so far)\n");
    return 2;
  }
  const std::string yaml = obs::PrometheusRulesYaml(config, f.group);
  if (f.out.empty()) return std::fwrite(yaml.data(), 1, yaml.size(), stdout), 0;
  std::ofstream out(f.out, std::ios::binary);
  out << yaml;
  if (!out.flush()) {
    std::fprintf(stderr, "surge alarms export: cannot write %s\n", f.out.c_str());
    return 1;
  }
  return 0;
}

}  // namespace

int RunAlarms(const std::vector<std::string>& raw_args) {
  AlarmsFlags f;
  FlagParser parser("alarms");
  parser.AddString("rules", &f.rules, "the alarm rules file, YAML or JSON (required)");
  parser.AddBool("prometheus", &f.prometheus, "export: write Prometheus alerting rules");
  parser.AddString("out", &f.out, "export: write here (default: stdout)");
  parser.AddString("group", &f.group, "export: the rule group's name (default surge)");
  parser.AddBool("help", &f.help, "show this help");
  std::vector<std::string> args = raw_args;
  const std::string verb = args.empty() || args[0].rfind("-", 0) == 0 ? "" : args[0];
  if (!verb.empty()) args.erase(args.begin());
  if (Status status = parser.Parse(args); !status.ok()) {
    std::fprintf(stderr, "surge alarms: %s\n", status.message().c_str());
    return 2;
  }
  if (f.help || verb.empty()) {
    std::fprintf(f.help ? stdout : stderr, "%s%s", kSummary, parser.Usage().c_str());
    return f.help ? 0 : 2;
  }
  if (verb != "export" && verb != "check") {
    std::fprintf(stderr, "surge alarms: unknown subcommand '%s' (export, check)\n", verb.c_str());
    return 2;
  }
  if (f.rules.empty()) return std::fprintf(stderr, "surge alarms %s: --rules FILE is required\n", verb.c_str()), 2;
  if (verb == "check" && (parser.seen("prometheus") || parser.seen("out") || parser.seen("group"))) {
    return std::fprintf(stderr, "surge alarms check: --prometheus, --out and --group are for export\n"), 2;
  }
  StatusOr<obs::AlarmConfig> config = LoadAlarmRulesFile(f.rules);
  if (!config.ok()) return std::fprintf(stderr, "surge alarms: %s\n", config.status().message().c_str()), 2;
  if (verb == "export") return Export(f, *config);
  for (const obs::AlarmRule& rule : config->rules) {
    std::printf("%s: %s for %lldms -> %s\n", rule.name.c_str(), obs::AlertExpressionPromQL(rule).c_str(),
                static_cast<long long>(rule.for_duration.count()), std::string(obs::ActionTypeName(rule.action.type)).c_str());
  }
  std::printf("%zu rules ok\n", config->rules.size());
  return 0;
}

}  // namespace surge
