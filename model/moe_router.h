// MoE routing: which experts a token goes to and with what weights, as DeepSeek V2/V3's
// gates decide (softmax or sigmoid scores; greedy, group-limited greedy or noaux_tc
// top-k). Pure functions of one token's router logits, so routing is batch-invariant.
#pragma once

#include <cstdint>

#include "model/config.h"

namespace surge {

// logits [n_routed_experts] (f32 router output) -> ids [num_experts_per_tok] in
// ascending order and their weights. score_bias [n_routed_experts] is noaux_tc's
// e_score_correction_bias (null otherwise): it steers the choice, not the weights.
// `v3_scaling`: V3 multiplies the weights by routed_scaling_factor even after
// normalizing; V2 only when not normalized. `scratch` holds 2 * n_routed_experts floats.
void RouteToken(const MoeConfig& config, bool v3_scaling, const float* logits,
                const float* score_bias, float* scratch, int32_t* ids, float* weights);

}  // namespace surge
