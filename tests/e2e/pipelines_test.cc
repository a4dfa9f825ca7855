// Several pipelines in one process (SPEC.md §3 `pipelines:`): two databases, each with its own outbox, slot,
// checkpoint and topics, relayed by one outbox-relay. A pipeline whose replication connection is killed
// reconnects alone; a pipeline that halts on a poison event stops alone; metrics and readiness are per pipeline.
#include <gmock/gmock.h>
#include <gtest/gtest.h>

#include <fstream>
#include <regex>
#include <set>
#include <string>

#include "e2e/fault_util.h"
#include "e2e/harness.h"
#include "support/util.h"

namespace outbox::testing {
namespace {

using ::testing::HasSubstr;
using ::testing::Not;
using namespace std::chrono_literals;

class PipelinesTest : public SharedServicesTest {
 protected:
  void SetUp() override {
    SharedServicesTest::SetUp();
    alpha_ = std::make_unique<RelayHarness>(pg_, broker_->bootstrap());
    beta_ = std::make_unique<RelayHarness>(pg_, broker_->bootstrap());
    alpha_->Init();
    beta_->Init();
    config_path_ = alpha_->dir() + "/pipelines.yaml";
    std::ofstream out(config_path_);
    // Shared keys at the top level; each pipeline names its own source and routing.
    out << "source:\n"
        << "  status_interval_ms: 200\n"
        << "kafka:\n"
        << "  bootstrap.servers: \"" << broker_->bootstrap() << "\"\n"
        << "http:\n"
        << "  listen: \"127.0.0.1:0\"\n"
        << "pipelines:\n";
    for (const auto& [name, h] : {std::pair{"alpha", alpha_.get()}, std::pair{"beta", beta_.get()}}) {
      out << "  " << name << ":\n"
          << "    source:\n"
          << "      conninfo: \"" << pg_->conninfo(h->db()) << "\"\n"
          << "      slot: " << h->slot() << "\n"
          << "      publication: " << h->publication() << "\n"
          << "      checkpoint_topic: " << h->checkpoint_topic() << "\n"
          << "    outbox:\n"
          << "      route.topic: \"" << h->topic_prefix() << ".${routedByValue}\"\n";
    }
  }

  std::unique_ptr<ChildProcess> StartRelay() {
    ProcessOptions o;
    o.argv = {RelayBin(), "run", "-c", config_path_};
    o.output_path = alpha_->dir() + "/pipelines-relay.log";
    auto child = ChildProcess::Spawn(o);
    EXPECT_TRUE(child.ok()) << child.status();
    if (!child.ok()) return nullptr;
    ChildProcess* c = child->get();
    EXPECT_TRUE(WaitFor([&] { return (alpha_->SlotActive() && beta_->SlotActive()) || !c->Running(); }, 60s,
                        "both pipelines hold their slots"));
    EXPECT_TRUE(c->Running()) << c->Output();
    http_port_ = RelayHttpPort(*c);
    return std::move(*child);
  }

  // Inserts `n` events of type `type` in `h`'s database, one transaction each; returns their ids.
  static std::set<std::string> Insert(const RelayHarness& h, const std::string& type, int n) {
    std::set<std::string> ids;
    for (int i = 0; i < n; ++i) ids.insert(h.InsertEvent(type, "k" + std::to_string(i % 7), R"({"n":1})"));
    return ids;
  }

  // The value of a labelled sample in /metrics, -1 when absent.
  double Metric(const std::string& name, const std::string& pipeline) {
    return Scrape(http_port_, name + "{pipeline=\"" + pipeline + "\"}").value_or(-1);
  }

  // Every id of `ids` is in `topic`.
  void ExpectDelivered(const std::string& topic, const std::set<std::string>& ids) {
    std::vector<KafkaRecord> records = ReadUntilAll(*reader_, topic, ids, 60s);
    std::set<std::string> seen;
    for (const KafkaRecord& r : records) seen.insert(HeaderValue(r, "id"));
    size_t missing = 0;
    for (const std::string& id : ids) missing += seen.count(id) ? 0 : 1;
    EXPECT_EQ(missing, 0u) << "of " << ids.size() << " events in " << topic;
  }

