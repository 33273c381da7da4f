// Tokenizer::FromGgufVocab: GGUF tokenizer metadata -> TokenizerState, following
// llama.cpp's llama-vocab.cpp (load, tokenize, token_to_piece). The choices are listed in
// tokenizer/README.md ("GGUF").
#include <algorithm>
#include <set>

#include "base/logging.h"
#include "tokenizer/gguf_pre_tokenizer.h"
#include "tokenizer/gguf_vocab.h"
#include "tokenizer/tokenizer.h"
#include "tokenizer/tokenizer_state.h"

namespace surge {
namespace {

constexpr std::string_view kMetaspace = "\xE2\x96\x81";  // U+2581 "▁"

// Token texts llama.cpp (llama_vocab::impl::load) takes for end of generation, and for
// fill-in-the-middle markers; it makes every such token a control token.
constexpr std::string_view kEndOfGenerationTexts[] = {
    "<|eot_id|>", "<|im_end|>", "<|end|>", "<|return|>", "<|call|>", "<|flush|>", "<|calls|>",
    "<end_of_turn>", "<|endoftext|>", "</s>", "<|eom_id|>", "<EOT>", "_<EOT>", "[EOT]", "[EOS]",
    "<|end_of_text|>", "<end_of_utterance>", "<eos>", "<turn|>", "<|tool_response>",
    "<｜end▁of▁sentence｜>", "[e~[",
};
// Prefix, suffix and middle markers (control, not end of generation).
constexpr std::string_view kFimTexts[] = {
    "<|fim_prefix|>", "<fim-prefix>", "<fim_prefix>", "<｜fim▁begin｜>", "<PRE>", "▁<PRE>", "<|code_prefix|>",
    "<|prefix|>", "<|fim_suffix|>", "<fim-suffix>", "<fim_suffix>", "<｜fim▁hole｜>", "<SUF>", "▁<SUF>",
    "<|code_suffix|>", "<|suffix|>", "<|fim_middle|>", "<fim-middle>", "<fim_middle>", "<｜fim▁end｜>", "<MID>",
    "▁<MID>", "<|code_middle|>", "<|middle|>",
};
// Pad, repository and file-separator markers: control and end of generation.
constexpr std::string_view kFimStopTexts[] = {
    "<|fim_pad|>", "<fim-pad>", "<fim_pad>", "<PAD>", "[PAD]", "<|fim_repo|>", "<|repo_name|>", "<fim-repo>",
    "<REPO>", "<reponame>", "<|file_sep|>",
};
// gpt-oss's channel markers, which llama.cpp always prints.
constexpr std::string_view kAlwaysShownTexts[] = {"<|channel|>", "<|message|>", "<|start|>", "<|constrain|>"};

bool IsSpm(const GgufVocab& vocab) { return vocab.model == "llama"; }


Status ValidateVocab(const GgufVocab& vocab) {
  if (vocab.model != "gpt2" && vocab.model != "llama") {
    return UnimplementedError("tokenizer.ggml.model '" + vocab.model +
                              "' is not supported (gpt2: byte-level BPE, llama: SentencePiece)");
  }
  const size_t num_tokens = vocab.tokens.size();
  if (num_tokens == 0) return InvalidArgumentError("tokenizer.ggml.tokens is missing or empty");
  if (num_tokens > size_t{INT32_MAX / 2}) return InvalidArgumentError("tokenizer.ggml.tokens is too long");
  if (!vocab.scores.empty() && vocab.scores.size() != num_tokens) {
    return InvalidArgumentError("tokenizer.ggml.scores has " + std::to_string(vocab.scores.size()) +
                                " entries but tokenizer.ggml.tokens has " + std::to_string(num_tokens));
  }
  if (!vocab.token_types.empty() && vocab.token_types.size() != num_tokens) {
    return InvalidArgumentError("tokenizer.ggml.token_type has " + std::to_string(vocab.token_types.size()) +
                                " entries but tokenizer.ggml.tokens has " + std::to_string(num_tokens));
  }
  for (size_t id = 0; id < vocab.token_types.size(); ++id) {
    if (vocab.token_types[id] < 0 || vocab.token_types[id] > 6) {
      return InvalidArgumentError("tokenizer.ggml.token_type[" + std::to_string(id) + "] = " +
                                  std::to_string(vocab.token_types[id]) + " is not a token type (0..6)");
    }
  }
  if (vocab.model == "gpt2" && vocab.merges.empty()) {
    return InvalidArgumentError("tokenizer.ggml.merges is missing (a gpt2 tokenizer needs its merges)");
  }
  return OkStatus();
}

// One tokenizer.ggml.*_token_id: the file's value (which must name a token), else the
// model type's llama.cpp default when it is in range, else none (-1).
StatusOr<int32_t> SpecialId(const std::optional<int64_t>& value, const char* key, int32_t fallback,
                            size_t num_tokens) {
  const int32_t default_id = fallback >= 0 && static_cast<size_t>(fallback) < num_tokens ? fallback : -1;
  if (!value) return default_id;
  // llama.cpp's converter writes UINT32_MAX for a special token the model lacks; llama.cpp
  // warns and keeps the default, and so do we rather than refuse a real-world file.
  if (*value < 0 || static_cast<uint64_t>(*value) >= num_tokens) {
    LOG(WARNING) << "tokenizer.ggml." << key << " " << *value << " is out of range (the vocabulary has "
                 << num_tokens << " tokens); "
                 << (default_id >= 0 ? "using the default " + std::to_string(default_id) : std::string("treated as absent"));
    return default_id;
  }
  return static_cast<int32_t>(*value);
}

Status LoadVocab(const GgufVocab& vocab, TokenizerState* state) {
  state->vocab.id_to_token.reserve(vocab.tokens.size());
  for (size_t id = 0; id < vocab.tokens.size(); ++id) {
    // llama.cpp renames empty tokens so that every token has a text.
    std::string token = vocab.tokens[id].empty() ? "[EMPTY_" + std::to_string(id) + "]" : vocab.tokens[id];
    if (auto previous = state->vocab.Find(token)) {
      return InvalidArgumentError("tokenizer.ggml.tokens has '" + token + "' twice (ids " +
                                  std::to_string(*previous) + " and " + std::to_string(id) + ")");
    }
    state->vocab.Set(token, static_cast<int32_t>(id));
  }
  return OkStatus();
}

// The token types llama.cpp ends up with (llama_vocab::impl::load): the file's, with
// end-of-generation and fill-in-the-middle tokens made control and gpt-oss's channel
// markers user-defined, except "<|end|>" beside "<|return|>"/"<|call|>" (o200k) and "</s>"
// beside "<|tool_response>" (Gemma 4). `stop_ids` gets the end-of-generation tokens.
std::vector<GgufTokenType> EffectiveTypes(const GgufVocab& vocab, const Vocab& ids, std::vector<int32_t>* stop_ids) {
  std::vector<GgufTokenType> types(vocab.tokens.size(), GgufTokenType::kNormal);
  for (size_t id = 0; id < vocab.token_types.size(); ++id) types[id] = static_cast<GgufTokenType>(vocab.token_types[id]);
  auto has = [&](std::string_view text) { return ids.Find(text).has_value(); };
  const bool o200k_end = has("<|end|>") && ((has("<|return|>") && has("<|call|>")) || (has("<|calls|>") && has("<|flush|>")));
  const bool gemma4_s = has("<|tool_response>") && has("</s>");
  auto mark = [&](std::string_view text, bool stop) {
    if ((text == "<|end|>" && o200k_end) || (text == "</s>" && gemma4_s)) return;
    auto id = ids.Find(text);
    if (!id) return;
    types[*id] = GgufTokenType::kControl;
    if (stop) stop_ids->push_back(*id);
  };
  for (std::string_view text : kEndOfGenerationTexts) mark(text, true);
  for (std::string_view text : kFimStopTexts) mark(text, true);
  for (std::string_view text : kFimTexts) mark(text, false);
  for (std::string_view text : kAlwaysShownTexts) {
    if (auto id = ids.Find(text)) types[*id] = GgufTokenType::kUserDefined;
  }
  if (o200k_end) types[*ids.Find("<|end|>")] = GgufTokenType::kUserDefined;
  if (gemma4_s) types[*ids.Find("</s>")] = GgufTokenType::kNormal;
  return types;
}

// Control, user-defined and unknown tokens are matched in the raw text before anything
// else (llama.cpp's tokenizer_st_partition); control and unknown ones are special.
void LoadAddedTokens(const std::vector<GgufTokenType>& types, TokenizerState* state) {
  for (size_t id = 0; id < types.size(); ++id) {
    const GgufTokenType type = types[id];
    if (type != GgufTokenType::kControl && type != GgufTokenType::kUserDefined &&
        type != GgufTokenType::kUnknown) {
      continue;
    }
    AddedToken token;
    token.content = state->vocab.id_to_token[id];
    token.id = static_cast<int32_t>(id);
    token.special = type != GgufTokenType::kUserDefined;
    state->added_tokens.push_back(std::move(token));
  }
  std::vector<std::pair<std::string, const AddedToken*>> raw;
  for (const AddedToken& token : state->added_tokens) {
    state->added_by_content[token.content] = &token;
    state->added_contents.insert(token.content);
    raw.emplace_back(token.content, &token);
  }
  state->raw_matcher = std::make_unique<AddedTokenMatcher>(raw, AddedTokenOrder::kLongestFirst);
  state->normalized_matcher = std::make_unique<AddedTokenMatcher>(
      std::vector<std::pair<std::string, const AddedToken*>>{});
}

// SentencePiece ("llama"): ' ' -> '▁' with a '▁' in front of each stretch of text
// (add_space_prefix), merges by score, unknown characters as <0xNN> byte tokens.
Status BuildSpm(const GgufVocab& vocab, bool add_space_prefix, int32_t unk_id, TokenizerState* state) {
  std::vector<std::unique_ptr<Normalizer>> steps;
  if (add_space_prefix) steps.push_back(MakePrependNormalizer(std::string(kMetaspace)));
  steps.push_back(MakeReplaceNormalizer(Pattern::Literal(" "), std::string(kMetaspace)));
  state->normalizer = MakeSequenceNormalizer(std::move(steps));
  BpeOptions options;
  options.byte_fallback = true;
  if (unk_id >= 0) options.unk_id = unk_id;
  std::vector<float> scores = vocab.scores;
  scores.resize(vocab.tokens.size(), 0.0f);  // no scores: llama.cpp reads 0 for every token
  state->model = BpeModel::CreateFromScores(&state->vocab, scores, std::move(options));
  std::vector<std::unique_ptr<Decoder>> decoders;
  decoders.push_back(MakeReplaceDecoder(Pattern::Literal(std::string(kMetaspace)), " "));
  decoders.push_back(MakeByteFallbackDecoder(/*drop_leading_bom=*/false));  // llama.cpp keeps it
  decoders.push_back(MakeFuseDecoder());
  if (add_space_prefix) decoders.push_back(MakeStripDecoder(" ", 1, 0));
  state->decoder = MakeSequenceDecoder(std::move(decoders));
  state->clean_up_tokenization_spaces = false;
  return OkStatus();
}

// llama.cpp splits "left right" at the first space after the first byte.
StatusOr<std::vector<std::pair<std::string, std::string>>> SplitMerges(const std::vector<std::string>& merges) {
  std::vector<std::pair<std::string, std::string>> pairs;
  pairs.reserve(merges.size());
  for (size_t rank = 0; rank < merges.size(); ++rank) {
    const std::string& merge = merges[rank];
    const size_t space = merge.find(' ', 1);
    if (space == std::string::npos) {
      return InvalidArgumentError("tokenizer.ggml.merges[" + std::to_string(rank) + "] '" + merge +
                                  "' is not 'left right'");
    }
    pairs.emplace_back(merge.substr(0, space), merge.substr(space + 1));
  }
  return pairs;
}

// Byte-level BPE ("gpt2"): the family's regex splits, bytes -> GPT-2 characters, merges
// by rank.
Status BuildGpt2(const GgufVocab& vocab, const GgufPreTokenizerSpec& spec, TokenizerState* state) {
  std::vector<std::unique_ptr<PreTokenizer>> steps;
  for (const std::string& source : spec.regexes) {
    auto regex = Regex::FromOniguruma(source);
    if (!regex.ok()) return regex.status().WithContext("tokenizer.ggml.pre '" + vocab.pre + "' regex");
    steps.push_back(MakeSplitPreTokenizer(Pattern::FromRegex(std::move(*regex)), SplitBehavior::kIsolated, false));
  }
  ASSIGN_OR_RETURN(auto byte_level, MakeByteLevelPreTokenizer(/*add_prefix_space=*/false, /*use_regex=*/false));
  steps.push_back(std::move(byte_level));
  state->pre_tokenizer = MakeSequencePreTokenizer(std::move(steps));
  ASSIGN_OR_RETURN(auto merges, SplitMerges(vocab.merges));
  BpeOptions options;
  options.ignore_merges = spec.ignore_merges;
  int num_dropped = 0;
  ASSIGN_OR_RETURN(state->model, BpeModel::Create(&state->vocab, merges, std::move(options), &num_dropped));
  if (num_dropped > 0) {
    LOG(WARNING) << num_dropped << " tokenizer.ggml.merges name tokens outside the vocabulary; ignored";
  }
  state->decoder = MakeByteLevelDecoder(&state->added_contents);
  state->clean_up_tokenization_spaces = spec.clean_spaces;
  state->llama_cpp_clean_up = true;
  return OkStatus();
}

// BOS/EOS as add_bos_token / add_eos_token say, around the text.
void BuildPostProcessor(TokenizerState* state, int32_t eos_id) {
  std::vector<TemplatePiece> pieces;
  if (state->add_bos_token) pieces.push_back({false, {state->bos_token_id}});
  pieces.push_back({true, {}});
  if (state->add_eos_token) pieces.push_back({false, {eos_id}});
  state->post_processor = MakeTemplatePostProcessor(std::move(pieces));
}

// Control and unknown tokens are special: llama.cpp prints them only when asked to, as
// Decode(skip_special_tokens = false). Unused and undefined ones llama.cpp never prints.
void MarkSpecialTokens(const std::vector<GgufTokenType>& types, TokenizerState* state) {
  state->is_special.assign(state->vocab.size(), 0);
  state->never_shown.assign(state->vocab.size(), 0);
  for (size_t id = 0; id < types.size(); ++id) {
    const GgufTokenType type = types[id];
    state->never_shown[id] = type == GgufTokenType::kUnused || type == GgufTokenType::kUndefined;
    state->is_special[id] = type == GgufTokenType::kControl || type == GgufTokenType::kUnknown ||
                            state->never_shown[id];
  }
}

// Stop ids: EOS, then EOT/EOM, then the end-of-generation tokens found by their text.
void ResolveEos(int32_t eos_id, const std::vector<int32_t>& stop_ids, TokenizerState* state) {
  if (eos_id >= 0) state->eos_token = state->vocab.id_to_token[eos_id];
  std::set<int32_t> seen;
  for (int32_t id : stop_ids) {
    if (id >= 0 && seen.insert(id).second) state->eos_token_ids.push_back(id);
  }
}

StatusOr<std::unique_ptr<TokenizerState>> BuildState(const GgufVocab& vocab) {
  RETURN_IF_ERROR(ValidateVocab(vocab));
  const bool spm = IsSpm(vocab);
  GgufPreTokenizerSpec spec;
  if (!spm) {
    ASSIGN_OR_RETURN(spec, LookUpGgufPreTokenizer(vocab.pre));
  }
  const size_t n = vocab.tokens.size();
  ASSIGN_OR_RETURN(int32_t bos_id, SpecialId(vocab.bos_token_id, "bos_token_id", spm ? 1 : -1, n));
  ASSIGN_OR_RETURN(int32_t eos_id, SpecialId(vocab.eos_token_id, "eos_token_id", spm ? 2 : -1, n));
  ASSIGN_OR_RETURN(int32_t unk_id, SpecialId(vocab.unknown_token_id, "unknown_token_id", spm ? 0 : -1, n));
  RETURN_IF_ERROR(SpecialId(vocab.padding_token_id, "padding_token_id", -1, n).status());
  ASSIGN_OR_RETURN(int32_t eot_id, SpecialId(vocab.eot_token_id, "eot_token_id", -1, n));
  ASSIGN_OR_RETURN(int32_t eom_id, SpecialId(vocab.eom_token_id, "eom_token_id", -1, n));
  if (!spm && !spec.has_bos) bos_id = -1;

  auto state = std::make_unique<TokenizerState>();
  state->add_bos_token = vocab.add_bos_token.value_or(spm ? true : spec.add_bos);
  state->add_eos_token = vocab.add_eos_token.value_or(false);
  if (state->add_bos_token && bos_id < 0) {
    return InvalidArgumentError("tokenizer.ggml.add_bos_token is true, but tokenizer.ggml.bos_token_id is not set");
  }
  if (state->add_eos_token && eos_id < 0) {
    return InvalidArgumentError("tokenizer.ggml.add_eos_token is true, but tokenizer.ggml.eos_token_id is not set");
  }
  RETURN_IF_ERROR(LoadVocab(vocab, state.get()));
  std::vector<int32_t> stop_ids = {eos_id, eot_id, eom_id};
  const std::vector<GgufTokenType> types = EffectiveTypes(vocab, state->vocab, &stop_ids);
  LoadAddedTokens(types, state.get());
  if (spm) {
    RETURN_IF_ERROR(BuildSpm(vocab, vocab.add_space_prefix.value_or(true), unk_id, state.get()));
  } else {
    RETURN_IF_ERROR(BuildGpt2(vocab, spec, state.get()));
  }
  state->bos_token_id = bos_id;
  if (bos_id >= 0) state->bos_token = state->vocab.id_to_token[bos_id];
  BuildPostProcessor(state.get(), eos_id);
  MarkSpecialTokens(types, state.get());
  ResolveEos(eos_id, stop_ids, state.get());
  state->chat_template = vocab.chat_template;
  return state;
}

}  // namespace

StatusOr<std::unique_ptr<Tokenizer>> Tokenizer::FromGgufVocab(const GgufVocab& vocab,
                                                             const std::string& source_name) {
  auto state = BuildState(vocab);
  if (!state.ok()) return state.status().WithContext(source_name);
  (*state)->source_name = source_name;
  return std::unique_ptr<Tokenizer>(new Tokenizer(std::move(*state)));
}

}  // namespace surge
