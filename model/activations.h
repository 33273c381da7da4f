// ForwardActivations: the forward pass's scratch buffers (llama2.c's RunState), sized for
// the largest batch seen so far: grown when a bigger batch comes, never shrunk, so that a
// steady workload allocates nothing per step.
#pragma once

#include <cstdint>
#include <vector>

#include "kernels/attention.h"

namespace surge {

// The buffers every layer uses.
struct Activations {
  int64_t capacity_tokens = 0;
  std::vector<float> hidden;  // [num_tokens, hidden_size]: the residual stream
  std::vector<float> normed;  // [num_tokens, hidden_size]: norm output, then o_proj/down output
  std::vector<float> qkv;     // [num_tokens, qkv_size()]
  std::vector<float> attention;            // [num_tokens, attention_output_size()]
  std::vector<float> gate_up;              // [num_tokens, 2 * max_intermediate_size()]
  std::vector<float> mlp;                  // [num_tokens, max_intermediate_size()]
  std::vector<float> rope_cos;             // [num_tokens, rope_dim() / 2]
  std::vector<float> rope_sin;             // [num_tokens, rope_dim() / 2]
  std::vector<int32_t> sequence_of_token;  // [num_tokens]: index into batch.sequences
  std::vector<float> logits_input;         // [num_logits_rows, hidden_size]: final-normed rows
  std::vector<AttentionQueries> chunks;    // [num_sequences]; q/out point into qkv/attention
  // Flash-decoding (ForwardPass::Attend): the batch's split decodes, the first of their
  // (kv head, partition) work items, and their partials (kernels/attention.h).
  std::vector<int32_t> split_sequences;       // [num_split]: index into batch.sequences
  std::vector<int64_t> split_item_begin;      // [num_split + 1]
  std::vector<int64_t> split_partials_begin;  // [num_split + 1]: offsets into attention_partials
  std::vector<float> attention_partials;      // AttentionPartialsFloats per split decode
};

// MLA's buffers (H heads, L = kv_lora_rank, R = qk_rope_head_dim).
struct MlaActivations {
  int64_t capacity_tokens = 0;
  std::vector<float> q;          // [num_tokens, H * q_head_dim]: q_b output (q_lora_rank set)
  std::vector<float> q_latent;   // [num_tokens, q_lora_rank]: normed q_a output
  std::vector<float> query;      // [num_tokens, H, L + R]: absorbed queries
  std::vector<float> out;        // [num_tokens, H, L + R]: attention over the latent
  std::vector<float> head_in;    // [H, num_tokens, max(nope, L)]: one head's input rows
  std::vector<float> head_out;   // [H, num_tokens, max(L, v)]: one head's output rows
  // Expanded mode, one sequence at a time: [context, L + R] cached rows, [context, L]
  // latents, [context, H * nope] keys, [context, H * v] values.
  std::vector<float> expanded;
};

// MoE buffers (E routed experts, k = num_experts_per_tok).
struct MoeActivations {
  int64_t capacity_tokens = 0;
  std::vector<float> router_logits;   // [num_tokens, E]
  std::vector<int32_t> expert_ids;    // [num_tokens, k]: ascending within a token
  std::vector<float> expert_weights;  // [num_tokens, k]
  std::vector<int32_t> slot_row;      // [num_tokens, k]: its row in the grouped buffers
  std::vector<int32_t> expert_begin;  // [E + 1]: grouped rows of expert e
  std::vector<int32_t> expert_fill;   // [E]: next free grouped row of expert e
  std::vector<int32_t> active_experts;  // experts with rows this layer (capacity E)
  std::vector<float> input;           // [num_tokens * k, hidden_size]: rows grouped by expert
  std::vector<float> gate_up;         // [num_tokens * k, 2 * moe_intermediate_size]
  std::vector<float> act;             // [num_tokens * k, moe_intermediate_size]
  std::vector<float> output;          // [num_tokens * k, hidden_size]
  std::vector<float> routed;          // [num_tokens, hidden_size]: weighted expert sum
};

// All of one executor's buffers.
struct ForwardActivations {
  Activations act;
  MlaActivations mla;  // MLA models only
  MoeActivations moe;  // MoE models only
};

}  // namespace surge
