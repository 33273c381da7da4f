#include "server/request_trace.h"

#include <mutex>
#include <vector>

#include <gtest/gtest.h>
#include <nlohmann/json.hpp>

#include "net/http_client.h"
#include "net/http_server.h"

namespace surge {
namespace {

using SteadyClock = std::chrono::steady_clock;
using nlohmann::json;

// A real HTTP server whose one route traces its request as the OpenAI server does, and an
// exporter whose send function keeps the OTLP/JSON it is given.
class TracedServer {
 public:
  using Body = std::function<void(RequestTrace* trace, net::ResponseWriter& writer)>;

  TracedServer(double sample_ratio, Body body)
      : exporter_(Options(), [this](std::string_view, const std::string& request) -> StatusOr<int> {
          const json parsed = json::parse(request);
          std::lock_guard<std::mutex> lock(mu_);
          for (const json& span : parsed["resourceSpans"][0]["scopeSpans"][0]["spans"]) spans_.push_back(span);
          return 200;
        }),
        tracer_(sample_ratio, &exporter_) {
    http_.Route("POST", "/v1/completions", [this, body](net::HttpRequest request, std::shared_ptr<net::ResponseWriter> writer) {
      std::shared_ptr<RequestTrace> trace =
          RequestTrace::Start(&tracer_, request, "/v1/completions", SteadyClock::now(), writer);
      body(trace.get(), *writer);
    });
    EXPECT_TRUE(http_.Start().ok());
  }

  net::HttpResponse Post(net::HttpHeaders headers) {
    StatusOr<net::HttpResponse> response = net::Fetch(
        "POST", "http://127.0.0.1:" + std::to_string(http_.port()) + "/v1/completions", "{}", std::move(headers));
    EXPECT_TRUE(response.ok());
    return *response;
  }
  // Every span exported so far (Shutdown sends what is queued).
  std::vector<json> Spans() {
    http_.Stop();
    exporter_.Shutdown();
    std::lock_guard<std::mutex> lock(mu_);
    return spans_;
  }

 private:
  static obs::SpanExporterOptions Options() {
    obs::SpanExporterOptions options;
    options.protocol = obs::OtlpProtocol::kHttpJson;
    return options;
  }

  std::mutex mu_;
  std::vector<json> spans_;
  obs::SpanExporter exporter_;
  obs::Tracer tracer_;
  net::HttpServer http_;
};

const json* Find(const std::vector<json>& spans, std::string_view name) {
  for (const json& span : spans) {
    if (span["name"] == name) return &span;
  }
  return nullptr;
}

int64_t Nanos(const json& value) { return std::stoll(value.get<std::string>()); }

constexpr char kParent[] = "00-4bf92f3577b34da6a3ce929d0e0e4736-00f067aa0ba902b7-01";

TEST(RequestTraceTest, ContinuesTheClientsTraceAndBuildsThePhases) {
  TracedServer server(0.0, [](RequestTrace* trace, net::ResponseWriter& writer) {
    const SteadyClock::time_point submitted = SteadyClock::now();
    trace->Set("gen_ai.usage.output_tokens", int64_t{3});
    trace->SetGenerationTimes({submitted, 0.002, submitted + std::chrono::milliseconds(5),
                               submitted + std::chrono::milliseconds(9)});
    writer.SendJson(200, "{}");
  });
  const net::HttpResponse response = server.Post({{"traceparent", kParent}, {"tracestate", "b=2"}, {"TraceState", "a=1"}});
  const std::string traceparent = response.headers.Get("traceparent");
  ASSERT_EQ(traceparent.size(), 55u);
  EXPECT_EQ(traceparent.substr(0, 36), "00-4bf92f3577b34da6a3ce929d0e0e4736-");
  EXPECT_EQ(traceparent.substr(52), "-01");  // the client sampled it: ratio 0 does not overrule
  const std::vector<json> spans = server.Spans();
  ASSERT_EQ(spans.size(), 4u);
  const json* root = Find(spans, "POST /v1/completions");
  ASSERT_NE(root, nullptr);
  EXPECT_EQ((*root)["spanId"], traceparent.substr(36, 16));
  EXPECT_EQ((*root)["parentSpanId"], "00f067aa0ba902b7");
  EXPECT_EQ((*root)["traceState"], "b=2,a=1");  // both header lines, in order
  EXPECT_EQ((*root)["kind"], 2);
  const json* queue = Find(spans, "queue_wait");
  const json* prefill = Find(spans, "prefill");
  const json* decode = Find(spans, "decode");
  ASSERT_TRUE(queue && prefill && decode);
  for (const json* child : {queue, prefill, decode}) EXPECT_EQ((*child)["parentSpanId"], (*root)["spanId"]);
  EXPECT_EQ(Nanos((*queue)["endTimeUnixNano"]) - Nanos((*queue)["startTimeUnixNano"]), 2'000'000);
  EXPECT_EQ((*prefill)["startTimeUnixNano"], (*queue)["endTimeUnixNano"]);
  EXPECT_EQ(Nanos((*prefill)["endTimeUnixNano"]) - Nanos((*queue)["startTimeUnixNano"]), 5'000'000);
  EXPECT_EQ(Nanos((*decode)["endTimeUnixNano"]) - Nanos((*decode)["startTimeUnixNano"]), 4'000'000);
  EXPECT_EQ((*decode)["endTimeUnixNano"], (*root)["endTimeUnixNano"]);
  EXPECT_LE(Nanos((*root)["startTimeUnixNano"]), Nanos((*queue)["startTimeUnixNano"]));
  bool status_seen = false;
  for (const json& attribute : (*root)["attributes"]) {
    if (attribute["key"] == "http.response.status_code") status_seen = attribute["value"]["intValue"] == "200";
  }
  EXPECT_TRUE(status_seen);
}

TEST(RequestTraceTest, UnsampledTracesAreAnsweredButNotExported) {
  TracedServer server(0.0, [](RequestTrace*, net::ResponseWriter& writer) { writer.SendJson(200, "{}"); });
  const std::string traceparent = server.Post({}).headers.Get("traceparent");
  EXPECT_EQ(traceparent.substr(52), "-00");
  const std::string client_unsampled = server.Post({{"traceparent", "00-4bf92f3577b34da6a3ce929d0e0e4736-00f067aa0ba902b7-00"}})
                                           .headers.Get("traceparent");
  EXPECT_EQ(client_unsampled.substr(3, 32), "4bf92f3577b34da6a3ce929d0e0e4736");
  EXPECT_EQ(client_unsampled.substr(52), "-00");
  EXPECT_TRUE(server.Spans().empty());
}

TEST(RequestTraceTest, AnInvalidTraceparentStartsANewTraceWithoutItsTracestate) {
  TracedServer server(1.0, [](RequestTrace*, net::ResponseWriter& writer) { writer.SendJson(503, "{}"); });
  const std::string traceparent =
      server.Post({{"traceparent", "00-00000000000000000000000000000000-00f067aa0ba902b7-01"}, {"tracestate", "a=1"}})
          .headers.Get("traceparent");
  EXPECT_NE(traceparent.substr(3, 32), "00000000000000000000000000000000");
  const std::vector<json> spans = server.Spans();
  ASSERT_EQ(spans.size(), 1u);  // no generation times: the server span alone
  EXPECT_FALSE(spans[0].contains("parentSpanId"));
  EXPECT_FALSE(spans[0].contains("traceState"));
  EXPECT_EQ(spans[0]["status"]["code"], 2);  // a 5xx fails the span
}

}  // namespace
}  // namespace surge
