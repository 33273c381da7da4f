#include "api/responses_response.h"

#include <gtest/gtest.h>

#include <string>
#include <vector>

namespace surge::api {
namespace {

std::vector<std::string> Types(const std::vector<Json>& events) {
  std::vector<std::string> types;
  for (const Json& event : events) types.push_back(event["type"]);
  return types;
}

ChoiceOutput Text(std::string text) {
  ChoiceOutput delta;
  delta.text = std::move(text);
  return delta;
}

TEST(ResponsesBuilderTest, TextStreamEventsInOrderWithSequenceNumbers) {
  ResponsesBuilder builder("resp_1", 5, "m", Json{{"instructions", nullptr}});
  std::vector<Json> events = builder.Start();
  for (const char* piece : {"Hel", "lo"}) {
    for (Json& event : builder.Add(Text(piece))) events.push_back(std::move(event));
  }
  for (Json& event : builder.Finish("stop", Usage{3, 2, 1, std::nullopt}, OkStatus())) events.push_back(std::move(event));
  EXPECT_EQ(Types(events), (std::vector<std::string>{
                               "response.created", "response.in_progress", "response.output_item.added",
                               "response.content_part.added", "response.output_text.delta", "response.output_text.delta",
                               "response.output_text.done", "response.content_part.done", "response.output_item.done",
                               "response.completed"}));
  for (size_t i = 0; i < events.size(); ++i) EXPECT_EQ(events[i]["sequence_number"], i);
  EXPECT_EQ(events[0]["response"]["status"], "in_progress");
  EXPECT_EQ(events[0]["response"]["output"], Json::array());
  EXPECT_EQ(events[4]["delta"], "Hel");
  EXPECT_EQ(events[4]["item_id"], events[2]["item"]["id"]);
  EXPECT_EQ(events[6]["text"], "Hello");
  const Json& response = events.back()["response"];
  EXPECT_EQ(response["id"], "resp_1");
  EXPECT_EQ(response["object"], "response");
  EXPECT_EQ(response["status"], "completed");
  EXPECT_EQ(response["created_at"], 5);
  EXPECT_TRUE(response["instructions"].is_null());
  EXPECT_EQ(response["output"][0]["content"][0]["text"], "Hello");
  EXPECT_EQ(response["output"][0]["status"], "completed");
  EXPECT_EQ(response["usage"], Json::parse(R"({"input_tokens": 3, "input_tokens_details": {"cached_tokens": 1},
      "output_tokens": 2, "output_tokens_details": {"reasoning_tokens": 0}, "total_tokens": 5})"));
}

TEST(ResponsesBuilderTest, ReasoningThenCallsEachTheirOwnItem) {
  ResponsesBuilder builder("resp_2", 0, "m", Json::object());
  ChoiceOutput thinking;
  thinking.reasoning = "Let me see.";
  std::vector<Json> events = builder.Add(thinking);
  ChoiceOutput calls;
  calls.tool_calls = {{0, "call_a", "f", "{\"x\""}, {0, "", "", ": 1}"}, {1, "call_b", "g", "{}"}};
  for (Json& event : builder.Add(calls)) events.push_back(std::move(event));
  for (Json& event : builder.Finish("tool_calls", Usage{}, OkStatus())) events.push_back(std::move(event));
  EXPECT_EQ(Types(events), (std::vector<std::string>{
                               "response.output_item.added", "response.content_part.added", "response.reasoning_text.delta",
                               "response.reasoning_text.done", "response.content_part.done", "response.output_item.done",
                               "response.output_item.added", "response.function_call_arguments.delta",
                               "response.function_call_arguments.delta", "response.function_call_arguments.done",
                               "response.output_item.done", "response.output_item.added",
                               "response.function_call_arguments.delta", "response.function_call_arguments.done",
                               "response.output_item.done", "response.completed"}));
  const Json output = builder.Response()["output"];
  ASSERT_EQ(output.size(), 3u);
  EXPECT_EQ(output[0]["type"], "reasoning");
  EXPECT_EQ(output[0]["content"][0]["text"], "Let me see.");
  EXPECT_EQ(output[1], Json::parse(R"({"type": "function_call", "id": ")" + output[1]["id"].get<std::string>() +
                                   R"(", "call_id": "call_a", "name": "f", "arguments": "{\"x\": 1}", "status": "completed"})"));
  EXPECT_EQ(output[2]["call_id"], "call_b");
  EXPECT_EQ(events[9]["arguments"], "{\"x\": 1}");
}

TEST(ResponsesBuilderTest, LengthIsIncompleteAndAnErrorFails) {
  ResponsesBuilder cut("resp_3", 0, "m", Json::object());
  cut.Add(Text("abc"));
  std::vector<Json> events = cut.Finish("length", Usage{}, OkStatus());
  EXPECT_EQ(events.back()["type"], "response.incomplete");
  EXPECT_EQ(cut.Response()["status"], "incomplete");
  EXPECT_EQ(cut.Response()["incomplete_details"]["reason"], "max_output_tokens");
  ResponsesBuilder failed("resp_4", 0, "m", Json::object());
  events = failed.Finish(std::nullopt, Usage{}, InternalError("engine stopped"));
  EXPECT_EQ(events.back()["type"], "response.failed");
  EXPECT_EQ(failed.Response()["error"]["message"], "engine stopped");
  EXPECT_EQ(failed.Response()["output"], Json::array());
}

}  // namespace
}  // namespace surge::api
