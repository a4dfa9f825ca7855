// The W3C trace context headers of a row's serialized trace context (outbox.fields.tracing_span_context), as
// Debezium's Outbox Event Router writes them with OpenTelemetry on its class path: its tracing reads the column's
// traceparent and tracestate with OpenTelemetry's W3C propagator, starts a span under that parent and writes the
// span's context with the same propagator. The relay makes no span of its own (it has no tracing library and
// nowhere to export one), so its traceparent carries the writer's span id where Debezium's carries its own span's;
// the rest is what the propagator writes, checked against Debezium 3.6.1 with OpenTelemetry 1.68 side by side:
//
//   - traceparent: version 00 whatever version came in; the writer's trace id and span id; of the flags, the sampled
//     bit (the default sampler, parent-based, samples as the parent did) and the random bit (0x02), the others
//     dropped;
//   - tracestate: the list members in their order, joined by ',' without the optional whitespace around them, empty
//     members dropped; none at all when any member is invalid (a key or value the W3C grammar refuses, no '=', a
//     key twice, more than 32 members), as OpenTelemetry drops a tracestate it cannot take whole.
//
// A traceparent the propagator refuses (a length, a separator or a version it does not read, upper-case or all-zero
// ids) gives no headers: Debezium then starts a new trace of its own, with a random trace id that no other system
// knows of, which the relay does not imitate (docs/debezium.md). Pure: no I/O, no state.
#pragma once

#include <string>
#include <string_view>

namespace outbox::outbox {

// Writes the traceparent and tracestate headers' values for a context whose `traceparent` and `tracestate` (empty
// when the context has none) are given, and returns true; returns false, writing nothing, when `traceparent` is no
// valid W3C traceparent. `tracestate_out` is left empty when there is no tracestate to write.
bool PropagateTraceContext(std::string_view traceparent, std::string_view tracestate, std::string* traceparent_out,
                           std::string* tracestate_out);

}  // namespace outbox::outbox
