// Small tokenizer.json documents built in code for the tokenizer unit tests.
#pragma once

#include <string>
#include <utility>
#include <vector>

#include <nlohmann/json.hpp>

#include "tokenizer/byte_level.h"

namespace surge::testing {

// A GPT-2 style byte-level BPE: ids 0..255 are the 256 byte characters, then one id per
// merge result in merge order, then `added` tokens. Pre-tokenizer: the Llama-3 Split
// regex + ByteLevel; decoder: ByteLevel.
inline nlohmann::json ByteLevelTokenizerJson(const std::vector<std::pair<std::string, std::string>>& merges,
                                             const nlohmann::json& added = nlohmann::json::array()) {
  nlohmann::json vocab = nlohmann::json::object();
  for (int byte = 0; byte < 256; ++byte) vocab[std::string(ByteToUnicode(static_cast<uint8_t>(byte)))] = byte;
  nlohmann::json merge_list = nlohmann::json::array();
  for (const auto& [left, right] : merges) {
    if (!vocab.contains(left + right)) vocab[left + right] = static_cast<int>(vocab.size());
    merge_list.push_back(left + " " + right);
  }
  return {
      {"version", "1.0"},
      {"added_tokens", added},
      {"normalizer", nullptr},
      {"pre_tokenizer",
       {{"type", "Sequence"},
        {"pretokenizers",
         {{{"type", "Split"},
           {"pattern",
            {{"Regex",
              "(?i:'s|'t|'re|'ve|'m|'ll|'d)|[^\\r\\n\\p{L}\\p{N}]?\\p{L}+|\\p{N}{1,3}| ?[^\\s\\p{L}\\p{N}]+[\\r\\n]*|"
              "\\s*[\\r\\n]+|\\s+(?!\\S)|\\s+"}}},
           {"behavior", "Isolated"},
           {"invert", false}},
          {{"type", "ByteLevel"}, {"add_prefix_space", false}, {"use_regex", false}}}}}},
      {"post_processor", {{"type", "ByteLevel"}}},
      {"decoder", {{"type", "ByteLevel"}}},
      {"model", {{"type", "BPE"}, {"vocab", vocab}, {"merges", merge_list}}},
  };
}

// One added-token entry of tokenizer.json.
inline nlohmann::json AddedTokenJson(int id, const std::string& content, bool special, bool lstrip = false,
                                     bool rstrip = false) {
  return {{"id", id},         {"content", content}, {"special", special},     {"lstrip", lstrip},
          {"rstrip", rstrip}, {"normalized", false}, {"single_word", false}};
}

}  // namespace surge::testing
