#include <cstdio>

#include "apps/commands.h"

namespace surge {

int RunTokenize(const std::vector<std::string>& args) {
  std::fprintf(stderr, "surge tokenize: not built yet\n");
  return 1;
}

}  // namespace surge