  std::unique_ptr<RelayHarness> alpha_, beta_;
  int http_port_ = 0;
  std::string config_path_;
};

TEST_F(PipelinesTest, KillingOnePipelinesConnectionLeavesTheOtherStreaming) {
  auto relay = StartRelay();
  ASSERT_TRUE(relay);
  ASSERT_TRUE(WaitFor([&] { return HttpGet(http_port_, "/readyz").first == 200; }, 60s, "both pipelines ready"));

  std::set<std::string> alpha_ids = Insert(*alpha_, "order_created", 50);
  std::set<std::string> beta_ids = Insert(*beta_, "invoice_created", 50);
  ExpectDelivered(alpha_->Topic("order_created"), alpha_ids);
  ExpectDelivered(beta_->Topic("invoice_created"), beta_ids);

  // Kill alpha's walsender (it is named by its pipeline in pg_stat_activity), keep writing to both.
  // This test's database only: other tests running beside it (ctest -j2) have pipelines named alpha too.
  auto killed = alpha_->Value("SELECT count(pg_terminate_backend(pid)) FROM pg_stat_activity WHERE application_name = "
                              "'outbox-relay.alpha' AND backend_type = 'walsender' AND datname = current_database()");
  ASSERT_EQ(killed.value_or("0"), "1") << relay->Output();
  const double beta_reconnects_before = Metric("outbox_relay_reconnects_total", "beta");
  std::set<std::string> more_alpha = Insert(*alpha_, "order_created", 50);
  std::set<std::string> more_beta = Insert(*beta_, "invoice_created", 50);
  alpha_ids.insert(more_alpha.begin(), more_alpha.end());
  beta_ids.insert(more_beta.begin(), more_beta.end());
  ExpectDelivered(alpha_->Topic("order_created"), alpha_ids);
  ExpectDelivered(beta_->Topic("invoice_created"), beta_ids);

  // Alpha reconnected; beta never did. Each pipeline's metrics are its own.
  EXPECT_TRUE(WaitFor([&] { return Metric("outbox_relay_reconnects_total", "alpha") >= 1; }, 30s,
                      "alpha counts its reconnect"));
  EXPECT_EQ(Metric("outbox_relay_reconnects_total", "beta"), beta_reconnects_before);
  EXPECT_EQ(beta_reconnects_before, 0);
  EXPECT_TRUE(WaitFor([&] { return HttpGet(http_port_, "/readyz").first == 200; }, 60s, "both ready again"));
  // Every event's transaction is confirmed on each pipeline's own slot.
  const Lsn alpha_wal = alpha_->CurrentWal(), beta_wal = beta_->CurrentWal();
  EXPECT_TRUE(WaitFor([&] { return alpha_->ConfirmedFlush() >= alpha_wal && beta_->ConfirmedFlush() >= beta_wal; },
                      30s, "both slots confirm their WAL"));
  EXPECT_THAT(HttpGet(http_port_, "/readyz").second, HasSubstr("pipeline alpha: ready"));

  ASSERT_TRUE(relay->Kill(SIGTERM).ok());
  EXPECT_EQ(relay->Wait(60s), std::optional<int>(0)) << relay->Output();
  EXPECT_THAT(relay->Output(), HasSubstr("[alpha]"));
}

TEST_F(PipelinesTest, AHaltedPipelineStopsAloneAndTheProcessExitsOneAtStop) {
  auto relay = StartRelay();
  ASSERT_TRUE(relay);
  // A poison event in beta (its topic name is illegal): beta halts under delivery.on_error: halt.
  const Lsn before_poison = beta_->CurrentWal();
  const std::string poison = beta_->InsertEvent("bad/type", "k", R"({"n":1})");
  ASSERT_TRUE(WaitFor([&] { return HttpGet(http_port_, "/readyz?pipeline=beta").first == 503 &&
                                   Metric("outbox_relay_running", "beta") == 0; },
                      60s, "beta stopped"));
  EXPECT_THAT(HttpGet(http_port_, "/readyz?pipeline=beta").second, HasSubstr(poison));

  // Alpha goes on: new events arrive, it stays ready, the process stays healthy.
  std::set<std::string> alpha_ids = Insert(*alpha_, "order_created", 30);
  ExpectDelivered(alpha_->Topic("order_created"), alpha_ids);
  EXPECT_TRUE(relay->Running());
  EXPECT_EQ(HttpGet(http_port_, "/readyz?pipeline=alpha").first, 200);
  EXPECT_EQ(HttpGet(http_port_, "/healthz").first, 200);
  EXPECT_EQ(HttpGet(http_port_, "/readyz").first, 503);
  EXPECT_EQ(HttpGet(http_port_, "/readyz?pipeline=nope").first, 404);
  EXPECT_EQ(Metric("outbox_relay_running", "alpha"), 1);

  ASSERT_TRUE(relay->Kill(SIGTERM).ok());
  EXPECT_EQ(relay->Wait(60s), std::optional<int>(1)) << relay->Output();
  EXPECT_THAT(relay->Output(), HasSubstr("[beta] fatal:"));
  // Beta's slot was not confirmed past the poison transaction: it is still there to be relayed (or skipped). The
  // slot itself says so (its confirmed position may pass before_poison: other tests' WAL on the shared server comes
  // in keepalives while beta is idle, before the poison is written).
  EXPECT_EQ(beta_->PendingChangesNaming(poison), 1) << "the poison event is still in beta's slot, confirmed at "
                                           << beta_->ConfirmedFlush().ToString() << " (before it: "
                                           << before_poison.ToString() << ")";
}

TEST_F(PipelinesTest, CommandsActOnEveryPipelineOrTheNamedOne) {
  std::string output;
  ProcessOptions o;
  auto run = [&](std::vector<std::string> args) {
    o.argv = {RelayBin()};
    o.argv.insert(o.argv.end(), args.begin(), args.end());
    o.argv.insert(o.argv.end(), {"-c", config_path_});
    o.output_path = alpha_->dir() + "/cmd.log";
    auto child = ChildProcess::Spawn(o);
    EXPECT_TRUE(child.ok());
    auto rc = (*child)->Wait(60s);
    output = (*child)->Output();
    return rc.value_or(-1);
  };
  EXPECT_EQ(run({"status"}), 0) << output;
  EXPECT_THAT(output, HasSubstr("== pipeline alpha =="));
  EXPECT_THAT(output, HasSubstr("== pipeline beta =="));
  EXPECT_THAT(output, HasSubstr(alpha_->slot()));
  EXPECT_THAT(output, HasSubstr(beta_->slot()));

  EXPECT_EQ(run({"status", "--json", "--pipeline", "beta"}), 0) << output;
  EXPECT_THAT(output, HasSubstr("\"beta\""));
  EXPECT_THAT(output, Not(HasSubstr("\"alpha\"")));
  EXPECT_THAT(output, HasSubstr(beta_->slot()));

  EXPECT_EQ(run({"check"}), 0) << output;
  EXPECT_EQ(run({"status", "--pipeline", "gamma"}), 2) << output;
  EXPECT_THAT(output, HasSubstr("no such pipeline"));
  // --start-lsn is about one slot.
  EXPECT_EQ(run({"run", "--start-lsn", "0/1"}), 2) << output;
  EXPECT_THAT(output, HasSubstr("--pipeline"));

  // A dropped slot is fatal for its pipeline only: status says which one.
  ASSERT_TRUE(pg_->Exec("SELECT pg_drop_replication_slot('" + beta_->slot() + "')", beta_->db()).ok());
  EXPECT_EQ(run({"status"}), 1) << output;
}

}  // namespace
}  // namespace outbox::testing
