#include "server/echo.h"

#include "base/utf8.h"

namespace surge {

EchoedPrompt EchoPrompt(const ServerContext& context, std::span<const int32_t> prompt_ids,
                        const std::vector<TokenLogprob>& scores, bool with_logprobs) {
  EchoedPrompt echo;
  IncrementalDecoder decoder(context.prompts.tokenizer(), /*skip_special_tokens=*/true);
  for (size_t i = 0; i < prompt_ids.size(); ++i) {
    std::string text = decoder.Add(prompt_ids[i]);
    if (i + 1 == prompt_ids.size()) text += decoder.Flush();
    echo.text += text;
    if (!with_logprobs) continue;
    api::TokenLogprobInfo info{std::move(text), 0, context.TokenBytes(prompt_ids[i]), {}};
    info.scored = i > 0 && i - 1 < scores.size();
    if (info.scored) {
      const TokenLogprob& score = scores[i - 1];
      info.logprob = score.logprob;
      for (const auto& [token, value] : score.top) {
        std::string bytes = context.TokenBytes(token);
        info.top.push_back({Utf8Lossy(bytes), value, std::move(bytes)});
      }
    }
    echo.logprobs.push_back(std::move(info));
  }
  return echo;
}

}  // namespace surge
