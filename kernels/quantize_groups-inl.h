// kS8Groups' activation converter written once for every ISA: each group of a row with
// its own scale (QuantizeActivationRow on the group), its q sum and scale * q sum.
// Included inside each ISA's `#pragma GCC target` region after that ISA's AbsMax(x, n),
// Inverse(amax) and QuantizeSpan(x, k, j0, span, inverse, units, unit_stride) (hence no
// include guard, and an anonymous namespace), so it compiles once per ISA.

namespace surge {
namespace {

void QuantizeGroups(const float* x, int64_t k, const internal::PreparedActivations& out,
                    int64_t i) {
  const int64_t group = out.group_size;
  for (int64_t g = 0; g < out.num_groups; ++g) {
    const int64_t j0 = g * group;
    const float amax = AbsMax(x + j0, k - j0 < group ? k - j0 : group);
    const float scale = amax / 127.0f;
    const int32_t sum =
        QuantizeSpan(x, k, j0, group, Inverse(amax), out.Unit(i, 0), out.rows_per_block * 4);
    out.scales[i * out.num_groups + g] = scale;
    out.group_sums[i * out.num_groups + g] = scale * static_cast<float>(sum);
    out.q_sums[i * out.num_groups + g] = static_cast<float>(sum);
  }
}

}  // namespace
}  // namespace surge
