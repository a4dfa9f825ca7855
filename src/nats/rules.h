// The NATS sink's pure rules, unit-tested without a server (tests/nats/): what a publish's result means for the
// delivery core (one exhaustive switch over the client's status codes), which subjects a stream binds, how large a
// message is as the server counts it, and the per-key in-flight rule that keeps a key's records in commit order.
#pragma once

#include <cstddef>
#include <cstdint>
#include <optional>
#include <string>
#include <string_view>
#include <vector>

#include "absl/status/status.h"
#include "common/record.h"
#include "sinks/key_gate.h"
#include "sinks/sink.h"

namespace outbox::nats {

// The header that carries the record's key (NATS messages have no key of their own); absent for a null key.
inline constexpr std::string_view kKeyHeader = "key";
// JetStream's dedupe header: the event id, so that a resend inside the stream's duplicate_window is dropped.
inline constexpr std::string_view kMsgIdHeader = "Nats-Msg-Id";

// What a publish's completion means: `status` is the client's natsStatus, `js_code` its jsErrCode (0 when none).
// Connection trouble, timeouts, no responders (the stream is unavailable) and the server out of resources are
// retriable (the core rewinds); a permission or TLS problem is fatal; a subject or size refused for good is this
// event's error; anything not named halts rather than loops (kRejectedBatch).
sinks::Outcome ClassifyPublishResult(int status, int js_code);
// The reason that goes with a rejected outcome (kTooLarge, kTopic or kNone).
sinks::Reason RejectionReason(int status, int js_code);

// NATS subject matching: `*` matches one token, `>` one or more trailing tokens.
bool SubjectMatches(std::string_view pattern, std::string_view subject);
// A subject the relay may publish to: non-empty tokens separated by '.', no whitespace, no wildcards.
bool IsPublishableSubject(std::string_view subject);

// The message's size as the server compares it with max_payload and a stream's max_msg_size: the header block
// (NATS/1.0 line, every header including Nats-Msg-Id and the key header, the blank line) plus the payload.
size_t MessageBytes(const Record& record);
// Header names and values the protocol can carry (no CR, LF or NUL; names without ':' or spaces).
absl::Status CheckHeaders(const Record& record);

// At most one unacknowledged record per (subject, key) in flight (sinks/key_gate.h).
using KeyGate = sinks::KeyGate;

}  // namespace outbox::nats
