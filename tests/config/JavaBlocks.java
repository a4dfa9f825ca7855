// Every name Character.UnicodeBlock.forName takes, with its block's first and last code point (hex; "-" when no
// character is in it): one line each, "NAME<TAB>FIRST<TAB>LAST". Run with
// --add-opens java.base/java.lang=ALL-UNNAMED (the names are UnicodeBlock's private map).
import java.lang.reflect.Field;
import java.util.HashMap;
import java.util.Map;
import java.util.TreeMap;

public class JavaBlocks {
  @SuppressWarnings("unchecked")
  public static void main(String[] args) throws Exception {
    Field field = Character.UnicodeBlock.class.getDeclaredField("map");
    field.setAccessible(true);
    Map<String, Character.UnicodeBlock> names = (Map<String, Character.UnicodeBlock>) field.get(null);
    Map<Character.UnicodeBlock, int[]> ranges = new HashMap<>();
    for (int c = 0; c <= Character.MAX_CODE_POINT; c++) {
      Character.UnicodeBlock block = Character.UnicodeBlock.of(c);
      if (block == null) continue;
      int[] range = ranges.computeIfAbsent(block, b -> new int[] {-1, -1});
      if (range[0] < 0) range[0] = c;
      range[1] = c;
    }
    for (Map.Entry<String, Character.UnicodeBlock> e : new TreeMap<>(names).entrySet()) {
      int[] range = ranges.get(e.getValue());
      System.out.println(e.getKey() + "\t" + (range == null ? "-\t-"
          : Integer.toHexString(range[0]) + "\t" + Integer.toHexString(range[1])));
    }
  }
}
