#include <cstdio>

#include "apps/commands.h"

namespace surge {

int RunGenerate(const std::vector<std::string>& args) {
  std::fprintf(stderr, "surge generate: not built yet\n");
  return 1;
}

}  // namespace surge
