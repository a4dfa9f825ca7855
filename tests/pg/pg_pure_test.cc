// The pure parts of the pg module: server error classification, connection parameters, SQL quoting and the
// administration SQL builders. No server.
#include <gmock/gmock.h>
#include <gtest/gtest.h>

#include "common/status_tag.h"

#include <optional>
#include <ostream>
#include <string>
#include <utility>
#include <vector>

#include "pg/admin.h"
#include "pg/replication_connection.h"

namespace outbox::pg {
namespace {

using ::testing::HasSubstr;
using ::testing::Not;
using ::testing::StartsWith;
using Params = std::vector<std::pair<std::string, std::string>>;

constexpr const char* kPinned =
    "-c datestyle=ISO -c timezone=UTC -c extra_float_digits=3 -c bytea_output=hex -c intervalstyle=iso_8601";

// --- ClassifyServerError ---------------------------------------------------------------------------------------

struct Classification {
  const char* sqlstate;
  const char* message;
  absl::StatusCode code;
};

void PrintTo(const Classification& c, std::ostream* os) {
  *os << "SQLSTATE \"" << c.sqlstate << "\" \"" << c.message << "\"";
}

class ClassifyServerErrorTest : public ::testing::TestWithParam<Classification> {};

TEST_P(ClassifyServerErrorTest, MapsSqlstateToWhatTheLoopDoes) {
  const Classification& c = GetParam();
  const absl::Status status = ClassifyServerError(c.sqlstate, c.message);
  EXPECT_EQ(status.code(), c.code) << "SQLSTATE " << c.sqlstate << ": " << c.message;
  EXPECT_EQ(std::string(status.message()), c.message);
}

// The reconnect loop waits as a standby on this reason, never on the server's words.
TEST(ClassifyServerError, SlotBusyCarriesTheStandbyReasonAndNothingElseDoes) {
  EXPECT_EQ(ReasonOf(ClassifyServerError("55006", "replication slot \"s\" is active for PID 42")),
            StatusReason::kStandby);
  EXPECT_EQ(ReasonOf(ClassifyServerError("08006", "is active for PID 42")), StatusReason::kNone);
  EXPECT_EQ(ReasonOf(ClassifyServerError("42704", "replication slot \"s\" does not exist")), StatusReason::kNone);
}

INSTANTIATE_TEST_SUITE_P(
    Sqlstates, ClassifyServerErrorTest,
    ::testing::Values(
        // Retry: the slot is busy elsewhere, the connection is gone, the server is going away or overloaded.
        Classification{"55006", "replication slot \"s\" is active for PID 42", absl::StatusCode::kUnavailable},
        Classification{"08006", "server closed the connection unexpectedly", absl::StatusCode::kUnavailable},
        Classification{"08P01", "unexpected EOF", absl::StatusCode::kUnavailable},
        Classification{"", "could not receive data from server", absl::StatusCode::kUnavailable},
        Classification{"57P01", "terminating connection due to administrator command",
                       absl::StatusCode::kUnavailable},
        Classification{"53300", "sorry, too many clients already", absl::StatusCode::kUnavailable},
        Classification{"XX000", "some internal error", absl::StatusCode::kUnavailable},
        // Fix the system first.
        Classification{"42704", "replication slot \"s\" does not exist", absl::StatusCode::kFailedPrecondition},
        Classification{"42704", "publication \"p\" does not exist", absl::StatusCode::kFailedPrecondition},
        Classification{"55000", "can no longer get changes from replication slot \"s\"",
                       absl::StatusCode::kFailedPrecondition},
        Classification{"42501", "permission denied to start WAL sender", absl::StatusCode::kFailedPrecondition},
        Classification{"28P01", "password authentication failed for user \"relay\"",
                       absl::StatusCode::kFailedPrecondition},
        Classification{"28000", "no pg_hba.conf entry", absl::StatusCode::kFailedPrecondition},
        // Option errors.
        Classification{"0A000", "client sent proto_version=9 but server only supports protocol 4 or lower",
                       absl::StatusCode::kInvalidArgument},
        Classification{"22023", "invalid value for parameter", absl::StatusCode::kInvalidArgument},
        Classification{"42601", "syntax error", absl::StatusCode::kInvalidArgument},
        Classification{"XX000", "unrecognized pgoutput option: binaryx", absl::StatusCode::kInvalidArgument}),
    [](const ::testing::TestParamInfo<Classification>& info) {
      const std::string sqlstate = *info.param.sqlstate ? info.param.sqlstate : "none";
      return "sqlstate_" + sqlstate + "_" + std::to_string(info.index);
    });

// --- ClassifyConnectFailure ------------------------------------------------------------------------------------

TEST(ClassifyConnectFailure, ARoleWithoutReplicationIsPermanentInEveryServersWording) {
  // PostgreSQL 15 and earlier, then 16 and later.
  EXPECT_EQ(ClassifyConnectFailure("connection to server at \"127.0.0.1\", port 5432 failed: FATAL:  must be "
                                   "superuser or replication role to start walsender"),
            absl::StatusCode::kFailedPrecondition);
  EXPECT_EQ(ClassifyConnectFailure("connection to server at \"127.0.0.1\", port 5432 failed: FATAL:  permission "
                                   "denied to start WAL sender\nDETAIL:  Only roles with the REPLICATION attribute "
                                   "may start a WAL sender process."),
            absl::StatusCode::kFailedPrecondition);
}

TEST(ClassifyConnectFailure, AuthenticationAndMissingObjectsArePermanent) {
  for (const char* reason : {"FATAL:  password authentication failed for user \"relay\"",
                             "FATAL:  database \"app\" does not exist", "FATAL:  no pg_hba.conf entry for host",
                             "SSL error: certificate verify failed"}) {
    EXPECT_EQ(ClassifyConnectFailure(reason), absl::StatusCode::kFailedPrecondition) << reason;
  }
}

TEST(ClassifyConnectFailure, UnreachableStartingOrReadOnlyServersAreRetried) {
  for (const char* reason : {"connection refused", "FATAL:  the database system is starting up",
                             "server is in hot standby mode", "session is read-only", "timeout expired"}) {
    EXPECT_EQ(ClassifyConnectFailure(reason), absl::StatusCode::kUnavailable) << reason;
  }
}

// --- BuildConnParams -------------------------------------------------------------------------------------------

int Count(const Params& params, const std::string& key) {
  int n = 0;
  for (const auto& [k, v] : params) n += k == key;
  return n;
}

std::optional<std::string> Get(const Params& params, const std::string& key) {
  for (const auto& [k, v] : params) {
    if (k == key) return v;
  }
  return std::nullopt;
}

TEST(BuildConnParams, KeyValueFormGetsReplicationDatabaseWhenAsked) {
  auto params = BuildConnParams("host=127.0.0.1 port=5432 dbname=app user=relay", /*replication=*/true, "relay-app");
  ASSERT_TRUE(params.ok()) << params.status();
  EXPECT_EQ(Get(*params, "host"), "127.0.0.1");
  EXPECT_EQ(Get(*params, "port"), "5432");
  EXPECT_EQ(Get(*params, "dbname"), "app");
  EXPECT_EQ(Get(*params, "user"), "relay");
  EXPECT_EQ(Get(*params, "replication"), "database");
  EXPECT_EQ(Get(*params, "application_name"), "relay-app");
  EXPECT_EQ(Get(*params, "client_encoding"), "UTF8");
  EXPECT_EQ(Get(*params, "options"), kPinned);
}

TEST(BuildConnParams, PlainConnectionHasNoReplicationKey) {
  auto params = BuildConnParams("host=127.0.0.1 dbname=app", /*replication=*/false, "relay-app");
  ASSERT_TRUE(params.ok()) << params.status();
  EXPECT_EQ(Count(*params, "replication"), 0);
  EXPECT_EQ(Get(*params, "client_encoding"), "UTF8");
  EXPECT_EQ(Get(*params, "options"), kPinned);
}

TEST(BuildConnParams, UsersReplicationKeyIsReplaced) {
  auto plain = BuildConnParams("host=h replication=true", /*replication=*/false, "a");
  ASSERT_TRUE(plain.ok()) << plain.status();
  EXPECT_EQ(Count(*plain, "replication"), 0);
  auto repl = BuildConnParams("host=h replication=true", /*replication=*/true, "a");
  ASSERT_TRUE(repl.ok()) << repl.status();
  EXPECT_EQ(Count(*repl, "replication"), 1);
  EXPECT_EQ(Get(*repl, "replication"), "database");
}

TEST(BuildConnParams, DeadNetworkPathsFailInSecondsUnlessTheConninfoSaysOtherwise) {
  auto params = BuildConnParams("host=h dbname=app", true, "a");
  ASSERT_TRUE(params.ok()) << params.status();
  EXPECT_EQ(Get(*params, "keepalives"), "1");
  EXPECT_EQ(Get(*params, "tcp_user_timeout"), "30000");
  EXPECT_EQ(Get(*params, "connect_timeout"), "10");
  auto own = BuildConnParams("host=h connect_timeout=3 tcp_user_timeout=0", true, "a");
  ASSERT_TRUE(own.ok()) << own.status();
  EXPECT_EQ(Count(*own, "connect_timeout"), 1);
  EXPECT_EQ(Get(*own, "connect_timeout"), "3");
  EXPECT_EQ(Get(*own, "tcp_user_timeout"), "0");
}

TEST(BuildConnParams, UsersApplicationNameIsKept) {
  auto params = BuildConnParams("host=h application_name=billing-relay", true, "outbox-relay");
  ASSERT_TRUE(params.ok()) << params.status();
  EXPECT_EQ(Count(*params, "application_name"), 1);
  EXPECT_EQ(Get(*params, "application_name"), "billing-relay");
}

TEST(BuildConnParams, ClientEncodingIsAlwaysUtf8) {
  auto params = BuildConnParams("host=h client_encoding=LATIN1", true, "a");
  ASSERT_TRUE(params.ok()) << params.status();
  EXPECT_EQ(Count(*params, "client_encoding"), 1);
  EXPECT_EQ(Get(*params, "client_encoding"), "UTF8");
}

TEST(BuildConnParams, UsersOptionsComeFirstThenThePinnedSettings) {
  auto params = BuildConnParams("host=h options='-c search_path=app -c work_mem=64MB'", true, "a");
  ASSERT_TRUE(params.ok()) << params.status();
  EXPECT_EQ(Count(*params, "options"), 1);
  EXPECT_EQ(Get(*params, "options"), std::string("-c search_path=app -c work_mem=64MB ") + kPinned);
}

TEST(BuildConnParams, PinnedOptionsFixEveryTextFormSetting) {
  auto params = BuildConnParams("host=h", true, "a");
  ASSERT_TRUE(params.ok()) << params.status();
  const std::string options = *Get(*params, "options");
  for (const char* setting : {"datestyle=ISO", "timezone=UTC", "extra_float_digits=3", "bytea_output=hex",
                              "intervalstyle=iso_8601"}) {
    EXPECT_THAT(options, HasSubstr(std::string("-c ") + setting)) << setting;
  }
}

TEST(BuildConnParams, UriFormIsUnderstood) {
  auto params = BuildConnParams(
      "postgresql://relay:s3cret@db.example:5433/app?sslmode=disable&options=-c%20statement_timeout%3D0", true,
      "outbox-relay");
  ASSERT_TRUE(params.ok()) << params.status();
  EXPECT_EQ(Get(*params, "host"), "db.example");
  EXPECT_EQ(Get(*params, "port"), "5433");
  EXPECT_EQ(Get(*params, "dbname"), "app");
  EXPECT_EQ(Get(*params, "user"), "relay");
  EXPECT_EQ(Get(*params, "password"), "s3cret");
  EXPECT_EQ(Get(*params, "sslmode"), "disable");
  EXPECT_EQ(Get(*params, "replication"), "database");
  EXPECT_EQ(Get(*params, "application_name"), "outbox-relay");
  EXPECT_EQ(Get(*params, "client_encoding"), "UTF8");
  EXPECT_EQ(Get(*params, "options"), std::string("-c statement_timeout=0 ") + kPinned);
}

TEST(BuildConnParams, UriApplicationNameIsKept) {
  auto params = BuildConnParams("postgres://h/app?application_name=mine", false, "outbox-relay");
  ASSERT_TRUE(params.ok()) << params.status();
  EXPECT_EQ(Count(*params, "application_name"), 1);
  EXPECT_EQ(Get(*params, "application_name"), "mine");
  EXPECT_EQ(Count(*params, "replication"), 0);
}

TEST(BuildConnParams, MalformedConninfoIsInvalidArgumentNamingTheKey) {
  for (const char* bad : {"host", "host='unterminated", "nosuchkeyword=1", "postgresql://[::1/app",
                          "postgresql://h/app?nosuchparam=1"}) {
    auto params = BuildConnParams(bad, true, "a");
    ASSERT_FALSE(params.ok()) << bad;
    EXPECT_EQ(params.status().code(), absl::StatusCode::kInvalidArgument) << bad;
    const std::string message(params.status().message());
    EXPECT_THAT(message, StartsWith("source.conninfo: ")) << bad;
    EXPECT_FALSE(message.ends_with("\n")) << bad;
  }
}

// --- Quoting ---------------------------------------------------------------------------------------------------

TEST(QuoteIdent, WrapsInDoubleQuotesAndDoublesThem) {
  EXPECT_EQ(QuoteIdent("outbox"), "\"outbox\"");
  EXPECT_EQ(QuoteIdent("MyPub"), "\"MyPub\"");
  EXPECT_EQ(QuoteIdent("a\"b"), "\"a\"\"b\"");
  EXPECT_EQ(QuoteIdent("\"\""), "\"\"\"\"\"\"");
  EXPECT_EQ(QuoteIdent(""), "\"\"");
  EXPECT_EQ(QuoteIdent("it's"), "\"it's\"");
}

TEST(QuoteLiteral, WrapsInSingleQuotesAndDoublesThem) {
  EXPECT_EQ(QuoteLiteral("outbox_pub"), "'outbox_pub'");
  EXPECT_EQ(QuoteLiteral("it's"), "'it''s'");
  EXPECT_EQ(QuoteLiteral("''"), "''''''");
  EXPECT_EQ(QuoteLiteral(""), "''");
  EXPECT_EQ(QuoteLiteral("a\"b"), "'a\"b'");
}

// --- Administration SQL ----------------------------------------------------------------------------------------

OutboxSqlNames Names() {
  OutboxSqlNames n;
  n.schema = "public";
  n.table = "outbox";
  n.publication = "outbox_pub";
  n.slot = "outbox_relay";
  n.role = "outbox_relay";
  return n;
}

TEST(CreatePublicationSql, PublishesInsertsOfTheOutboxOnly) {
  const std::string sql = CreatePublicationSql(Names());
  EXPECT_THAT(sql, HasSubstr("CREATE PUBLICATION \"outbox_pub\" FOR TABLE \"public\".\"outbox\""));
  EXPECT_THAT(sql, HasSubstr("WITH (publish = 'insert')"));
}

TEST(PublicationPublishesUpdates, ReadsTheThirdColumnOfTheCoverageRow) {
  EXPECT_TRUE(PublicationPublishesUpdates({Row{"t", "t", "t"}}));
  EXPECT_FALSE(PublicationPublishesUpdates({Row{"t", "t", "f"}}));
  EXPECT_FALSE(PublicationPublishesUpdates({Row{"t", "t", std::nullopt}}));
  EXPECT_FALSE(PublicationPublishesUpdates({}));
}

// outbox.on_update: error (Debezium's table.op.invalid.behavior=fatal) must see UPDATEs: the publication sends them.
TEST(CreatePublicationSql, PublishesUpdatesTooWhenTheConfigAsksToSeeThem) {
  OutboxSqlNames names = Names();
  names.publish_updates = true;
  EXPECT_THAT(CreatePublicationSql(names), HasSubstr("WITH (publish = 'insert, update')"));
}

TEST(CreatePublicationSql, IsGuardedByIfNotExists) {
  const std::string sql = CreatePublicationSql(Names());
  const size_t guard = sql.find("IF NOT EXISTS (SELECT 1 FROM pg_publication WHERE pubname = 'outbox_pub')");
  ASSERT_NE(guard, std::string::npos) << sql;
  EXPECT_LT(guard, sql.find("CREATE PUBLICATION"));
}

TEST(CreatePublicationSql, QuotesNames) {
  OutboxSqlNames n = Names();
  n.publication = "pub'\"x";
  n.schema = "My Schema";
  const std::string sql = CreatePublicationSql(n);
  EXPECT_THAT(sql, HasSubstr("pubname = 'pub''\"x'"));
  EXPECT_THAT(sql, HasSubstr("CREATE PUBLICATION \"pub'\"\"x\" FOR TABLE \"My Schema\".\"outbox\""));
}

TEST(CreateRoleSql, IsALoginReplicationRoleThatIsNotASuperuser) {
  const std::string sql = CreateRoleSql(Names());
  EXPECT_THAT(sql, HasSubstr("CREATE ROLE \"outbox_relay\" LOGIN REPLICATION NOSUPERUSER"));
  EXPECT_THAT(sql, HasSubstr("IF NOT EXISTS (SELECT 1 FROM pg_roles WHERE rolname = 'outbox_relay')"));
  EXPECT_THAT(sql, HasSubstr("GRANT USAGE ON SCHEMA \"public\" TO \"outbox_relay\";"));
  EXPECT_THAT(sql, HasSubstr("GRANT SELECT ON \"public\".\"outbox\" TO \"outbox_relay\";"));
  EXPECT_THAT(sql, Not(HasSubstr("GRANT CONNECT")));
}

TEST(CreateRoleSql, GrantsConnectWhenTheDatabaseIsKnown) {
  OutboxSqlNames n = Names();
  n.database = "app";
  EXPECT_THAT(CreateRoleSql(n), HasSubstr("GRANT CONNECT ON DATABASE \"app\" TO \"outbox_relay\";"));
}

TEST(CreateOutboxTableSql, HasTheDefaultLayout) {
  const std::string sql = CreateOutboxTableSql(Names());
  EXPECT_THAT(sql, StartsWith("CREATE TABLE IF NOT EXISTS \"public\".\"outbox\""));
  for (const char* column : {"id            uuid", "aggregatetype text", "aggregateid   text", "type          text",
                             "payload       jsonb", "created_at    timestamptz"}) {
    EXPECT_THAT(sql, HasSubstr(column)) << column;
  }
}

TEST(CreateSlotSql, IsTheTwoArgumentFormWithoutFailover) {
  EXPECT_EQ(CreateSlotSql(Names(), false), "SELECT pg_create_logical_replication_slot('outbox_relay', 'pgoutput');");
}

TEST(CreateSlotSql, PassesFailoverAsTheFifthArgumentAndShowsTheAlterCommand) {
  const std::string sql = CreateSlotSql(Names(), true);
  EXPECT_THAT(sql, HasSubstr("SELECT pg_create_logical_replication_slot('outbox_relay', 'pgoutput', false, false, "
                             "true);"));
  EXPECT_THAT(sql, HasSubstr("ALTER_REPLICATION_SLOT outbox_relay (FAILOVER true)"));
  EXPECT_THAT(sql, HasSubstr("PostgreSQL 17+"));
}

// --- Server versions (PROTOCOL.md §1, §7) ------------------------------------------------------------------------

TEST(CreateSlotCommand, UsesTheSyntaxEveryServerAcceptsWithoutFailover) {
  EXPECT_EQ(CreateSlotCommand("s1", false), "CREATE_REPLICATION_SLOT s1 LOGICAL pgoutput NOEXPORT_SNAPSHOT");
}

TEST(CreateSlotCommand, UsesTheOptionListWithFailover) {
  EXPECT_EQ(CreateSlotCommand("s1", true),
            "CREATE_REPLICATION_SLOT s1 LOGICAL pgoutput (SNAPSHOT 'nothing', FAILOVER true)");
}

TEST(AlterSlotFailoverCommand, SetsFailoverOnTheSlot) {
  EXPECT_EQ(AlterSlotFailoverCommand("s1"), "ALTER_REPLICATION_SLOT s1 (FAILOVER true)");
}

TEST(CheckFailoverSupported, RefusesBeforeSeventeenNamingTheKeyAndTheVersion) {
  for (int version : {140019, 150018, 160010}) {
    const absl::Status st = CheckFailoverSupported(version);
    EXPECT_EQ(st.code(), absl::StatusCode::kFailedPrecondition) << version;
    EXPECT_THAT(st.message(), HasSubstr("source.failover")) << st;
    EXPECT_THAT(st.message(), HasSubstr("PostgreSQL 17 or later")) << st;
    EXPECT_THAT(st.message(), HasSubstr("PostgreSQL " + ServerVersionText(version))) << st;
  }
  EXPECT_THAT(CheckFailoverSupported(150018).message(), HasSubstr("server is PostgreSQL 15.18"));
  EXPECT_TRUE(CheckFailoverSupported(170000).ok());
  EXPECT_TRUE(CheckFailoverSupported(180001).ok());
}

TEST(StartReplicationCommand, SendsProtocolOneAndOnlyOptionsEveryServerKnows) {
  StartOptions o;
  o.slot = "s1";
  o.publication = "Pub";
  EXPECT_EQ(StartReplicationCommand(o),
            "START_REPLICATION SLOT s1 LOGICAL 0/0 (proto_version '1', publication_names '\"Pub\"')");
}

TEST(StartReplicationCommand, StreamingIsABooleanWithProtocolTwoAndNeverSendsOrigin) {
  StartOptions o;
  o.slot = "s1";
  o.publication = "pub";
  o.proto_version = 2;
  o.streaming = true;
  o.messages = true;
  const std::string sql = StartReplicationCommand(o);
  EXPECT_THAT(sql, HasSubstr("proto_version '2'"));
  EXPECT_THAT(sql, HasSubstr("streaming 'true'"));
  EXPECT_THAT(sql, HasSubstr("messages 'true'"));
  EXPECT_THAT(sql, Not(HasSubstr("origin")));  // 16+ only; PostgreSQL 15 rejects it
}

}  // namespace
}  // namespace outbox::pg

