// KeyGate: the per-key in-flight rule shared by the sinks whose broker does not refuse an out-of-sequence write
// (NATS JetStream, RabbitMQ). At most one unacknowledged record per (topic, key) in flight: a second record of a key
// whose first is not acknowledged waits (the sink answers kFull, the core holds it and retries from its loop). Then a
// failed or nacked publish can never be overtaken by a later record of its key that the broker acked. Null keys are
// not gated. Loop thread only; no I/O.
#pragma once

#include <optional>
#include <string>
#include <string_view>

#include "absl/container/flat_hash_set.h"

namespace outbox::sinks {

class KeyGate {
 public:
  // True (and the key taken) when no record of this key is in flight; `token` is what Release takes.
  bool TryAcquire(std::string_view topic, const std::optional<std::string_view>& key, std::string* token) {
    token->clear();
    if (!key) return true;
    token->reserve(topic.size() + 1 + key->size());
    token->append(topic).push_back('\0');
    token->append(*key);
    if (keys_.insert(*token).second) return true;
    token->clear();
    return false;
  }
  void Release(const std::string& token) {
    if (!token.empty()) keys_.erase(token);
  }
  void Clear() { keys_.clear(); }
  size_t size() const { return keys_.size(); }

 private:
  absl::flat_hash_set<std::string> keys_;
};

}  // namespace outbox::sinks
