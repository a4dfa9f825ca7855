// Debezium 3.6.1's expanded JSON payload, run by Debezium's and Kafka's own classes: the oracle of
// json_expand_differential_test. For each payload in the input file (payloads separated by NUL bytes), it does what
// EventRouterDelegate.apply does with table.expand.json.payload=true (parseJsonPayload, then toConnectSchema and
// toConnectData, any exception caught) for a payload column "payload" of an optional string schema, then writes
// one line of base64 per payload, of four lines: the outcome and what Kafka Connect's converters make of it:
//   outcome     expanded | kept | kept_without_schema | fails_in_json_converter
//   json        JsonConverter with schemas.enable=false (or the exception's class)
//   envelope    JsonConverter with schemas.enable=true
//   string      StringConverter (Struct.toString)
// The field names are adjusted as the router's field.name.adjustment.mode says (none, avro, avro_unicode), by the
// adjuster Debezium's router takes.
// Usage: java -cp <Debezium's plugin jars>:<Kafka's jars> JsonExpandOracle.java ignore|optional_bytes FILE [MODE]
import java.nio.charset.StandardCharsets;
import java.nio.file.Files;
import java.nio.file.Path;
import java.util.Base64;
import java.util.Map;

import org.apache.kafka.connect.data.Schema;
import org.apache.kafka.connect.json.JsonConverter;
import org.apache.kafka.connect.storage.StringConverter;

import com.fasterxml.jackson.databind.JsonNode;
import com.fasterxml.jackson.databind.ObjectMapper;

import io.debezium.config.CommonConnectorConfig.FieldNameAdjustmentMode;
import io.debezium.schema.FieldNameSelector;
import io.debezium.schema.SchemaNameAdjuster;
import io.debezium.transforms.outbox.EventRouterConfigDefinition.JsonPayloadNullFieldBehavior;
import io.debezium.transforms.outbox.JsonSchemaData;

public class JsonExpandOracle {
    public static void main(String[] args) throws Exception {
        JsonSchemaData data = new JsonSchemaData(JsonPayloadNullFieldBehavior.parse(args[0]),
                FieldNameSelector.defaultNonRelationalSelector(args.length > 2
                        ? FieldNameAdjustmentMode.parse(args[2]).createAdjuster()
                        : SchemaNameAdjuster.NO_OP));
        ObjectMapper mapper = new ObjectMapper();
        JsonConverter json = new JsonConverter();
        json.configure(Map.of("schemas.enable", "false"), false);
        JsonConverter envelope = new JsonConverter();
        envelope.configure(Map.of("schemas.enable", "true"), false);
        StringConverter string = new StringConverter();
        string.configure(Map.of(), false);
        String input = new String(Files.readAllBytes(Path.of(args[1])), StandardCharsets.UTF_8);
        StringBuilder out = new StringBuilder();
        Base64.Encoder base64 = Base64.getEncoder();
        for (String text : input.split("\0", -1)) {
            if (text.isEmpty()) {
                continue;
            }
            Schema column = Schema.OPTIONAL_STRING_SCHEMA;
            Schema schema = column;
            Object payload = text;
            try {
                if (!text.startsWith("{") && !text.startsWith("[")) {
                    throw new Exception("not { or [");
                }
                JsonNode node = mapper.readTree(text);
                schema = data.toConnectSchema("payload", node);
                payload = data.toConnectData(node, schema);
            }
            catch (Exception e) {
                // EventRouterDelegate only warns.
            }
            String outcome = !(payload instanceof String) ? "expanded"
                    : schema == column ? "kept" : schema == null ? "kept_without_schema" : "fails_in_json_converter";
            String answer = outcome + "\n" + convert(json, schema, payload) + "\n" + convert(envelope, schema, payload) + "\n";
            byte[] bytes = concat(answer.getBytes(StandardCharsets.UTF_8), string.fromConnectData("t", schema, payload));
            out.append(base64.encodeToString(bytes)).append('\n');
        }
        System.out.write(out.toString().getBytes(StandardCharsets.UTF_8));
        System.out.flush();
    }

    static byte[] concat(byte[] a, byte[] b) {
        byte[] out = new byte[a.length + b.length];
        System.arraycopy(a, 0, out, 0, a.length);
        System.arraycopy(b, 0, out, a.length, b.length);
        return out;
    }

    static String convert(JsonConverter converter, Schema schema, Object value) {
        try {
            return new String(converter.fromConnectData("t", schema, value), StandardCharsets.UTF_8);
        }
        catch (Exception e) {
            return "FAILS " + e.getClass().getSimpleName();
        }
    }
}
