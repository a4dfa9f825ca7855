// The RabbitMQ sink's pure rules (see rules.h).
#include "rabbitmq/rules.h"

#include <amqp.h>
#include <openssl/err.h>
#include <openssl/sslerr.h>

#include <utility>

#include "common/strings.h"

namespace outbox::rabbitmq {

using sinks::Outcome;

std::string ExpandTemplate(std::string_view tmpl, std::string_view topic, std::string_view route_value) {
  constexpr std::string_view kRouted = "${routedByValue}";
  constexpr std::string_view kTopic = "${topic}";
  std::string out;
  out.reserve(tmpl.size() + topic.size());
  while (!tmpl.empty()) {
    if (tmpl.starts_with(kRouted)) {
      out.append(route_value);
      tmpl.remove_prefix(kRouted.size());
    } else if (tmpl.starts_with(kTopic)) {
      out.append(topic);
      tmpl.remove_prefix(kTopic.size());
    } else {
      out.push_back(tmpl.front());
      tmpl.remove_prefix(1);
    }
  }
  return out;
}

absl::Status CheckDestination(std::string_view exchange, std::string_view routing_key) {
  if (exchange.size() > kMaxShortString) {
    return absl::InvalidArgumentError(
        Cat("exchange name of ", exchange.size(), " bytes is longer than AMQP allows (255): \"", exchange, "\""));
  }
  for (char c : exchange) {
    // RabbitMQ's own rule for exchange names: letters, digits, hyphen, underscore, period, colon.
    const bool ok = (c >= 'a' && c <= 'z') || (c >= 'A' && c <= 'Z') || (c >= '0' && c <= '9') || c == '-' ||
                    c == '_' || c == '.' || c == ':';
    if (!ok) return absl::InvalidArgumentError(Cat("\"", exchange, "\" is not a legal RabbitMQ exchange name"));
  }
  if (routing_key.size() > kMaxShortString) {
    return absl::InvalidArgumentError(
        Cat("routing key of ", routing_key.size(), " bytes is longer than AMQP allows (255)"));
  }
  return absl::OkStatus();
}

absl::Status CheckHeaders(const Record& record) {
  for (const Header& h : record.headers) {
    if (h.name.empty() || h.name.size() > kMaxShortString) {
      return absl::InvalidArgumentError(
          Cat("header name \"", h.name.substr(0, 64), "\" is not 1 to 255 bytes, as an AMQP header name must be"));
    }
  }
  return absl::OkStatus();
}

CloseAction ClassifyChannelClose(int reply_code) {
  switch (reply_code) {
    case AMQP_NOT_FOUND:  // 404: no exchange
      return CloseAction::kRecheckExchanges;
    case AMQP_CONNECTION_FORCED:  // 320
    case AMQP_INTERNAL_ERROR:     // 541
    case AMQP_RESOURCE_ERROR:     // 506
    case AMQP_RESOURCE_LOCKED:    // 405
      return CloseAction::kReconnect;
    default:  // 403 access refused, 406 precondition failed, 530 not allowed, protocol faults
      return CloseAction::kFatal;
  }
}

CloseAction ClassifyConnectionClose(int reply_code) {
  switch (reply_code) {
    case AMQP_CONNECTION_FORCED:  // 320: the broker shuts down or an operator closed it
    case AMQP_INTERNAL_ERROR:     // 541
    case AMQP_RESOURCE_ERROR:     // 506
      return CloseAction::kReconnect;
    default:  // 403 (credentials), 530 (vhost), 501-505 (frame and syntax errors), 540 (not implemented)
      return CloseAction::kFatal;
  }
}

Outcome ClassifyClientStatus(int amqp_status) {
  switch (static_cast<amqp_status_enum>(amqp_status)) {
    case AMQP_STATUS_OK:
      return Outcome::kAcked;
    // The network, the broker going away, no answer in time: reconnect and rewind.
    case AMQP_STATUS_CONNECTION_CLOSED:
    case AMQP_STATUS_SOCKET_ERROR:
    case AMQP_STATUS_TIMEOUT:
    case AMQP_STATUS_HEARTBEAT_TIMEOUT:
    case AMQP_STATUS_SOCKET_CLOSED:
    case AMQP_STATUS_TCP_ERROR:
    case AMQP_STATUS_HOSTNAME_RESOLUTION_FAILED:
    case AMQP_STATUS_NO_MEMORY:
    case AMQP_STATUS_TIMER_FAILURE:
    case AMQP_STATUS_SSL_ERROR:
    case AMQP_STATUS_SSL_CONNECTION_FAILED:
    case AMQP_STATUS_UNEXPECTED_STATE:
    case AMQP_STATUS_BAD_AMQP_DATA:
    case AMQP_STATUS_UNKNOWN_CLASS:
    case AMQP_STATUS_UNKNOWN_METHOD:
    case AMQP_STATUS_WRONG_METHOD:
      return Outcome::kRetriable;
    // Nothing a retry cures: the URL, the TLS setup, what the broker supports, the client's own misuse.
    case AMQP_STATUS_BAD_URL:
    case AMQP_STATUS_INCOMPATIBLE_AMQP_VERSION:
    case AMQP_STATUS_INVALID_PARAMETER:
    case AMQP_STATUS_TABLE_TOO_BIG:
    case AMQP_STATUS_SOCKET_INUSE:
    case AMQP_STATUS_BROKER_UNSUPPORTED_SASL_METHOD:
    case AMQP_STATUS_UNSUPPORTED:
    case AMQP_STATUS_TCP_SOCKETLIB_INIT_ERROR:
    case AMQP_STATUS_SSL_HOSTNAME_VERIFY_FAILED:
    case AMQP_STATUS_SSL_PEER_VERIFY_FAILED:
    case AMQP_STATUS_SSL_SET_ENGINE_FAILED:
    case _AMQP_STATUS_NEXT_VALUE:
    case _AMQP_STATUS_TCP_NEXT_VALUE:
    case _AMQP_STATUS_SSL_NEXT_VALUE:
      return Outcome::kFatal;
  }
  return Outcome::kFatal;
}

TlsFailure ClassifyTlsError(int openssl_lib, int openssl_reason) {
  if (openssl_lib != ERR_LIB_SSL) return TlsFailure::kTransient;
  switch (openssl_reason) {
    case SSL_R_CERTIFICATE_VERIFY_FAILED:
      return TlsFailure::kServerCertificate;
    // The broker's alerts about the client's certificate.
    case SSL_R_TLSV13_ALERT_CERTIFICATE_REQUIRED:
    case SSL_R_SSLV3_ALERT_BAD_CERTIFICATE:
    case SSL_R_SSLV3_ALERT_CERTIFICATE_UNKNOWN:
    case SSL_R_SSLV3_ALERT_UNSUPPORTED_CERTIFICATE:
    case SSL_R_SSLV3_ALERT_CERTIFICATE_REVOKED:
    case SSL_R_SSLV3_ALERT_CERTIFICATE_EXPIRED:
    case SSL_R_TLSV1_ALERT_UNKNOWN_CA:
    case SSL_R_TLSV1_ALERT_ACCESS_DENIED:
      return TlsFailure::kClientCertificate;
    case SSL_R_WRONG_VERSION_NUMBER:
    case SSL_R_UNSUPPORTED_PROTOCOL:
    case SSL_R_NO_PROTOCOLS_AVAILABLE:
    case SSL_R_TLSV1_ALERT_PROTOCOL_VERSION:
      return TlsFailure::kProtocol;
    default:
      return TlsFailure::kTransient;
  }
}

void ConfirmTracker::Published(uint64_t tag, uint64_t seq, std::string exchange, std::string routing_key,
                               std::string message_id) {
  unconfirmed_[tag] = Entry{seq, std::move(exchange), std::move(routing_key), std::move(message_id)};
}

void ConfirmTracker::Returned(int reply_code, std::string reply_text, std::string exchange, std::string routing_key,
                              std::string message_id) {
  returns_.push_back(
      Return{reply_code, std::move(reply_text), std::move(exchange), std::move(routing_key), std::move(message_id)});
}

std::vector<Settled> ConfirmTracker::Confirmed(uint64_t tag, bool multiple, bool ack) {
  std::vector<Settled> out;
  auto first = multiple ? unconfirmed_.begin() : unconfirmed_.find(tag);
  auto last = unconfirmed_.upper_bound(tag);
  if (!multiple && first == unconfirmed_.end()) {
    returns_.clear();  // a confirm of a tag already settled (purged): nothing to match
    return out;
  }
  if (!multiple) last = std::next(first);
  for (auto it = first; it != last; ++it) {
    Settled s;
    s.seq = it->second.seq;
    if (!ack) {
      s.outcome = Outcome::kRetriable;
      s.error = "the broker nacked the publish (basic.nack)";
      s.error_name = "NACK";
    }
    out.push_back(std::move(s));
  }
  // Each return settles the first covered record with its exchange, routing key and message id.
  std::vector<bool> returned(out.size(), false);
  for (Return& r : returns_) {
    size_t i = 0;
    bool matched = false;
    for (auto it = first; it != last; ++it, ++i) {
      const Entry& e = it->second;
      if (returned[i] || e.exchange != r.exchange || e.routing_key != r.routing_key || e.message_id != r.message_id) {
        continue;
      }
      returned[i] = true;
      matched = true;
      Settled& s = out[i];
      s.outcome = Outcome::kRejectedEvent;
      s.reason = r.reply_code == AMQP_NO_ROUTE || r.reply_code == AMQP_NO_CONSUMERS ? sinks::Reason::kTopic
                                                                                    : sinks::Reason::kNone;
      s.error = Cat("the broker returned the message (", r.reply_code, " ", r.reply_text, "): no queue is bound to ",
                    "exchange \"", r.exchange, "\" for routing key \"", r.routing_key, "\"");
      s.error_name = r.reply_text;
      break;
    }
    if (!matched && !out.empty()) {
      // A return the confirm does not cover cannot be told apart: halt rather than ack a record maybe unroutable.
      Settled& s = out.back();
      s.outcome = Outcome::kRejectedBatch;
      s.error = Cat("a basic.return (", r.reply_code, " ", r.reply_text, ", exchange \"", r.exchange,
                    "\") matched no publish of the confirm that followed it");
      s.error_name = r.reply_text;
    }
  }
  returns_.clear();
  unconfirmed_.erase(first, last);
  return out;
}

std::vector<Settled> ConfirmTracker::FailAll(std::string_view error) {
  std::vector<Settled> out;
  out.reserve(unconfirmed_.size());
  for (const auto& [tag, e] : unconfirmed_) {
    Settled s;
    s.seq = e.seq;
    s.outcome = Outcome::kRetriable;
    s.error = std::string(error);
    s.error_name = "CONNECTION";
    out.push_back(std::move(s));
  }
  unconfirmed_.clear();
  returns_.clear();
  return out;
}

}  // namespace outbox::rabbitmq
