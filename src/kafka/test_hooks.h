// Fault injection for the end-to-end tests (OUTBOX_RELAY_TEST_HOOKS=1 only; see app/test_hooks.h). Not used by the
// relay otherwise.
#pragma once

namespace outbox::kafka {

class KafkaSink;

// Raises a fatal error inside the sink's idempotent producer, as the broker's out-of-order sequence error would.
void InjectFatalError(KafkaSink& sink);

}  // namespace outbox::kafka
