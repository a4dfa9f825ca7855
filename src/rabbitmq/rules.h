// The RabbitMQ sink's pure rules, unit-tested without a broker (tests/rabbitmq/): the destination templates, the
// checks made before publishing, what the broker's close codes and the client's status codes mean for the delivery
// core (exhaustive switches), and the publisher-confirm bookkeeping that matches a basic.return to the confirm that
// follows it. No I/O, no librabbitmq.
#pragma once

#include <cstddef>
#include <cstdint>
#include <map>
#include <string>
#include <string_view>
#include <vector>

#include "absl/status/status.h"
#include "common/record.h"
#include "sinks/sink.h"

namespace outbox::rabbitmq {

// The header that carries the record's key (AMQP messages have no key of their own); absent for a null key.
inline constexpr std::string_view kKeyHeader = "key";
// AMQP short strings (exchange names, routing keys, header names) are at most 255 bytes.
inline constexpr size_t kMaxShortString = 255;
// RabbitMQ's max_message_size default (3.8 and later): a larger body closes the channel.
inline constexpr size_t kDefaultMaxMessageBytes = 128u << 20;

// `tmpl` with every ${routedByValue} replaced by `route_value` and every ${topic} by `topic`.
std::string ExpandTemplate(std::string_view tmpl, std::string_view topic, std::string_view route_value);

// A record's exchange and routing key, checked as AMQP carries them; an error names what is wrong.
absl::Status CheckDestination(std::string_view exchange, std::string_view routing_key);
// Header names AMQP can carry (1 to 255 bytes); the key header is the sink's own.
absl::Status CheckHeaders(const Record& record);

// What a channel.close or connection.close from the broker means. (AMQP reply codes: 320 connection-forced, 403
// access-refused, 404 not-found, 406 precondition-failed, 530 not-allowed, 541 internal-error, ...)
enum class CloseAction {
  kReconnect,         // transient (the broker shuts down, an internal error): rewind, reconnect
  kRecheckExchanges,  // 404 on the publishing channel: an exchange vanished; rewind, check the exchanges again (a
                      // missing one is then refused per event before publishing)
  kFatal,             // credentials, permissions, a vhost refused, a protocol fault: recreate, then stop naming it
};
CloseAction ClassifyChannelClose(int reply_code);
CloseAction ClassifyConnectionClose(int reply_code);
// The client's own status codes (amqp_status_enum) on connect or I/O: kRetriable or kFatal.
sinks::Outcome ClassifyClientStatus(int amqp_status);

// What a TLS handshake that failed as AMQP_STATUS_SSL_ERROR or AMQP_STATUS_SSL_CONNECTION_FAILED means, decided on
// OpenSSL's error code (ERR_GET_LIB and ERR_GET_REASON of the connecting thread's last error), never on its text.
// (With TLS 1.3 a broker's refusal of the client's certificate arrives after the client's side of the handshake,
// as an alert at the first read: the login, which the client reports as a plain SSL error.)
enum class TlsFailure {
  kTransient,          // anything else, e.g. the connection broke during the handshake: retry
  kServerCertificate,  // the broker's certificate does not verify (rabbitmq.tls.ca): fatal
  kClientCertificate,  // the broker refused the client's certificate or wanted one (rabbitmq.tls.cert): fatal
  kProtocol,           // no TLS there (a plain AMQP port) or no common TLS version (rabbitmq.url): fatal
};
TlsFailure ClassifyTlsError(int openssl_lib, int openssl_reason);

// One record's settlement as the confirms decide it.
struct Settled {
  uint64_t seq = 0;
  sinks::Outcome outcome = sinks::Outcome::kAcked;
  sinks::Reason reason = sinks::Reason::kNone;
  std::string error;
  std::string error_name;
};

// Publisher confirms on one channel: each publish gets the next delivery tag; a basic.ack or basic.nack settles
// one tag or (multiple) every tag up to it; a basic.return (mandatory, unroutable) comes before the confirm of
// the message it returns, so it is matched, by exchange, routing key and message id, to one of the tags that
// confirm covers: that record is rejected for good (delivery.on_error), the others are acked. A nack rewinds.
class ConfirmTracker {
 public:
  void Published(uint64_t tag, uint64_t seq, std::string exchange, std::string routing_key, std::string message_id);
  void Returned(int reply_code, std::string reply_text, std::string exchange, std::string routing_key,
                std::string message_id);
  std::vector<Settled> Confirmed(uint64_t tag, bool multiple, bool ack);
  // Every unconfirmed publish, as retriable (the channel or the connection is gone); forgets pending returns.
  std::vector<Settled> FailAll(std::string_view error);
  size_t size() const { return unconfirmed_.size(); }

 private:
  struct Entry {
    uint64_t seq = 0;
    std::string exchange, routing_key, message_id;
  };
  struct Return {
    int reply_code = 0;
    std::string reply_text, exchange, routing_key, message_id;
  };
  std::map<uint64_t, Entry> unconfirmed_;  // by delivery tag
  std::vector<Return> returns_;            // since the last confirm
};

}  // namespace outbox::rabbitmq
