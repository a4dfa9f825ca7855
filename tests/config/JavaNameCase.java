import java.util.Locale;

// How Pattern and Character change the case of a name: for every code point beyond ASCII (but the surrogates) whose
// String.toUpperCase(Locale.ROOT) or toLowerCase(Locale.ROOT) is all ASCII, one line "HEX<TAB>UPPER<TAB>LOWER", a
// result that is not ASCII given as "-".
public class JavaNameCase {
  static boolean ascii(String s) {
    return s.chars().allMatch(ch -> ch < 0x80);
  }

  public static void main(String[] args) {
    StringBuilder out = new StringBuilder();
    for (int c = 0x80; c <= Character.MAX_CODE_POINT; c++) {
      if (c >= 0xD800 && c <= 0xDFFF) continue;
      String s = new String(Character.toChars(c));
      String upper = s.toUpperCase(Locale.ROOT), lower = s.toLowerCase(Locale.ROOT);
      if (!ascii(upper) && !ascii(lower)) continue;
      out.append(Integer.toHexString(c)).append('\t').append(ascii(upper) ? upper : "-").append('\t')
          .append(ascii(lower) ? lower : "-").append('\n');
    }
    System.out.print(out);
  }
}