namespace outbox::pg {
namespace {

// ColumnCatalogSql's rows (name, not null, has default, default expression, generated, type OID, modifier, type
// name, enum labels, domain root and modifier, an enum array's labels, typtype, an array's element OID, name, typtype
// and typdelim) as columns; NULLs where the row has none.
TEST(ColumnCatalog, RowsAreParsedIntoColumns) {
  using S = std::optional<std::string>;
  const std::vector<ColumnCatalog> columns = ParseColumnCatalog(
      {{S("id"), S("t"), S("f"), std::nullopt, S("f"), S("2950"), S("-1"), S("uuid"), std::nullopt, std::nullopt,
        std::nullopt},
       {S("status"), S("f"), S("t"), S("'new'::order_status"), S("f"), S("16500"), S("-1"), S("order_status"),
        S("new,shipped"), std::nullopt, std::nullopt},
       {S("amount"), S("t"), S("t"), S("0"), S("f"), S("16600"), S("-1"), S("d_amount"), std::nullopt, S("1700"),
        S("655366")},
       {S("boxes"), S("f"), S("f"), std::nullopt, S("f"), S("16700"), S("-1"), S("_pair"), std::nullopt, std::nullopt,
        std::nullopt, std::nullopt, S("b"), S("16701"), S("pair"), S("c"), S(",")}});
  ASSERT_EQ(columns.size(), 4u);
  EXPECT_EQ(columns[0].type_type, 0);  // a row without the columns: none
  EXPECT_EQ(columns[0].element_oid, 0u);
  EXPECT_EQ(columns[3].type_type, 'b');
  EXPECT_EQ(columns[3].element_oid, 16701u);
  EXPECT_EQ(columns[3].element_name, "pair");
  EXPECT_EQ(columns[3].element_type_type, 'c');
  EXPECT_EQ(columns[3].element_delimiter, ',');
  EXPECT_EQ(columns[0].name, "id");
  EXPECT_TRUE(columns[0].not_null);
  EXPECT_FALSE(columns[0].has_default);
  EXPECT_EQ(columns[0].default_expression, std::nullopt);
  EXPECT_EQ(columns[0].type_oid, 2950u);
  EXPECT_EQ(columns[0].domain_root_oid, 0u);
  EXPECT_EQ(columns[1].default_expression, "'new'::order_status");
  EXPECT_EQ(columns[1].type_name, "order_status");
  EXPECT_EQ(columns[1].enum_labels, "new,shipped");
  EXPECT_EQ(columns[2].domain_root_oid, 1700u);
  EXPECT_EQ(columns[2].domain_root_modifier, 655366);
  EXPECT_EQ(columns[2].enum_labels, std::nullopt);
}

TEST(PublicationCoverage, SaysWhichPartIsMissingNamingThePublication) {
  const Row ok = {std::string("t"), std::string("t")};
  EXPECT_TRUE(PublicationCoverage({ok}, "pub", "public.outbox", true).ok());
  const absl::Status gone = PublicationCoverage({}, "pub", "public.outbox", true);
  EXPECT_EQ(gone.code(), absl::StatusCode::kFailedPrecondition);
  EXPECT_NE(gone.message().find("publication \"pub\" does not exist"), std::string::npos) << gone;
  EXPECT_NE(gone.message().find("changed while the relay ran"), std::string::npos) << gone;
  const absl::Status dropped = PublicationCoverage({{std::string("t"), std::string("f")}}, "pub", "public.outbox", true);
  EXPECT_NE(dropped.message().find("does not cover public.outbox"), std::string::npos) << dropped;
  const absl::Status no_insert = PublicationCoverage({{std::string("f"), std::string("t")}}, "pub", "public.outbox", false);
  EXPECT_NE(no_insert.message().find("does not publish inserts"), std::string::npos) << no_insert;
  EXPECT_EQ(no_insert.message().find("changed while"), std::string::npos) << no_insert;
}

TEST(SlotHealth, RowsBecomeTypedValuesAndAMissingSlotNothing) {
  auto h = ParseSlotHealth({{std::string("extended"), std::nullopt, std::string("123456"), std::string("t")}});
  ASSERT_TRUE(h.has_value());
  EXPECT_EQ(h->wal_status, "extended");
  EXPECT_FALSE(h->safe_wal_size.has_value());  // max_slot_wal_keep_size = -1
  EXPECT_EQ(h->retained_wal, 123456);
  EXPECT_TRUE(h->active);
  EXPECT_FALSE(ParseSlotHealth({}).has_value());
  EXPECT_NE(SlotHealthSql("s").find("slot_name = 's'"), std::string::npos);
}

TEST(PublicationCoverage, TheQueryNamesThePublicationAndTheTableQuoted) {
  const std::string sql = PublicationCoverageSql("p'x", "public", "outbox");
  EXPECT_NE(sql.find("'p''x'"), std::string::npos) << sql;
  EXPECT_NE(sql.find("t.tablename = 'outbox'"), std::string::npos) << sql;
}

}  // namespace
}  // namespace outbox::pg
