// config::kLibrdkafkaSensitiveProperties against the linked librdkafka: every entry is one of its properties, and
// the library is the version whose rdkafka_conf.c the list was read from (a newer librdkafka may mark more
// properties _RK_SENSITIVE: re-read them, then move the version here).
#include <librdkafka/rdkafka.h>

#include <gtest/gtest.h>

#include "config/config.h"

namespace outbox {
namespace {

TEST(LibrdkafkaSensitiveProperties, AreTheLinkedLibrarysOwnProperties) {
  EXPECT_EQ(rd_kafka_version(), 0x020e02ff) << "the list was read from librdkafka 2.14.2, this is "
                                            << rd_kafka_version_str();
  for (std::string_view property : config::kLibrdkafkaSensitiveProperties) {
    rd_kafka_conf_t* conf = rd_kafka_conf_new();
    char error[512] = "";
    const std::string name(property);
    EXPECT_NE(rd_kafka_conf_set(conf, name.c_str(), "x", error, sizeof error), RD_KAFKA_CONF_UNKNOWN)
        << name << ": " << error;
    rd_kafka_conf_destroy(conf);
    EXPECT_TRUE(config::IsSecretKey("kafka." + name)) << name;
  }
}

}  // namespace
}  // namespace outbox
