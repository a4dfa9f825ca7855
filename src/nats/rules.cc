// The NATS sink's pure rules (see rules.h).
#include "nats/rules.h"

#include <nats/status.h>

#include "common/strings.h"

namespace outbox::nats {

using sinks::Outcome;

namespace {

Outcome ClassifyJetStreamError(int js_code) {
  switch (js_code) {
    // The stream cannot take it now: a rewind (and the relay's backoff) retries.
    case JSInsufficientResourcesErr:
    case JSStorageResourcesExceededErr:
    case JSMemoryResourcesExceededErr:
    case JSAccountResourcesExceededErr:
    case JSClusterNotAvailErr:
    case JSClusterNotLeaderErr:
    case JSClusterNoPeersErr:
    case JSStreamStoreFailedErr:
    case JSStreamGeneralError:
    case JSStreamNotFoundErr:  // deleted or not yet recreated: the relay waits for it
      return Outcome::kRetriable;
    // This message, for good.
    case JSStreamMessageExceedsMaximumErr:
    case JSStreamNotMatchErr:
      return Outcome::kRejectedEvent;
    // Nothing the relay does makes the stream take messages.
    case JSNotEnabledErr:
    case JSNotEnabledForAccountErr:
    case JSStreamSealedErr:
      return Outcome::kFatal;
    default:
      return Outcome::kRejectedBatch;
  }
}

}  // namespace

Outcome ClassifyPublishResult(int status, int js_code) {
  switch (static_cast<natsStatus>(status)) {
    case NATS_OK:
      return js_code == 0 ? Outcome::kAcked : ClassifyJetStreamError(js_code);
    case NATS_ERR:  // the server's JetStream error (js_code), or the client's generic one
      return js_code == 0 ? Outcome::kRejectedBatch : ClassifyJetStreamError(js_code);
    // The connection, or no answer in time (the message may or may not be stored: the resend is deduplicated).
    case NATS_IO_ERROR:
    case NATS_CONNECTION_CLOSED:
    case NATS_NO_SERVER:
    case NATS_STALE_CONNECTION:
    case NATS_CONNECTION_DISCONNECTED:
    case NATS_TIMEOUT:
    case NATS_NOT_YET_CONNECTED:
    case NATS_DRAINING:
    case NATS_NO_RESPONDERS:  // no stream answered: unavailable (the subject is checked before publishing)
    case NATS_SLOW_CONSUMER:
    case NATS_NO_MEMORY:
    case NATS_MISSED_HEARTBEAT:
      return Outcome::kRetriable;
    // Credentials, permissions, TLS: fatal, named, never retried silently.
    case NATS_CONNECTION_AUTH_FAILED:
    case NATS_NOT_PERMITTED:
    case NATS_SECURE_CONNECTION_WANTED:
    case NATS_SECURE_CONNECTION_REQUIRED:
    case NATS_SSL_ERROR:
    case NATS_NO_SERVER_SUPPORT:
    case NATS_FAILED_TO_INITIALIZE:
    case NATS_NOT_INITIALIZED:
      return Outcome::kFatal;
    // This message, for good.
    case NATS_MAX_PAYLOAD:
    case NATS_INVALID_SUBJECT:
      return Outcome::kRejectedEvent;
    // The client's own misuse or a protocol fault: halt rather than loop.
    case NATS_PROTOCOL_ERROR:
    case NATS_LINE_TOO_LONG:
    case NATS_NOT_FOUND:
    case NATS_ADDRESS_MISSING:
    case NATS_INVALID_ARG:
    case NATS_INVALID_SUBSCRIPTION:
    case NATS_INVALID_TIMEOUT:
    case NATS_ILLEGAL_STATE:
    case NATS_MAX_DELIVERED_MSGS:
    case NATS_INSUFFICIENT_BUFFER:
    case NATS_SYS_ERROR:
    case NATS_INVALID_QUEUE_NAME:
    case NATS_MISMATCH:
      return Outcome::kRejectedBatch;
  }
  return Outcome::kRejectedBatch;
}

sinks::Reason RejectionReason(int status, int js_code) {
  if (status == NATS_MAX_PAYLOAD || js_code == JSStreamMessageExceedsMaximumErr) return sinks::Reason::kTooLarge;
  if (status == NATS_INVALID_SUBJECT || js_code == JSStreamNotMatchErr) return sinks::Reason::kTopic;
  return sinks::Reason::kNone;
}

bool SubjectMatches(std::string_view pattern, std::string_view subject) {
  while (true) {
    const size_t pdot = pattern.find('.');
    const size_t sdot = subject.find('.');
    const std::string_view ptoken = pattern.substr(0, pdot);
    const std::string_view stoken = subject.substr(0, sdot);
    if (ptoken == ">") return !subject.empty();
    if (subject.empty()) return false;
    if (ptoken != "*" && ptoken != stoken) return false;
    if (pdot == std::string_view::npos || sdot == std::string_view::npos) {
      return pdot == std::string_view::npos && sdot == std::string_view::npos;
    }
    pattern.remove_prefix(pdot + 1);
    subject.remove_prefix(sdot + 1);
  }
}

bool IsPublishableSubject(std::string_view subject) {
  if (subject.empty() || subject.front() == '.' || subject.back() == '.') return false;
  char previous = 0;
  for (char c : subject) {
    if (c == ' ' || c == '\t' || c == '\r' || c == '\n' || c == '\0' || c == '*' || c == '>') return false;
    if (c == '.' && previous == '.') return false;
    previous = c;
  }
  return true;
}

size_t MessageBytes(const Record& record) {
  constexpr size_t kVersionLine = sizeof("NATS/1.0\r\n") - 1;
  constexpr size_t kFraming = 4;  // ": " and "\r\n" of one header line
  size_t bytes = kVersionLine + 2 /* the blank line */;
  bytes += kMsgIdHeader.size() + kFraming + record.event_id.size();
  if (record.key) bytes += kKeyHeader.size() + kFraming + record.key->size();
  for (const Header& h : record.headers) bytes += h.name.size() + kFraming + (h.value ? h.value->size() : 0);
  return bytes + (record.value ? record.value->size() : 0);
}

absl::Status CheckHeaders(const Record& record) {
  const auto bad_value = [](std::string_view v) { return v.find_first_of(std::string_view("\r\n\0", 3)) != v.npos; };
  if (record.key && bad_value(*record.key)) {
    return absl::InvalidArgumentError("the key contains a line break or NUL, which a NATS header cannot carry");
  }
  for (const Header& h : record.headers) {
    if (h.name.empty() || h.name.find_first_of(std::string_view(": \t\r\n\0", 6)) != h.name.npos) {
      return absl::InvalidArgumentError(Cat("header name \"", h.name, "\" is not a legal NATS header name"));
    }
    if (h.value && bad_value(*h.value)) {
      return absl::InvalidArgumentError(
          Cat("header ", h.name, " contains a line break or NUL, which a NATS header cannot carry"));
    }
  }
  return absl::OkStatus();
}

}  // namespace outbox::nats
