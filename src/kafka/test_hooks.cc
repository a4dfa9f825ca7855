// Fault injection for the end-to-end tests.
#include "kafka/test_hooks.h"

#include <librdkafka/rdkafka.h>

#include "kafka/sink.h"

namespace outbox::kafka {

void InjectFatalError(KafkaSink& sink) {
  rd_kafka_test_fatal_error(sink.handle(), RD_KAFKA_RESP_ERR_OUT_OF_ORDER_SEQUENCE_NUMBER,
                            "test hook: injected fatal error");
}

}  // namespace outbox::kafka
