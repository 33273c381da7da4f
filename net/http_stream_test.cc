// Streaming responses: chunks produced on other threads, client disconnects, slow readers.
#include <gtest/gtest.h>

#include <future>
#include <mutex>

#include "net/http_client.h"
#include "net/http_server.h"
#include "net/sse.h"
#include "net/test_util.h"

namespace surge::net {
namespace {

using Clock = std::chrono::steady_clock;
using testing::RawConnection;

// Owns the producer threads that handlers start, and joins them at the end.
class Producers {
 public:
  ~Producers() {
    std::lock_guard<std::mutex> lock(mu_);
    for (std::thread& thread : threads_) thread.join();
  }
  void Start(std::function<void()> body) {
    std::lock_guard<std::mutex> lock(mu_);
    threads_.emplace_back(std::move(body));
  }

 private:
  std::mutex mu_;
  std::vector<std::thread> threads_;
};

std::string UrlFor(const HttpServer& server, std::string_view target) {
  return "http://127.0.0.1:" + std::to_string(server.port()) + std::string(target);
}

TEST(HttpStreamTest, ChunksWrittenFromAnotherThreadArriveInOrder) {
  constexpr int kNumEvents = 500;
  Producers producers;
  HttpServer server;
  std::promise<bool> server_closed;
  server.Route("POST", "/stream", [&](HttpRequest, std::shared_ptr<ResponseWriter> writer) {
    writer->StartStream(200, SseHeaders());
    writer->OnClose([&server_closed, writer] { server_closed.set_value(writer->disconnected()); });
    producers.Start([writer] {
      for (int i = 0; i < kNumEvents; ++i) {
        EXPECT_TRUE(writer->Write(EncodeSseData("{\"i\":" + std::to_string(i) + "}\nline2")));
      }
      writer->Write(EncodeSseData("[DONE]"));
      writer->End();
      EXPECT_FALSE(writer->Write("too late"));
    });
  });
  ASSERT_TRUE(server.Start().ok());

  HttpClient client;
  SseParser parser;
  std::vector<SseEvent> events;
  std::vector<SteadyTime> arrivals;
  std::promise<ClientResult> done;
  ClientCallbacks callbacks;
  callbacks.on_head = [](const HttpResponse& head) {
    EXPECT_EQ(head.headers.Get("Content-Type"), "text/event-stream");
    EXPECT_EQ(head.headers.Get("Transfer-Encoding"), "chunked");
  };
  callbacks.on_data = [&](std::string_view data, SteadyTime arrival) {
    arrivals.push_back(arrival);
    EXPECT_TRUE(parser.Feed(data, &events).ok());
    return true;
  };
  callbacks.on_done = [&](ClientResult result) { done.set_value(std::move(result)); };
  client.Send({.method = "POST", .url = UrlFor(server, "/stream"), .body = "{}"}, callbacks);
  ClientResult result = done.get_future().get();
  ASSERT_TRUE(result.status.ok()) << result.status.ToString();
  EXPECT_EQ(result.response.status, 200);
  ASSERT_EQ(events.size(), kNumEvents + 1u);
  for (int i = 0; i < kNumEvents; ++i) {
    ASSERT_EQ(events[i].data, "{\"i\":" + std::to_string(i) + "}\nline2");
  }
  EXPECT_EQ(events.back().data, "[DONE]");
  EXPECT_TRUE(std::is_sorted(arrivals.begin(), arrivals.end()));
  EXPECT_LE(result.timings.start, result.timings.head);
  EXPECT_LE(result.timings.head, arrivals.front());
  EXPECT_LE(arrivals.back(), result.timings.done);
  EXPECT_FALSE(server_closed.get_future().get());  // ended normally, not disconnected
}

TEST(HttpStreamTest, ClientDisconnectFiresOnCloseAtOnce) {
  Producers producers;
  HttpServer server;
  std::promise<Clock::time_point> closed_at;
  std::promise<std::shared_ptr<ResponseWriter>> writer_promise;
  server.Route("GET", "/stream", [&](HttpRequest, std::shared_ptr<ResponseWriter> writer) {
    writer->StartStream(200, SseHeaders());
    writer->OnClose([&closed_at] { closed_at.set_value(Clock::now()); });
    writer_promise.set_value(writer);
    producers.Start([writer] {
      // Token-like pacing until the client is gone; bounded in case it never goes.
      for (int i = 0; i < 2000 && writer->Write(EncodeSseData("token")); ++i) {
        std::this_thread::sleep_for(std::chrono::milliseconds(2));
      }
    });
  });
  ASSERT_TRUE(server.Start().ok());

  HttpClient client;
  std::atomic<int> num_chunks{0};
  Clock::time_point aborted_at;
  std::promise<ClientResult> done;
  ClientCallbacks callbacks;
  callbacks.on_data = [&](std::string_view, SteadyTime) {
    if (++num_chunks < 5) return true;
    aborted_at = Clock::now();
    return false;  // hang up mid-stream
  };
  callbacks.on_done = [&](ClientResult result) { done.set_value(std::move(result)); };
  client.Send({.url = UrlFor(server, "/stream")}, callbacks);
  EXPECT_EQ(done.get_future().get().status.code(), StatusCode::kCancelled);

  std::future<Clock::time_point> closed = closed_at.get_future();
  ASSERT_EQ(closed.wait_for(std::chrono::seconds(2)), std::future_status::ready);
  EXPECT_LT(closed.get() - aborted_at, std::chrono::milliseconds(100));
  std::shared_ptr<ResponseWriter> writer = writer_promise.get_future().get();
  EXPECT_TRUE(writer->disconnected());
  EXPECT_TRUE(writer->closed());
  EXPECT_FALSE(writer->Write(EncodeSseData("nobody listens")));
  bool called_late = false;
  std::promise<void> late;
  writer->OnClose([&] {  // registered after the close: still runs
    called_late = true;
    late.set_value();
  });
  late.get_future().wait();
  EXPECT_TRUE(called_late);
}

TEST(HttpStreamTest, ClientThatDoesNotReadIsCutOffNotBuffered) {
  Producers producers;
  HttpServer server({.max_write_buffer_bytes = 1 << 20});
  std::promise<size_t> bytes_accepted;
  server.Route("GET", "/flood", [&](HttpRequest, std::shared_ptr<ResponseWriter> writer) {
    writer->StartStream(200, {{"Content-Type", "application/octet-stream"}});
    producers.Start([writer, &bytes_accepted] {
      std::string block(64 << 10, 'z');
      size_t total = 0;
      while (total < (size_t{512} << 20) && writer->Write(block)) total += block.size();
      EXPECT_TRUE(writer->disconnected());
      bytes_accepted.set_value(total);
    });
  });
  ASSERT_TRUE(server.Start().ok());
  RawConnection raw(server.port());
  raw.Send("GET /flood HTTP/1.1\r\nHost: x\r\n\r\n");  // and never read
  std::future<size_t> accepted = bytes_accepted.get_future();
  ASSERT_EQ(accepted.wait_for(std::chrono::seconds(5)), std::future_status::ready);
  // Socket buffers absorb some megabytes; the writer's own backlog stays under 1 MiB.
  EXPECT_LT(accepted.get(), size_t{64} << 20);
}

TEST(HttpStreamTest, AbandonedStreamLooksIncompleteToTheClient) {
  HttpServer server;
  server.Route("GET", "/cut", [](HttpRequest, std::shared_ptr<ResponseWriter> writer) {
    writer->StartStream(200, SseHeaders());
    writer->Write(EncodeSseData("partial"));
  });  // the writer is dropped without End
  ASSERT_TRUE(server.Start().ok());
  std::string received;
  std::promise<ClientResult> done;
  ClientCallbacks callbacks;
  callbacks.on_data = [&](std::string_view data, SteadyTime) {
    received.append(data);
    return true;
  };
  callbacks.on_done = [&](ClientResult result) { done.set_value(std::move(result)); };
  HttpClient client;
  client.Send({.url = UrlFor(server, "/cut")}, callbacks);
  ClientResult result = done.get_future().get();
  EXPECT_EQ(result.status.code(), StatusCode::kDataLoss) << result.status.ToString();
  EXPECT_EQ(received, "data: partial\n\n");
}

TEST(HttpStreamTest, Http10StreamEndsWithTheConnection) {
  HttpServer server;
  server.Route("GET", "/s", [](HttpRequest, std::shared_ptr<ResponseWriter> writer) {
    writer->StartStream(200, {{"Content-Type", "text/plain"}});
    writer->Write("one ");
    writer->Write("two");
    writer->End();
  });
  ASSERT_TRUE(server.Start().ok());
  RawConnection raw(server.port());
  raw.Send("GET /s HTTP/1.0\r\n\r\n");
  std::string reply = raw.ReadUntilClose();
  EXPECT_EQ(reply.find("Transfer-Encoding"), std::string::npos) << reply;
  EXPECT_TRUE(reply.ends_with("\r\n\r\none two")) << reply;
}

TEST(HttpStreamTest, StopClosesStreamsInFlight) {
  auto server = std::make_unique<HttpServer>();
  std::promise<std::shared_ptr<ResponseWriter>> writer_promise;
  std::atomic<bool> on_close_ran{false};
  server->Route("GET", "/s", [&](HttpRequest, std::shared_ptr<ResponseWriter> writer) {
    writer->StartStream(200, SseHeaders());
    writer->OnClose([&] { on_close_ran = true; });
    writer_promise.set_value(writer);
  });
  ASSERT_TRUE(server->Start().ok());
  RawConnection raw(server->port());
  raw.Send("GET /s HTTP/1.1\r\nHost: x\r\n\r\n");
  std::shared_ptr<ResponseWriter> writer = writer_promise.get_future().get();
  raw.ReadUntil("\r\n\r\n");
  server->Stop();
  EXPECT_TRUE(on_close_ran);
  EXPECT_TRUE(writer->disconnected());
  EXPECT_FALSE(writer->Write("after stop"));
  server.reset();  // the writer outlives the server safely
  writer->End();
}

}  // namespace
}  // namespace surge::net
