// The reference side of java_route_differential_test.cc: java.util.regex as Debezium's Outbox Event Router routes
// (Matcher.matches(), then replaceFirst(); a value the pattern does not match whole routes to itself). Reads lines
// "P <hex pattern> <hex replacement>" and "V <hex value>" (UTF-8, hex-encoded) on stdin and answers each line:
// "OK" or "REFUSED <hex reason>" for a pattern; "R <hex topic>", "THROWS <hex exception>" or "-" (no pattern) for a
// value. Run as a source file: java JavaRoute.java.
import java.io.BufferedReader;
import java.io.FileDescriptor;
import java.io.FileOutputStream;
import java.io.InputStreamReader;
import java.io.PrintStream;
import java.nio.charset.StandardCharsets;
import java.util.HexFormat;
import java.util.regex.Matcher;
import java.util.regex.Pattern;
import java.util.regex.PatternSyntaxException;

public class JavaRoute {
  public static void main(String[] args) throws Exception {
    BufferedReader in = new BufferedReader(new InputStreamReader(System.in, StandardCharsets.UTF_8));
    PrintStream out = new PrintStream(new FileOutputStream(FileDescriptor.out), false, StandardCharsets.UTF_8);
    Pattern pattern = null;
    String replacement = null;
    for (String line; (line = in.readLine()) != null; ) {
      String[] f = line.split(" ", -1);
      if (f[0].equals("P")) {
        replacement = decode(f[2]);
        try {
          pattern = Pattern.compile(decode(f[1]));
          out.println("OK");
        } catch (PatternSyntaxException e) {
          pattern = null;
          out.println("REFUSED " + encode(e.getDescription()));
        }
      } else if (pattern == null) {
        out.println("-");
      } else {
        String value = decode(f[1]);
        Matcher m = pattern.matcher(value);
        try {
          out.println("R " + encode(m.matches() ? m.replaceFirst(replacement) : value));
        } catch (RuntimeException e) {
          out.println("THROWS " + encode(e.toString()));
        }
      }
    }
    out.flush();
  }

  static String decode(String hex) {
    return new String(HexFormat.of().parseHex(hex), StandardCharsets.UTF_8);
  }

  static String encode(String text) {
    return HexFormat.of().formatHex(text.getBytes(StandardCharsets.UTF_8));
  }
}
