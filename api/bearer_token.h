// The key an OpenAI client sends: `Authorization: Bearer <key>`, read the same way by the
// engine's --api-key check and the router's key store.
#pragma once

#include <string_view>

namespace surge::api {

// "Bearer <token>" (the scheme in any case, spaces or tabs around the token): the token,
// or "" when the header has another shape.
std::string_view BearerToken(std::string_view authorization);

}  // namespace surge::api
