// The surge subcommands; each takes its arguments after the command name and returns
// the process exit code (0 ok, 1 runtime failure, 2 bad usage).
#pragma once

#include <string>
#include <vector>

namespace surge {

int RunGenerate(const std::vector<std::string>& args);
int RunTokenize(const std::vector<std::string>& args);
int RunServe(const std::vector<std::string>& args);
int RunRoute(const std::vector<std::string>& args);
int RunBench(const std::vector<std::string>& args);
int RunConvert(const std::vector<std::string>& args);
int RunPerplexity(const std::vector<std::string>& args);
int RunPlan(const std::vector<std::string>& args);
int RunScale(const std::vector<std::string>& args);
int RunAlarms(const std::vector<std::string>& args);
int RunBatch(const std::vector<std::string>& args);

}  // namespace surge
