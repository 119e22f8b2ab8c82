package io.pmhash.jmh.charts;

import java.util.ArrayList;
import java.util.LinkedHashMap;
import java.util.List;
import java.util.Map;

/**
 * A small JSON reader for JMH's result files: objects become {@code Map<String, Object>}, arrays
 * {@code List<Object>}, numbers {@code Double}, and strings, booleans and null themselves.
 * Enough for JMH's output (no new dependency for one file format); a malformed file fails with
 * the offset where it went wrong.
 */
final class Json {
  private final String text;
  private int at;

  private Json(String text) {
    this.text = text;
  }

  /**
   * Parses a whole document.
   *
   * @param text the JSON text
   * @return the value
   * @throws IllegalArgumentException if it is not JSON, with the offset
   */
  static Object parse(String text) {
    Json j = new Json(text);
    Object v = j.value();
    j.space();
    if (j.at != text.length()) {
      throw j.error("trailing text");
    }
    return v;
  }

  private IllegalArgumentException error(String what) {
    return new IllegalArgumentException("not JSON at offset " + at + ": " + what);
  }

  private void space() {
    while (at < text.length() && Character.isWhitespace(text.charAt(at))) {
      at++;
    }
  }

  private Object value() {
    space();
    if (at >= text.length()) {
      throw error("unexpected end");
    }
    char c = text.charAt(at);
    switch (c) {
      case '{':
        return object();
      case '[':
        return array();
      case '"':
        return string();
      default:
        if (text.startsWith("true", at)) {
          at += 4;
          return Boolean.TRUE;
        }
        if (text.startsWith("false", at)) {
          at += 5;
          return Boolean.FALSE;
        }
        if (text.startsWith("null", at)) {
          at += 4;
          return null;
        }
        return number();
    }
  }

  private Map<String, Object> object() {
    Map<String, Object> m = new LinkedHashMap<>();
    at++;
    space();
    if (peek('}')) {
      return m;
    }
    do {
      space();
      String key = string();
      space();
      expect(':');
      m.put(key, value());
      space();
    } while (peek(','));
    expect('}');
    return m;
  }

  private List<Object> array() {
    List<Object> l = new ArrayList<>();
    at++;
    space();
    if (peek(']')) {
      return l;
    }
    do {
      l.add(value());
      space();
    } while (peek(','));
    expect(']');
    return l;
  }

  private boolean peek(char c) {
    if (at < text.length() && text.charAt(at) == c) {
      at++;
      return true;
    }
    return false;
  }

  private void expect(char c) {
    if (!peek(c)) {
      throw error("expected '" + c + "'");
    }
  }

  private String string() {
    expect('"');
    StringBuilder b = new StringBuilder();
    while (at < text.length()) {
      char c = text.charAt(at++);
      if (c == '"') {
        return b.toString();
      }
      if (c == '\\') {
        if (at >= text.length()) {
          break;
        }
        char e = text.charAt(at++);
        switch (e) {
          case 'n' -> b.append('\n');
          case 't' -> b.append('\t');
          case 'r' -> b.append('\r');
          case 'b' -> b.append('\b');
          case 'f' -> b.append('\f');
          case 'u' -> {
            if (at + 4 > text.length()) {
              throw error("short \\u escape");
            }
            b.append((char) Integer.parseInt(text.substring(at, at + 4), 16));
            at += 4;
          }
          default -> b.append(e);
        }
      } else {
        b.append(c);
      }
    }
    throw error("unterminated string");
  }

  private Double number() {
    int start = at;
    while (at < text.length() && "+-0123456789.eE".indexOf(text.charAt(at)) >= 0) {
      at++;
    }
    String s = text.substring(start, at);
    if (s.isEmpty()) {
      throw error("unexpected '" + text.charAt(at) + "'");
    }
    if (s.equals("NaN")) {
      return Double.NaN;
    }
    try {
      return Double.valueOf(s);
    } catch (NumberFormatException e) {
      throw error("bad number " + s);
    }
  }
}
