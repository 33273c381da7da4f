#include "obs/tracer.h"

#include <gtest/gtest.h>

namespace surge::obs {
namespace {

TraceId TraceIdWithRandomPart(uint64_t random_part) {
  TraceId id{};
  id[0] = 0xab;  // the first 9 bytes do not matter
  for (int i = 15; i >= 9; --i, random_part >>= 8) id[i] = static_cast<uint8_t>(random_part);
  return id;
}

TEST(SamplerTest, RatioComparesTheRandomPartOfTheTraceId) {
  const uint64_t half = uint64_t{1} << 55;  // 0.5 * 2^56
  EXPECT_TRUE(SampledByRatio(TraceIdWithRandomPart(half - 1), 0.5));
  EXPECT_FALSE(SampledByRatio(TraceIdWithRandomPart(half), 0.5));
  EXPECT_TRUE(SampledByRatio(TraceIdWithRandomPart(0), 1e-9));
  EXPECT_FALSE(SampledByRatio(TraceIdWithRandomPart(0), 0.0));
  EXPECT_TRUE(SampledByRatio(TraceIdWithRandomPart((uint64_t{1} << 56) - 1), 1.0));
}

TEST(SamplerTest, TheSameTraceGetsTheSameAnswerEverywhereAndTheRatioHolds) {
  int num_sampled = 0;
  constexpr int kNumTraces = 20000;
  for (int i = 0; i < kNumTraces; ++i) {
    const TraceId id = RandomTraceId();
    const bool sampled = SampledByRatio(id, 0.25);
    // Another process (another tracer) with the same ratio decides alike.
    EXPECT_EQ(SampledByRatio(id, 0.25), sampled);
    // A larger ratio samples a superset: a trace kept at 25% is kept at 50%.
    if (sampled) {
      EXPECT_TRUE(SampledByRatio(id, 0.5));
    }
    num_sampled += sampled;
  }
  EXPECT_NEAR(num_sampled / static_cast<double>(kNumTraces), 0.25, 0.02);
}

TEST(TracerTest, ContinuesTheParentAndRespectsItsSampledFlag) {
  const Tracer never(0.0, nullptr);
  TraceContext parent;
  parent.trace_id = RandomTraceId();
  parent.span_id = RandomSpanId();
  parent.trace_flags = kSampledFlag;
  parent.trace_state = "a=1";
  parent.remote = true;
  const TraceContext child = never.StartSpan(parent);
  EXPECT_EQ(child.trace_id, parent.trace_id);
  EXPECT_NE(child.span_id, parent.span_id);
  EXPECT_TRUE(child.sampled());  // the parent sampled it, whatever our ratio
  EXPECT_EQ(child.trace_state, "a=1");
  EXPECT_FALSE(child.remote);
  parent.trace_flags = 0;
  const Tracer always(1.0, nullptr);
  EXPECT_FALSE(always.StartSpan(parent).sampled());  // nor does ours overrule a "no"
}

TEST(TracerTest, RootsAreSampledByRatio) {
  const Tracer always(1.0, nullptr);
  const Tracer never(0.0, nullptr);
  const TraceContext root = always.StartSpan(std::nullopt);
  EXPECT_TRUE(root.valid());
  EXPECT_TRUE(root.sampled());
  EXPECT_FALSE(never.StartSpan(std::nullopt).sampled());
  const TraceContext child = Tracer::ChildOf(root);
  EXPECT_EQ(child.trace_id, root.trace_id);
  EXPECT_NE(child.span_id, root.span_id);
}

TEST(TracerTest, RecordsOnlySampledSpans) {
  int num_sent = 0;
  SpanExporterOptions options;
  options.batch_timeout_ms = 0;
  SpanExporter exporter(options, [&](std::string_view, const std::string&) -> StatusOr<int> {
    ++num_sent;
    return 200;
  });
  const Tracer tracer(1.0, &exporter);
  SpanData sampled;
  sampled.trace_flags = kSampledFlag;
  SpanData unsampled;
  tracer.Record(sampled);
  tracer.Record(unsampled);
  exporter.Shutdown();
  EXPECT_EQ(exporter.stats().num_exported, 1);
  EXPECT_EQ(num_sent, 1);
}

}  // namespace
}  // namespace surge::obs
