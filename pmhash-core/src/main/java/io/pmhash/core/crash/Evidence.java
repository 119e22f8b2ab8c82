package io.pmhash.core.crash;

import java.io.IOException;
import java.io.UncheckedIOException;
import java.nio.charset.StandardCharsets;
import java.nio.file.Files;
import java.nio.file.Path;
import java.nio.file.StandardOpenOption;
import java.util.Optional;
import java.util.regex.Pattern;

/**
 * The counts the reliability suites produce (crash images explored, kills, bad inputs, races),
 * appended as they run to the file named by the system property {@value #PROPERTY}, so that
 * {@code docs/reliability.md} shows the numbers of the last run instead of numbers typed by hand.
 * Without the property every call does nothing.
 *
 * <p>One line per record, tab-separated: {@code kind, subject, test, name=value, ...}. {@code
 * kind} is what was done ({@code crash}, {@code kill}, {@code bad-input}, ...), {@code subject}
 * what it was done to (a scheme, {@code core}), {@code test} the test class and method. {@code
 * ./pmhash evidence} runs the suites with the property set and turns the file into the tables
 * of {@code docs/reliability.md} ({@link EvidenceReport}).
 */
public final class Evidence {
  /** The system property naming the file records are appended to. */
  public static final String PROPERTY = "pmhash.evidence";

  private static final Pattern FIELD = Pattern.compile("[^\\t\\n=]+");

  private Evidence() {}

  /**
   * Appends one record, if {@value #PROPERTY} names a file.
   *
   * @param kind what was done, e.g. {@code crash}
   * @param subject what it was done to, e.g. a scheme name or {@code core}
   * @param namesAndCounts alternately a count's name (a String) and its value (a Long or
   *     Integer), in the order to show them
   */
  public static void record(String kind, String subject, Object... namesAndCounts) {
    String file = System.getProperty(PROPERTY);
    if (file == null || file.isEmpty()) {
      return;
    }
    if (namesAndCounts.length % 2 != 0) {
      throw new IllegalArgumentException("evidence counts come in name, value pairs: " + namesAndCounts.length + " arguments");
    }
    StringBuilder line = new StringBuilder();
    line.append(check(kind)).append('\t').append(check(subject)).append('\t').append(callingTest());
    for (int i = 0; i < namesAndCounts.length; i += 2) {
      if (!(namesAndCounts[i] instanceof String name) || !(namesAndCounts[i + 1] instanceof Long || namesAndCounts[i + 1] instanceof Integer)) {
        throw new IllegalArgumentException("evidence count " + i / 2 + " is not a (String, Long|Integer) pair");
      }
      line.append('\t').append(check(name)).append('=').append(namesAndCounts[i + 1]);
    }
    line.append('\n');
    synchronized (Evidence.class) {
      try {
        Files.writeString(Path.of(file), line, StandardCharsets.UTF_8, StandardOpenOption.CREATE,
            StandardOpenOption.APPEND, StandardOpenOption.WRITE);
      } catch (IOException e) {
        throw new UncheckedIOException("cannot append reliability evidence to " + file + " (" + PROPERTY + ")", e);
      }
    }
  }

  private static String check(String field) {
    if (!FIELD.matcher(field).matches()) {
      throw new IllegalArgumentException("an evidence field must be non-empty and hold no tab, newline or '=': '" + field + "'");
    }
    return field;
  }

  /** The innermost caller whose class name ends in {@code Test}, as {@code Class.method}. */
  static String callingTest() {
    Optional<String> test = StackWalker.getInstance().walk(frames -> frames
        .filter(f -> f.getClassName().endsWith("Test"))
        .map(f -> simpleName(f.getClassName()) + "." + f.getMethodName())
        .findFirst());
    return test.orElse("-");
  }

  private static String simpleName(String className) {
    return className.substring(className.lastIndexOf('.') + 1);
  }
}
