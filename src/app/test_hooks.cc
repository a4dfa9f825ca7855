// Fault injection for the end-to-end tests.
#include "app/test_hooks.h"

#include <signal.h>

#include <atomic>
#include <cstdlib>
#include <string_view>

#include "kafka/sink.h"
#include "kafka/test_hooks.h"

namespace outbox::app::test_hooks {
namespace {

// Bumped by the signal handler; each pipeline acts once per bump.
std::atomic<unsigned> g_fatal_requests{0};
void OnSigusr2(int) { g_fatal_requests.fetch_add(1); }

bool HooksOn() {
  const char* hooks = std::getenv("OUTBOX_RELAY_TEST_HOOKS");
  return hooks != nullptr && std::string_view(hooks) == "1";
}

}  // namespace

void InstallFromEnvironment() {
  if (!HooksOn()) return;
  struct sigaction fatal {};
  fatal.sa_handler = OnSigusr2;
  sigemptyset(&fatal.sa_mask);
  sigaction(SIGUSR2, &fatal, nullptr);
}

void Apply(sinks::Sink& sink) {
  thread_local unsigned seen = 0;
  const unsigned requests = g_fatal_requests.load();
  if (requests == seen) return;
  seen = requests;
  if (auto* kafka_sink = dynamic_cast<kafka::KafkaSink*>(&sink)) kafka::InjectFatalError(*kafka_sink);
}

std::optional<std::string> DefaultLingerMs() {
  const char* linger = std::getenv("OUTBOX_RELAY_TEST_LINGER_MS");
  if (!HooksOn() || linger == nullptr) return std::nullopt;
  return std::string(linger);
}

}  // namespace outbox::app::test_hooks
