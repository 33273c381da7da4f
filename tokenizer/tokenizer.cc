#include "tokenizer/tokenizer.h"

#include "tokenizer/tokenizer_state.h"
#include "base/utf8.h"

namespace surge {

void TokenizerState::EncodeSection(const Section& section, int section_index,
                                   std::vector<int32_t>* ids) const {
  if (section.token != nullptr) {
    ids->push_back(section.token->id);
    return;
  }
  if (section.text.empty()) return;
  // tokenizers.js: a stretch of text that equals an added token (e.g. the normalized
  // content of one) is that token.
  if (auto it = added_by_content.find(section.text); it != added_by_content.end()) {
    ids->push_back(it->second->id);
    return;
  }
  std::string normalized = normalizer ? normalizer->Normalize(section.text) : std::string(section.text);
  if (normalized.empty()) return;
  std::vector<Section> subsections;
  normalized_matcher->Split(normalized, &subsections);
  for (const Section& subsection : subsections) {
    if (subsection.token != nullptr) {
      ids->push_back(subsection.token->id);
      continue;
    }
    if (subsection.text.empty()) continue;
    if (auto it = added_by_content.find(subsection.text); it != added_by_content.end()) {
      ids->push_back(it->second->id);
      continue;
    }
    if (pre_tokenizer == nullptr) {
      model->Encode({std::string(subsection.text)}, ids);
    } else {
      model->Encode(PreTokenize(*pre_tokenizer, subsection.text, section_index), ids);
    }
  }
}

bool TokenizerState::Visible(int32_t id, bool skip_special_tokens) const {
  if (id < 0 || id >= vocab.size() || !vocab.has_token[id]) return false;
  if (!never_shown.empty() && never_shown[id]) return false;
  return !(skip_special_tokens && is_special[id]);
}

std::string TokenizerState::DecodeVisible(std::span<const int32_t> ids, bool* incomplete_tail) const {
  std::vector<std::string> tokens;
  tokens.reserve(ids.size());
  for (int32_t id : ids) tokens.push_back(vocab.id_to_token[id]);
  std::string text;
  if (decoder == nullptr) {  // both reference libraries join the raw tokens with spaces
    for (size_t i = 0; i < tokens.size(); ++i) text += (i ? " " : "") + tokens[i];
    return text;
  }
  bool incomplete = false;
  decoder->DecodeChain(&tokens, &incomplete);
  if (incomplete_tail != nullptr) *incomplete_tail = incomplete;
  for (const std::string& piece : tokens) text += piece;
  return text;
}

std::string TokenizerState::FinishDecode(std::string text, bool skip_special_tokens) const {
  if (decoder != nullptr && !end_of_word_suffix.empty()) {
    text = ReplaceAll(text, end_of_word_suffix, " ");
    if (skip_special_tokens) text = std::string(TrimJsWhitespaceEnd(TrimJsWhitespaceStart(text)));
  }
  if (clean_up_tokenization_spaces) text = CleanUp(text);
  return text;
}

std::string TokenizerState::CleanUp(std::string_view text) const {
  return llama_cpp_clean_up ? LlamaCppCleanUpSpaces(text) : CleanUpTokenizationSpaces(text);
}

bool TokenizerState::StreamsByWindow() const {
  return (decoder == nullptr || decoder->prefix_stable()) && end_of_word_suffix.empty();
}

std::string CleanUpTokenizationSpaces(std::string_view text) {
  static constexpr std::pair<std::string_view, std::string_view> kRules[] = {
      {" .", "."},      {" ?", "?"},     {" !", "!"},     {" ,", ","},       {" ' ", "'"},
      {" n't", "n't"},  {" 'm", "'m"},   {" 's", "'s"},   {" 've", "'ve"},   {" 're", "'re"},
  };
  std::string out(text);
  for (const auto& [from, to] : kRules) {
    if (out.find(from) != std::string::npos) out = ReplaceAll(out, from, to);
  }
  return out;
}

std::string LlamaCppCleanUpSpaces(std::string_view text) {
  // Each pass reads the previous pass's output.
  std::string in(text), out;
  out.reserve(in.size());
  for (size_t i = 0; i < in.size(); ++i) {  // " ?", " !", " .", " ," -> drop the space
    const char c = in[i];
    if (i > 0 && in[i - 1] == ' ' && (c == '?' || c == '!' || c == '.' || c == ',')) out.pop_back();
    out += c;
  }
  in.swap(out);
  out.clear();
  for (size_t i = 0; i < in.size(); ++i) {  // " ' " -> "'"
    if (i > 0 && in[i] == '\'' && i + 1 < in.size() && in[i - 1] == ' ' && in[i + 1] == ' ') {
      out.pop_back();
      out += '\'';
      in[++i] = '\0';  // the space after it goes too, and no longer counts as a space
      continue;
    }
    out += in[i];
  }
  in.swap(out);
  out.clear();
  for (size_t i = 0; i < in.size(); ++i) {  // " 's", " 'm", " 're", " 've" -> drop the space
    if (i > 0 && in[i - 1] == ' ' && in[i] == '\'' && i + 1 < in.size()) {
      const char next = in[i + 1];
      const char after = i + 2 < in.size() ? in[i + 2] : '\0';
      if (next == 's' || next == 'm' || ((next == 'r' || next == 'v') && after == 'e')) out.pop_back();
    }
    out += in[i];
  }
  return out;
}

Tokenizer::Tokenizer(std::unique_ptr<TokenizerState> state) : state_(std::move(state)) {}
Tokenizer::~Tokenizer() = default;

std::vector<int32_t> Tokenizer::Encode(std::string_view text, bool add_special_tokens) const {
  std::string sanitized;
  if (!IsValidUtf8(text)) {
    sanitized = Utf8Lossy(text);
    text = sanitized;
  }
  std::vector<Section> sections;
  state_->raw_matcher->Split(text, &sections);
  std::vector<int32_t> ids;
  ids.reserve(text.size() / 3 + 4);
  for (size_t i = 0; i < sections.size(); ++i) {
    state_->EncodeSection(sections[i], static_cast<int>(i), &ids);
  }
  if (state_->post_processor != nullptr) state_->post_processor->Process(add_special_tokens, &ids);
  return ids;
}

std::string Tokenizer::Decode(std::span<const int32_t> ids, bool skip_special_tokens) const {
  std::vector<int32_t> visible;
  visible.reserve(ids.size());
  for (int32_t id : ids) {
    if (state_->Visible(id, skip_special_tokens)) visible.push_back(id);
  }
  return state_->FinishDecode(state_->DecodeVisible(visible), skip_special_tokens);
}

int32_t Tokenizer::vocab_size() const { return state_->vocab.size(); }
int32_t Tokenizer::bos_token_id() const { return state_->bos_token_id; }
const std::vector<int32_t>& Tokenizer::eos_token_ids() const { return state_->eos_token_ids; }
const std::string& Tokenizer::bos_token() const { return state_->bos_token; }
const std::string& Tokenizer::eos_token() const { return state_->eos_token; }
bool Tokenizer::add_bos_token() const { return state_->add_bos_token; }
bool Tokenizer::add_eos_token() const { return state_->add_eos_token; }
const std::string& Tokenizer::chat_template() const { return state_->chat_template; }

bool Tokenizer::IsSpecial(int32_t id) const {
  return id >= 0 && id < state_->vocab.size() && state_->is_special[id];
}

std::optional<int32_t> Tokenizer::TokenToId(std::string_view token) const {
  return state_->vocab.Find(token);
}

std::optional<std::string_view> Tokenizer::IdToToken(int32_t id) const {
  if (id < 0 || id >= state_->vocab.size() || !state_->vocab.has_token[id]) return std::nullopt;
  return std::string_view(state_->vocab.id_to_token[id]);
}

}  // namespace surge
