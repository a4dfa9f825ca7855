// Character.getName of every code point that has one: one line each, "HEX<TAB>NAME".
public class JavaCharacterNames {
  public static void main(String[] args) {
    StringBuilder out = new StringBuilder();
    for (int c = 0; c <= Character.MAX_CODE_POINT; c++) {
      String name = Character.getName(c);
      if (name != null) out.append(Integer.toHexString(c)).append('\t').append(name).append('\n');
    }
    System.out.print(out);
  }
}
