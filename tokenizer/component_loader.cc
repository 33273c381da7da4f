#include "tokenizer/component_loader.h"

#include <nlohmann/json.hpp>

#include "tokenizer/bert_text.h"

namespace surge {
namespace {

using Json = nlohmann::json;

std::string GetString(const Json& config, const char* key, std::string fallback) {
  auto it = config.find(key);
  return it == config.end() || it->is_null() ? fallback : it->get<std::string>();
}

bool GetBool(const Json& config, const char* key, bool fallback) {
  auto it = config.find(key);
  return it == config.end() || it->is_null() ? fallback : it->get<bool>();
}

int GetInt(const Json& config, const char* key, int fallback) {
  auto it = config.find(key);
  return it == config.end() || it->is_null() ? fallback : it->get<int>();
}

std::string TypeOf(const Json& config) {
  return config.is_object() ? GetString(config, "type", "") : "";
}

Status Unsupported(const char* what, const Json& config) {
  return UnimplementedError(std::string(what) + " type '" + TypeOf(config) + "' is not supported");
}

const Json& Member(const Json& config, const char* key) {
  static const Json kEmptyArray = Json::array();
  auto it = config.find(key);
  return it == config.end() || it->is_null() ? kEmptyArray : *it;
}

StatusOr<PrependScheme> ParsePrependScheme(const Json& config) {
  std::string scheme = GetString(config, "prepend_scheme", "");
  if (scheme.empty()) {  // the older add_prefix_space field (Rust's reading of it)
    return GetBool(config, "add_prefix_space", true) ? PrependScheme::kAlways : PrependScheme::kNever;
  }
  if (scheme == "always") return PrependScheme::kAlways;
  if (scheme == "never") return PrependScheme::kNever;
  if (scheme == "first") return PrependScheme::kFirst;
  return InvalidArgumentError("Metaspace prepend_scheme '" + scheme + "' is not always/never/first");
}

StatusOr<SplitBehavior> ParseSplitBehavior(const Json& config) {
  std::string behavior = GetString(config, "behavior", "Isolated");
  for (char& c : behavior) c = static_cast<char>(std::tolower(static_cast<unsigned char>(c)));
  if (behavior == "removed") return SplitBehavior::kRemoved;
  if (behavior == "isolated") return SplitBehavior::kIsolated;
  if (behavior == "mergedwithprevious") return SplitBehavior::kMergedWithPrevious;
  if (behavior == "mergedwithnext") return SplitBehavior::kMergedWithNext;
  if (behavior == "contiguous") return SplitBehavior::kContiguous;
  return InvalidArgumentError("Split behavior '" + behavior + "' is unknown");
}

StatusOr<std::unique_ptr<PreTokenizer>> ParseSplit(const Json& config) {
  ASSIGN_OR_RETURN(Pattern pattern, ParsePattern(Member(config, "pattern")));
  ASSIGN_OR_RETURN(SplitBehavior behavior, ParseSplitBehavior(config));
  return MakeSplitPreTokenizer(std::move(pattern), behavior, GetBool(config, "invert", false));
}

StatusOr<std::unique_ptr<PreTokenizer>> ParseMetaspace(const Json& config) {
  std::string replacement = GetString(config, "replacement", "\xE2\x96\x81");
  std::string str_rep = GetString(config, "str_rep", "");
  ASSIGN_OR_RETURN(PrependScheme scheme, ParsePrependScheme(config));
  return MakeMetaspacePreTokenizer(str_rep.empty() ? replacement : str_rep, scheme,
                                   GetBool(config, "split", true));
}

// A special token named in a template: by its name in the vocabulary (tokenizers.js),
// else by the ids listed with it (the Rust crate).
StatusOr<std::vector<int32_t>> ResolveSpecial(const Vocab& vocab, const std::string& name, const Json& listed_ids) {
  if (auto id = vocab.Find(name)) return std::vector<int32_t>{*id};
  if (listed_ids.is_array() && !listed_ids.empty()) return listed_ids.get<std::vector<int32_t>>();
  return InvalidArgumentError("post_processor names special token '" + name + "', which is not in the vocabulary");
}

StatusOr<std::unique_ptr<PostProcessor>> ParseTemplate(const Json& config, const Vocab& vocab) {
  std::vector<TemplatePiece> pieces;
  const Json& special_tokens = Member(config, "special_tokens");
  for (const Json& item : Member(config, "single")) {
    if (item.contains("Sequence")) {
      pieces.push_back({true, {}});
      continue;
    }
    const std::string name = item.at("SpecialToken").at("id").get<std::string>();
    const Json& listed = special_tokens.is_object() && special_tokens.contains(name)
                             ? Member(special_tokens.at(name), "ids") : Json();
    ASSIGN_OR_RETURN(std::vector<int32_t> ids, ResolveSpecial(vocab, name, listed));
    pieces.push_back({false, std::move(ids)});
  }
  return MakeTemplatePostProcessor(std::move(pieces));
}

}  // namespace

StatusOr<Pattern> ParsePattern(const Json& config) {
  if (config.is_object() && config.contains("String")) {
    return Pattern::Literal(config.at("String").get<std::string>());
  }
  if (config.is_object() && config.contains("Regex")) {
    std::string source = config.at("Regex").get<std::string>();
    ASSIGN_OR_RETURN(std::unique_ptr<Regex> regex, Regex::FromOniguruma(source));
    return Pattern::FromRegex(std::move(regex));
  }
  return InvalidArgumentError("pattern " + config.dump() + " is neither {\"String\"} nor {\"Regex\"}");
}

StatusOr<std::unique_ptr<Normalizer>> ParseNormalizer(const Json& config) {
  if (config.is_null()) return std::unique_ptr<Normalizer>();
  const std::string type = TypeOf(config);
  if (type == "Sequence") {
    std::vector<std::unique_ptr<Normalizer>> steps;
    for (const Json& step : Member(config, "normalizers")) {
      ASSIGN_OR_RETURN(std::unique_ptr<Normalizer> normalizer, ParseNormalizer(step));
      if (normalizer) steps.push_back(std::move(normalizer));
    }
    return MakeSequenceNormalizer(std::move(steps));
  }
  if (type == "Prepend") return MakePrependNormalizer(GetString(config, "prepend", ""));
  if (type == "Replace") {
    ASSIGN_OR_RETURN(Pattern pattern, ParsePattern(Member(config, "pattern")));
    return MakeReplaceNormalizer(std::move(pattern), GetString(config, "content", ""));
  }
  if (type == "NFC") return MakeUnicodeNormalizer(UnicodeForm::kNfc);
  if (type == "NFD") return MakeUnicodeNormalizer(UnicodeForm::kNfd);
  if (type == "NFKC") return MakeUnicodeNormalizer(UnicodeForm::kNfkc);
  if (type == "NFKD") return MakeUnicodeNormalizer(UnicodeForm::kNfkd);
  if (type == "Lowercase") return MakeLowercaseNormalizer();
  if (type == "StripAccents") return MakeStripAccentsNormalizer();
  if (type == "BertNormalizer") {
    BertNormalizerOptions options;
    options.clean_text = GetBool(config, "clean_text", true);
    options.handle_chinese_chars = GetBool(config, "handle_chinese_chars", true);
    options.lowercase = GetBool(config, "lowercase", true);
    options.strip_accents = GetBool(config, "strip_accents", options.lowercase);  // null: as lowercase
    return MakeBertNormalizer(options);
  }
  if (type == "Strip") {
    return MakeStripNormalizer(GetBool(config, "strip_left", false), GetBool(config, "strip_right", false));
  }
  return Unsupported("normalizer", config);
}

StatusOr<std::unique_ptr<PreTokenizer>> ParsePreTokenizer(const Json& config) {
  if (config.is_null()) return std::unique_ptr<PreTokenizer>();
  const std::string type = TypeOf(config);
  if (type == "Sequence") {
    std::vector<std::unique_ptr<PreTokenizer>> steps;
    for (const Json& step : Member(config, "pretokenizers")) {
      ASSIGN_OR_RETURN(std::unique_ptr<PreTokenizer> pre_tokenizer, ParsePreTokenizer(step));
      if (pre_tokenizer) steps.push_back(std::move(pre_tokenizer));
    }
    return MakeSequencePreTokenizer(std::move(steps));
  }
  if (type == "Split") return ParseSplit(config);
  if (type == "ByteLevel") {
    return MakeByteLevelPreTokenizer(GetBool(config, "add_prefix_space", false),
                                     GetBool(config, "use_regex", true));
  }
  if (type == "Metaspace") return ParseMetaspace(config);
  if (type == "BertPreTokenizer") return MakeBertPreTokenizer();
  if (type == "Digits") return MakeDigitsPreTokenizer(GetBool(config, "individual_digits", false));
  return Unsupported("pre_tokenizer", config);
}

StatusOr<std::unique_ptr<PostProcessor>> ParsePostProcessor(const Json& config, const Vocab& vocab) {
  if (config.is_null()) return std::unique_ptr<PostProcessor>();
  const std::string type = TypeOf(config);
  if (type == "TemplateProcessing") return ParseTemplate(config, vocab);
  if (type == "RobertaProcessing" || type == "BertProcessing") {
    const Json& cls = config.at("cls");
    const Json& sep = config.at("sep");
    ASSIGN_OR_RETURN(auto cls_ids, ResolveSpecial(vocab, cls.at(0).get<std::string>(), Json::array({cls.at(1)})));
    ASSIGN_OR_RETURN(auto sep_ids, ResolveSpecial(vocab, sep.at(0).get<std::string>(), Json::array({sep.at(1)})));
    return MakeClsSepPostProcessor(cls_ids[0], sep_ids[0]);
  }
  if (type == "ByteLevel") return MakeIdentityPostProcessor();
  if (type == "Sequence") {
    std::vector<std::unique_ptr<PostProcessor>> steps;
    for (const Json& step : Member(config, "processors")) {
      ASSIGN_OR_RETURN(std::unique_ptr<PostProcessor> processor, ParsePostProcessor(step, vocab));
      if (processor) steps.push_back(std::move(processor));
    }
    return MakeSequencePostProcessor(std::move(steps));
  }
  return Unsupported("post_processor", config);
}

StatusOr<std::unique_ptr<Decoder>> ParseDecoder(const Json& config, const TokenSet* added_tokens) {
  if (config.is_null()) return std::unique_ptr<Decoder>();
  const std::string type = TypeOf(config);
  if (type == "Sequence") {
    std::vector<std::unique_ptr<Decoder>> steps;
    for (const Json& step : Member(config, "decoders")) {
      ASSIGN_OR_RETURN(std::unique_ptr<Decoder> decoder, ParseDecoder(step, added_tokens));
      if (decoder) steps.push_back(std::move(decoder));
    }
    return MakeSequenceDecoder(std::move(steps));
  }
  if (type == "ByteLevel") return MakeByteLevelDecoder(added_tokens);
  if (type == "Metaspace") {
    ASSIGN_OR_RETURN(PrependScheme scheme, ParsePrependScheme(config));
    return MakeMetaspaceDecoder(GetString(config, "replacement", "\xE2\x96\x81"), scheme != PrependScheme::kNever);
  }
  if (type == "Replace") {
    ASSIGN_OR_RETURN(Pattern pattern, ParsePattern(Member(config, "pattern")));
    return MakeReplaceDecoder(std::move(pattern), GetString(config, "content", ""));
  }
  if (type == "ByteFallback") return MakeByteFallbackDecoder();
  if (type == "Fuse") return MakeFuseDecoder();
  if (type == "Strip") {
    return MakeStripDecoder(GetString(config, "content", " "), GetInt(config, "start", 0), GetInt(config, "stop", 0));
  }
  if (type == "WordPiece") return MakeWordPieceDecoder(GetString(config, "prefix", "##"), GetBool(config, "cleanup", true));
  if (type == "BPEDecoder") return MakeBpeDecoder(GetString(config, "suffix", "</w>"));
  return Unsupported("decoder", config);
}

}  // namespace surge
