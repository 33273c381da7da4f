#include "queue/amqp_connection.h"

#include <amqp_tcp_socket.h>

#include <sys/time.h>

namespace surge::queue {
namespace {

constexpr amqp_channel_t kChannel = 1;
constexpr int kHeartbeatS = 10;

std::string ToString(amqp_bytes_t bytes) { return std::string(static_cast<const char*>(bytes.bytes), bytes.len); }

amqp_bytes_t Bytes(std::string_view text) { return {text.size(), const_cast<char*>(text.data())}; }

// The string header `key` ("" when absent); a header of another type sets `error`.
std::string HeaderString(const amqp_basic_properties_t& p, std::string_view key, std::string* error) {
  if ((p._flags & AMQP_BASIC_HEADERS_FLAG) == 0) return "";
  for (int i = 0; i < p.headers.num_entries; ++i) {
    const amqp_table_entry_t& e = p.headers.entries[i];
    if (ToString(e.key) != key) continue;
    if (e.value.kind == AMQP_FIELD_KIND_UTF8 || e.value.kind == AMQP_FIELD_KIND_BYTES) return ToString(e.value.value.bytes);
    *error = "the " + std::string(key) + " header must be a string";
  }
  return "";
}

QueueMessage ToMessage(const amqp_envelope_t& envelope) {
  const amqp_basic_properties_t& p = envelope.message.properties;
  QueueMessage m;
  if (p._flags & AMQP_BASIC_MESSAGE_ID_FLAG) m.message_id = ToString(p.message_id);
  if (p._flags & AMQP_BASIC_CORRELATION_ID_FLAG) m.correlation_id = ToString(p.correlation_id);
  if (p._flags & AMQP_BASIC_REPLY_TO_FLAG) m.reply_to = ToString(p.reply_to);
  m.endpoint = HeaderString(p, kEndpointHeader, &m.header_error);
  m.body = ToString(envelope.message.body);
  return m;
}

}  // namespace

StatusOr<std::unique_ptr<AmqpConnection>> AmqpConnection::Open(const AmqpUrl& url) {
  amqp_connection_state_t state = amqp_new_connection();
  std::unique_ptr<AmqpConnection> connection(new AmqpConnection(state));
  amqp_socket_t* socket = amqp_tcp_socket_new(state);
  if (socket == nullptr) return InternalError("amqp: cannot make a socket");
  struct timeval timeout{5, 0};
  if (int rc = amqp_socket_open_noblock(socket, url.host.c_str(), url.port, &timeout); rc != AMQP_STATUS_OK) {
    return UnavailableError("amqp: cannot connect to " + url.host + ":" + std::to_string(url.port) + ": " +
                            amqp_error_string2(rc));
  }
  RETURN_IF_ERROR(connection->Check(amqp_login(state, url.vhost.c_str(), 0, 131072, kHeartbeatS, AMQP_SASL_METHOD_PLAIN,
                                               url.user.c_str(), url.password.c_str()),
                                    "login"));
  amqp_channel_open(state, kChannel);
  RETURN_IF_ERROR(connection->Check(amqp_get_rpc_reply(state), "channel.open"));
  amqp_confirm_select(state, kChannel);
  RETURN_IF_ERROR(connection->Check(amqp_get_rpc_reply(state), "confirm.select"));
  return connection;
}

AmqpConnection::~AmqpConnection() {
  // Best effort: a dead connection answers with an error, which changes nothing here.
  amqp_connection_close(state_, AMQP_REPLY_SUCCESS);
  amqp_destroy_connection(state_);
}

Status AmqpConnection::Check(amqp_rpc_reply_t reply, std::string_view what) {
  switch (reply.reply_type) {
    case AMQP_RESPONSE_NORMAL: return OkStatus();
    case AMQP_RESPONSE_NONE: return UnavailableError("amqp " + std::string(what) + ": no reply");
    case AMQP_RESPONSE_LIBRARY_EXCEPTION:
      return UnavailableError("amqp " + std::string(what) + ": " + amqp_error_string2(reply.library_error));
    case AMQP_RESPONSE_SERVER_EXCEPTION: break;
  }
  std::string text = "amqp " + std::string(what) + ": the broker closed the ";
  if (reply.reply.id == AMQP_CONNECTION_CLOSE_METHOD) {
    text += "connection: " + ToString(static_cast<amqp_connection_close_t*>(reply.reply.decoded)->reply_text);
  } else if (reply.reply.id == AMQP_CHANNEL_CLOSE_METHOD) {
    text += "channel: " + ToString(static_cast<amqp_channel_close_t*>(reply.reply.decoded)->reply_text);
  }
  return UnavailableError(text);
}

Status AmqpConnection::DeclareQueues(const std::string& name, const std::string& dead_name) {
  amqp_queue_declare(state_, kChannel, Bytes(dead_name), 0, 1, 0, 0, amqp_empty_table);
  RETURN_IF_ERROR(Check(amqp_get_rpc_reply(state_), "queue.declare " + dead_name));
  amqp_table_entry_t entries[2];
  entries[0].key = amqp_cstring_bytes("x-dead-letter-exchange");
  entries[0].value.kind = AMQP_FIELD_KIND_UTF8;
  entries[0].value.value.bytes = amqp_cstring_bytes("");
  entries[1].key = amqp_cstring_bytes("x-dead-letter-routing-key");
  entries[1].value.kind = AMQP_FIELD_KIND_UTF8;
  entries[1].value.value.bytes = Bytes(dead_name);
  const amqp_table_t args{2, entries};
  amqp_queue_declare(state_, kChannel, Bytes(name), 0, 1, 0, 0, args);
  return Check(amqp_get_rpc_reply(state_), "queue.declare " + name);
}

Status AmqpConnection::Consume(const std::string& name, int prefetch) {
  amqp_basic_qos(state_, kChannel, 0, static_cast<uint16_t>(prefetch), 0);
  RETURN_IF_ERROR(Check(amqp_get_rpc_reply(state_), "basic.qos"));
  amqp_basic_consume(state_, kChannel, Bytes(name), amqp_empty_bytes, 0, 0, 0, amqp_empty_table);
  return Check(amqp_get_rpc_reply(state_), "basic.consume " + name);
}

StatusOr<Event> AmqpConnection::Next(int timeout_ms) {
  amqp_maybe_release_buffers(state_);
  amqp_envelope_t envelope;
  struct timeval timeout{timeout_ms / 1000, (timeout_ms % 1000) * 1000};
  const amqp_rpc_reply_t reply = amqp_consume_message(state_, &envelope, &timeout, 0);
  if (reply.reply_type == AMQP_RESPONSE_LIBRARY_EXCEPTION && reply.library_error == AMQP_STATUS_TIMEOUT) return Event{};
  if (reply.reply_type == AMQP_RESPONSE_LIBRARY_EXCEPTION && reply.library_error == AMQP_STATUS_UNEXPECTED_STATE) {
    // A frame that is not a delivery: a publisher confirm, or a close from the broker.
    amqp_frame_t frame;
    if (amqp_simple_wait_frame(state_, &frame) != AMQP_STATUS_OK) return UnavailableError("amqp: connection lost");
    if (frame.frame_type != AMQP_FRAME_METHOD) return Event{};
    switch (frame.payload.method.id) {
      case AMQP_BASIC_ACK_METHOD: {
        const auto* ack = static_cast<const amqp_basic_ack_t*>(frame.payload.method.decoded);
        return Event{.confirmed = Confirmed{ack->delivery_tag, ack->multiple != 0}};
      }
      case AMQP_BASIC_NACK_METHOD: return UnavailableError("amqp: the broker nacked a publish");
      case AMQP_CHANNEL_CLOSE_METHOD:
      case AMQP_CONNECTION_CLOSE_METHOD: return UnavailableError("amqp: the broker closed the connection");
      default: return Event{};
    }
  }
  RETURN_IF_ERROR(Check(reply, "consume"));
  Event event{.received = Received{envelope.delivery_tag, envelope.redelivered != 0, ToMessage(envelope)}};
  amqp_destroy_envelope(&envelope);
  return event;
}

StatusOr<uint64_t> AmqpConnection::Publish(const OutgoingMessage& m) {
  std::vector<amqp_table_entry_t> entries(m.headers.size());
  for (size_t i = 0; i < m.headers.size(); ++i) {
    entries[i].key = Bytes(m.headers[i].first);
    entries[i].value.kind = AMQP_FIELD_KIND_UTF8;
    entries[i].value.value.bytes = Bytes(m.headers[i].second);
  }
  amqp_basic_properties_t props{};
  props._flags = AMQP_BASIC_CONTENT_TYPE_FLAG | AMQP_BASIC_DELIVERY_MODE_FLAG;
  props.content_type = amqp_cstring_bytes("application/json");
  props.delivery_mode = 2;  // persistent: a reply outlives a broker restart
  if (!m.correlation_id.empty()) {
    props._flags |= AMQP_BASIC_CORRELATION_ID_FLAG;
    props.correlation_id = Bytes(m.correlation_id);
  }
  if (!entries.empty()) {
    props._flags |= AMQP_BASIC_HEADERS_FLAG;
    props.headers = {static_cast<int>(entries.size()), entries.data()};
  }
  const int rc = amqp_basic_publish(state_, kChannel, amqp_empty_bytes, Bytes(m.routing_key), 0, 0, &props, Bytes(m.body));
  if (rc != AMQP_STATUS_OK) return UnavailableError(std::string("amqp publish: ") + amqp_error_string2(rc));
  return ++num_published_;
}

Status AmqpConnection::Ack(uint64_t delivery_tag) {
  const int rc = amqp_basic_ack(state_, kChannel, delivery_tag, 0);
  if (rc != AMQP_STATUS_OK) return UnavailableError(std::string("amqp ack: ") + amqp_error_string2(rc));
  return OkStatus();
}

Status AmqpConnection::Reject(uint64_t delivery_tag) {
  const int rc = amqp_basic_reject(state_, kChannel, delivery_tag, /*requeue=*/0);
  if (rc != AMQP_STATUS_OK) return UnavailableError(std::string("amqp reject: ") + amqp_error_string2(rc));
  return OkStatus();
}

}  // namespace surge::queue
