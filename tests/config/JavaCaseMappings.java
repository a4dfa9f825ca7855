// Character.toUpperCase and toLowerCase of every code point that either changes: one line each, "HEX<TAB>UPPER<TAB>LOWER"
// in hex.
public class JavaCaseMappings {
  public static void main(String[] args) {
    StringBuilder out = new StringBuilder();
    for (int c = 0; c <= Character.MAX_CODE_POINT; c++) {
      int upper = Character.toUpperCase(c), lower = Character.toLowerCase(c);
      if (upper == c && lower == c) continue;
      out.append(Integer.toHexString(c)).append('\t').append(Integer.toHexString(upper)).append('\t')
          .append(Integer.toHexString(lower)).append('\n');
    }
    System.out.print(out);
  }
}
