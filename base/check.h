// CHECK/DCHECK: invariants that, when broken, mean a bug; they abort with a message.
#pragma once

#include <sstream>

namespace surge::internal {

// Collects the streamed message and aborts in its destructor.
class CheckFailure {
 public:
  CheckFailure(const char* file, int line, const char* condition);
  [[noreturn]] ~CheckFailure();
  std::ostream& stream() { return stream_; }

 private:
  std::ostringstream stream_;
};

// Lets `CHECK(x) << "msg"` compile to nothing when the condition holds.
struct Voidify {
  void operator&(std::ostream&) {}
};

}  // namespace surge::internal

#define CHECK(condition)                              \
  (condition) ? (void)0                               \
              : ::surge::internal::Voidify() &        \
                    ::surge::internal::CheckFailure(__FILE__, __LINE__, #condition).stream()

#define CHECK_EQ(a, b) CHECK((a) == (b))
#define CHECK_NE(a, b) CHECK((a) != (b))
#define CHECK_LT(a, b) CHECK((a) < (b))
#define CHECK_LE(a, b) CHECK((a) <= (b))
#define CHECK_GT(a, b) CHECK((a) > (b))
#define CHECK_GE(a, b) CHECK((a) >= (b))

#ifdef NDEBUG
#define DCHECK(condition) \
  while (false) CHECK(condition)
#else
#define DCHECK(condition) CHECK(condition)
#endif
