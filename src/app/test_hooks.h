// Fault injection for the end-to-end tests, off unless OUTBOX_RELAY_TEST_HOOKS=1 is in the environment: SIGUSR2
// raises a fatal error in the producer of every running pipeline (as the broker's out-of-order sequence error would),
// and OUTBOX_RELAY_TEST_LINGER_MS replaces the relay's default linger.ms (a user's linger.ms still wins).
#pragma once

#include <optional>
#include <string>

namespace outbox::sinks {
class Sink;
}

namespace outbox::app::test_hooks {

// Installs the signal handler when the environment asks for it (main, before the pipelines start).
void InstallFromEnvironment();
// Each loop round: does what a signal asked, on this pipeline's sink (a Kafka one; others have no hook).
void Apply(sinks::Sink& sink);
// OUTBOX_RELAY_TEST_LINGER_MS, when the hooks are on: the linger.ms to use where the user set none.
std::optional<std::string> DefaultLingerMs();

}  // namespace outbox::app::test_hooks
