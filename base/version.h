// The surge release this binary is: `surge --version`, GET /version, /server_info.
#pragma once

namespace surge {

inline constexpr char kSurgeVersion[] = "0.1.0";

}  // namespace surge
