// RelationCache: the Relation messages seen on the current replication connection, keyed by OID. Every Relation
// message overwrites its entry (they come after every reconnect and after any relcache invalidation). Owned by
// the loop thread.
#pragma once

#include <cstdint>

#include "absl/container/flat_hash_map.h"
#include "pg/pgoutput.h"

namespace outbox::pg {

class RelationCache {
 public:
  void Put(Relation relation) {
    const uint32_t oid = relation.oid;
    relations_.insert_or_assign(oid, std::move(relation));
  }
  // nullptr when no Relation for that OID arrived yet.
  const Relation* Find(uint32_t oid) const {
    auto it = relations_.find(oid);
    return it == relations_.end() ? nullptr : &it->second;
  }
  void Clear() { relations_.clear(); }
  size_t size() const { return relations_.size(); }

 private:
  absl::flat_hash_map<uint32_t, Relation> relations_;
};

}  // namespace outbox::pg
