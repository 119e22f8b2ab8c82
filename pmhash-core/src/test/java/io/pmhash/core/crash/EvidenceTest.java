package io.pmhash.core.crash;

import static org.junit.jupiter.api.Assertions.assertEquals;
import static org.junit.jupiter.api.Assertions.assertThrows;
import static org.junit.jupiter.api.Assertions.assertTrue;

import java.nio.file.Files;
import java.nio.file.Path;
import java.util.List;
import org.junit.jupiter.api.Test;
import org.junit.jupiter.api.io.TempDir;

class EvidenceTest {
  @TempDir Path dir;

  @Test
  void recordsNameTheCallingTestAndTheReportSumsThemPerSubject() throws Exception {
    Path file = dir.resolve("evidence.tsv");
    String before = System.getProperty(Evidence.PROPERTY);
    System.setProperty(Evidence.PROPERTY, file.toString());
    try {
      Evidence.record("crash", "dash-eh", "crashPoints", 3, "images", 10L);
      Evidence.record("crash", "dash-eh", "crashPoints", 4, "images", 1L);
      Evidence.record("crash", "cceh", "images", 2L);
      assertThrows(IllegalArgumentException.class, () -> Evidence.record("crash", "a\tb", "x", 1));
      assertThrows(IllegalArgumentException.class, () -> Evidence.record("crash", "s", "x"));
    } finally {
      if (before == null) {
        System.clearProperty(Evidence.PROPERTY);
      } else {
        System.setProperty(Evidence.PROPERTY, before);
      }
    }
    List<String> lines = Files.readAllLines(file);
    assertEquals(3, lines.size());
    assertEquals("crash\tdash-eh\tEvidenceTest.recordsNameTheCallingTestAndTheReportSumsThemPerSubject\tcrashPoints=3\timages=10", lines.get(0));

    Path doc = dir.resolve("doc.md");
    Files.writeString(doc, "# Title\n" + EvidenceReport.BEGIN + "\nold\n" + EvidenceReport.END + "\ntail\n");
    EvidenceReport.main(new String[] {file.toString(), doc.toString(), "run X"});
    String out = Files.readString(doc);
    assertTrue(out.startsWith("# Title\n" + EvidenceReport.BEGIN + "\nLast run: run X.\n"), out);
    assertTrue(out.contains("| cceh | 1 | 0 | 2 |"), out);
    assertTrue(out.contains("| dash-eh | 2 | 7 | 11 |"), out);
    assertTrue(out.contains("| **all** | 3 | **7** | **13** |"), out);
    assertTrue(out.endsWith(EvidenceReport.END + "\ntail\n") && !out.contains("old"), out);
  }

  @Test
  void withoutThePropertyNothingIsWritten() {
    String before = System.getProperty(Evidence.PROPERTY);
    System.clearProperty(Evidence.PROPERTY);
    try {
      Evidence.record("crash", "x", "n", 1);
      assertEquals(0, dir.toFile().list().length);
    } finally {
      if (before != null) {
        System.setProperty(Evidence.PROPERTY, before);
      }
    }
  }
}
