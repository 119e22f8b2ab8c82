package io.pmhash.jmh.charts;

import static org.junit.jupiter.api.Assertions.assertEquals;
import static org.junit.jupiter.api.Assertions.assertThrows;
import static org.junit.jupiter.api.Assertions.assertTrue;

import java.util.List;
import java.util.Map;
import org.junit.jupiter.api.Test;

/** The JSON reader reads what JMH writes, and says where a broken file goes wrong. */
class JsonTest {
  @Test
  void readsJmhShapes() {
    Object v = Json.parse("""
        [ { "benchmark" : "a.B.c", "threads" : 2, "params" : { "scheme" : "dash-eh" },
            "primaryMetric" : { "score" : 1.5e1, "scoreError" : "NaN", "list" : [ -1, 0.25 ] },
            "ok" : true, "none" : null, "s" : "q\\"\\u00b5" } ]""");
    @SuppressWarnings("unchecked")
    Map<String, Object> run = (Map<String, Object>) ((List<?>) v).get(0);
    assertEquals("a.B.c", run.get("benchmark"));
    assertEquals(2.0, run.get("threads"));
    assertEquals(Map.of("scheme", "dash-eh"), run.get("params"));
    assertEquals(Map.of("score", 15.0, "scoreError", "NaN", "list", List.of(-1.0, 0.25)), run.get("primaryMetric"));
    assertEquals(Boolean.TRUE, run.get("ok"));
    assertTrue(run.containsKey("none") && run.get("none") == null);
    assertEquals("q\"µ", run.get("s"));
  }

  @Test
  void brokenInputNamesTheOffset() {
    IllegalArgumentException e = assertThrows(IllegalArgumentException.class, () -> Json.parse("{\"a\" 1}"));
    assertTrue(e.getMessage().contains("offset 5"), e.getMessage());
    assertThrows(IllegalArgumentException.class, () -> Json.parse("[1, 2"));
    assertThrows(IllegalArgumentException.class, () -> Json.parse("[1] x"));
  }
}
