package io.pmhash.jmh.workload;

import static org.junit.jupiter.api.Assertions.assertEquals;
import static org.junit.jupiter.api.Assertions.assertTrue;

import io.pmhash.core.Durability;
import io.pmhash.jmh.charts.Charts;
import java.io.ByteArrayOutputStream;
import java.io.IOException;
import java.io.PrintStream;
import java.nio.charset.StandardCharsets;
import java.nio.file.Files;
import java.nio.file.Path;
import java.util.ArrayList;
import java.util.HashMap;
import java.util.LinkedHashMap;
import java.util.LinkedHashSet;
import java.util.List;
import java.util.Map;
import java.util.Set;
import org.junit.jupiter.api.BeforeAll;
import org.junit.jupiter.api.Test;
import org.junit.jupiter.api.io.TempDir;

/**
 * The papers' experiments of group hashing, ESH and NVLH, and Dash's segment-size sweep (Fig. 11), each run once at a unit test's size
 * (durability PROCESS, two threads at most): every CSV has the columns and rows its chart needs,
 * and its numbers obey what the experiment means (counts, load factors, searches that flush
 * nothing, values that are persisted, latencies ordered), never a timing threshold. The chart
 * command then draws every one of them into the document.
 */
class ExperimentsTest {
  private static final List<String> NAMES = List.of("group-latency", "group-size-sweep", "group-space", "group-recovery",
      "esh-load-factor", "esh-scaling", "esh-recovery", "nvlh-value-size", "dash-segment-size");

  @TempDir
  static Path dir;

  private static Path out;

  @BeforeAll
  static void runAll() throws IOException {
    out = dir.resolve("results");
    Path pools = Files.createDirectories(dir.resolve("pools"));
    ByteArrayOutputStream log = new ByteArrayOutputStream();
    Experiments e = new Experiments(out, pools, Durability.PROCESS, List.of("dash-eh", "cceh", "level"), false, true, 2,
        "Experiments (test)", new PrintStream(log, true, StandardCharsets.UTF_8));
    for (String n : NAMES) {
      e.run(n);
    }
    try (var s = Files.list(pools)) {
      assertEquals(List.of(), s.toList(), "every pool file and crash image is deleted");
    }
  }

  /** The rows of a result, each a column-to-cell map, after checking the header. */
  private static List<Map<String, String>> rows(String name, String header) throws IOException {
    List<String> lines = Files.readAllLines(out.resolve(name + ".csv"));
    List<String> data = new ArrayList<>();
    Map<String, String> meta = new HashMap<>();
    for (String l : lines) {
      if (l.startsWith("# ")) {
        int c = l.indexOf(':');
        meta.put(l.substring(2, c), l.substring(c + 1).trim());
      } else {
        data.add(l);
      }
    }
    assertEquals(name, meta.get("experiment"));
    assertTrue(meta.get("parameters").contains("tiny"), meta.get("parameters"));
    assertTrue(meta.containsKey("load average") && meta.containsKey("machine") && meta.containsKey("durability"), meta.toString());
    assertEquals(header, data.get(0));
    String[] cols = header.split(",");
    List<Map<String, String>> rows = new ArrayList<>();
    for (String l : data.subList(1, data.size())) {
      String[] cells = l.split(",");
      assertEquals(cols.length, cells.length, l);
      Map<String, String> r = new LinkedHashMap<>();
      for (int i = 0; i < cols.length; i++) {
        r.put(cols[i], cells[i]);
      }
      rows.add(r);
    }
    return rows;
  }

  private static double d(Map<String, String> r, String col) {
    return Double.parseDouble(r.get(col));
  }

  private static long l(Map<String, String> r, String col) {
    return Long.parseLong(r.get(col));
  }

  private static Set<String> distinct(List<Map<String, String>> rows, String col) {
    Set<String> s = new LinkedHashSet<>();
    rows.forEach(r -> s.add(r.get(col)));
    return s;
  }

  @Test
  void groupLatencyComparesAFixedGroupTableWithDashAtTwoLoadFactors() throws IOException {
    var rows = rows("group-latency", "series,group_size,cells,load_factor,records,table_load_factor,phase,rounds,latency_ns,mean_ns");
    assertEquals(2 * 2 * 3, rows.size());
    assertEquals(Set.of("group (groupSize=256)", "dash-eh"), distinct(rows, "series"));
    assertEquals(Set.of("0.5", "0.75"), distinct(rows, "load_factor"));
    assertEquals(Set.of("insert", "query", "delete"), distinct(rows, "phase"));
    for (var r : rows) {
      assertEquals((long) (l(r, "cells") * d(r, "load_factor")), l(r, "records"), r.toString());
      assertTrue(d(r, "latency_ns") > 0 && Double.isFinite(d(r, "latency_ns")), r.toString());
      assertTrue(d(r, "mean_ns") > 0 && Double.isFinite(d(r, "mean_ns")), r.toString());
      assertEquals(3, l(r, "rounds"));
      if (r.get("series").startsWith("group")) {
        // The fixed-size table holds exactly the records asked for: its load factor is the target.
        assertEquals(d(r, "load_factor"), d(r, "table_load_factor"), 1e-4, r.toString());
        assertEquals(256, l(r, "group_size"));
      } else {
        assertTrue(d(r, "table_load_factor") > 0 && d(r, "table_load_factor") <= 1, r.toString());
      }
    }
  }

  @Test
  void groupSizeSweepCoversTheGroupSizesOfFigure8() throws IOException {
    var rows = rows("group-size-sweep", "series,group_size,cells,load_factor,records,table_load_factor,phase,rounds,latency_ns,mean_ns");
    assertEquals(5 * 3, rows.size());
    assertEquals(Set.of("64", "128", "256", "512", "1024"), distinct(rows, "group_size"));
    for (var r : rows) {
      assertEquals("0.5", r.get("load_factor"));
      assertEquals(0.5, d(r, "table_load_factor"), 1e-4);
      assertTrue(d(r, "latency_ns") > 0);
    }
  }

  @Test
  void groupSpaceIsTheLoadFactorAtTheFirstFailedInsert() throws IOException {
    var rows = rows("group-space", "series,trace,group_size,cells,records,space_utilisation");
    assertEquals(5 * 3, rows.size());
    Map<Long, Double> mean = new LinkedHashMap<>();
    for (var r : rows) {
      assertEquals((double) l(r, "records") / l(r, "cells"), d(r, "space_utilisation"), 1e-4, r.toString());
      // A group of g cells in level 2 takes the overflow of g level-1 cells: a table cannot fail
      // before one group is full, so at least g + 1 records went in.
      assertTrue(l(r, "records") > l(r, "group_size"), r.toString());
      assertTrue(d(r, "space_utilisation") < 1, r.toString());
      mean.merge(l(r, "group_size"), d(r, "space_utilisation") / 3, Double::sum);
    }
    // Fig. 8b: larger groups share more cells, so they fill further before the first failure.
    assertTrue(mean.get(1024L) > mean.get(64L), mean.toString());
  }

  @Test
  void dashSegmentSizeGivesTheLoadFactorAtTheFirstSplitPerSegmentSize() throws IOException {
    var rows = rows("dash-segment-size", "series,stash_buckets,normal_buckets,segment_kib,seed,records,load_factor");
    // stash 2 and 4: 2 seeds and the table; the four technique series without a stash: 2 seeds; 4..512 normal buckets
    assertEquals(2 * 8 * (2 + 1) + 4 * 8 * 2, rows.size());
    Map<String, Double> firstSplit = new LinkedHashMap<>();
    Map<String, Double> bySeries = new LinkedHashMap<>();
    for (var r : rows) {
      long normal = l(r, "normal_buckets");
      long stash = l(r, "stash_buckets");
      assertEquals(normal / 4.0, d(r, "segment_kib"), 1e-9, r.toString());
      assertTrue(d(r, "load_factor") > 0 && d(r, "load_factor") <= 1, r.toString());
      String series = r.get("series");
      if (series.startsWith("first split")) {
        long slots = (normal + stash) * 14;
        assertEquals((double) l(r, "records") / slots, d(r, "load_factor"), 1e-4, r.toString());
        bySeries.merge(series, d(r, "load_factor"), Double::sum);
        if (stash == 0) {
          // Bucketized splits at its first full bucket; the others need at least a full pair.
          assertTrue(l(r, "records") >= (series.contains("bucketized") ? 14 : 28), r.toString());
          continue;
        }
        // A segment splits only when the key's two buckets and every stash bucket are full.
        assertTrue(l(r, "records") >= (2 + stash) * 14, r.toString());
        firstSplit.merge(stash + "/" + normal, d(r, "load_factor") / 2, Double::sum);
      } else {
        assertEquals(4_000, l(r, "records"), r.toString());
      }
    }
    // Fig. 11's bars: every technique added holds more records before the first split (summed over sizes and seeds).
    String[] order = {"bucketized", "+probing", "+balanced insert", "+displacement", "stashBuckets=2"};
    for (int i = 1; i < order.length; i++) {
      double below = bySeries.get("first split (" + order[i - 1] + ")");
      double above = bySeries.get("first split (" + order[i] + ")");
      assertTrue(above > below, order[i] + " " + above + " vs " + order[i - 1] + " " + below);
    }
    // Fig. 11: larger segments split earlier (one full bucket pair splits them all).
    for (long stash : new long[] {2, 4}) {
      assertTrue(firstSplit.get(stash + "/4") > firstSplit.get(stash + "/512"), firstSplit.toString());
    }
  }

  @Test
  void groupRecoveryRecoversEveryRecordAtEachSize() throws IOException {
    var rows = rows("group-recovery", "scheme,durability,cells,table_mib,records,fill_ms,recovery_ms,fastest_ms,recovery_percent,records_after");
    assertEquals(2, rows.size());
    for (var r : rows) {
      assertEquals(l(r, "cells") / 2, l(r, "records"));
      assertEquals(l(r, "records"), l(r, "records_after"));
      assertEquals(l(r, "cells") * 16 / (double) (1 << 20), d(r, "table_mib"), 1e-4);
      assertTrue(d(r, "fastest_ms") <= d(r, "recovery_ms") && d(r, "fastest_ms") > 0, r.toString());
      assertEquals(100 * d(r, "recovery_ms") / d(r, "fill_ms"), d(r, "recovery_percent"), 0.01 * d(r, "recovery_percent") + 1e-3);
    }
  }

  @Test
  void eshLoadFactorCurvesPerBucketsPerSegment() throws IOException {
    var rows = rows("esh-load-factor", "series,records,load_factor");
    assertEquals(List.of("esh (bucketsPerSegment=4)", "esh (bucketsPerSegment=16)", "esh (bucketsPerSegment=64)", "cceh", "dash-eh"),
        new ArrayList<>(distinct(rows, "series")));
    assertEquals(5 * 200, rows.size());
    for (String s : distinct(rows, "series")) {
      long last = 0;
      for (var r : rows) {
        if (r.get("series").equals(s)) {
          assertEquals(last + 100, l(r, "records"), r.toString());
          last = l(r, "records");
          assertTrue(d(r, "load_factor") > 0 && d(r, "load_factor") <= 1, r.toString());
        }
      }
    }
  }

  @Test
  void eshScalingRunsEveryPhaseOfEverySchemeOnOneAndTwoThreads() throws IOException {
    var rows = rows("esh-scaling", "scheme,durability,threads,phase,ops,seconds,mops,flushes_per_op,drains_per_op,load_factor");
    assertEquals(3 * 2 * 4, rows.size());
    assertEquals(Set.of("esh", "cceh", "dash-eh"), distinct(rows, "scheme"));
    assertEquals(Set.of("1", "2"), distinct(rows, "threads"));
    for (var r : rows) {
      assertEquals(5000, l(r, "ops"));
      if (r.get("phase").startsWith("search")) {
        assertEquals(0.0, d(r, "flushes_per_op"), r.toString());
        assertEquals(0.0, d(r, "drains_per_op"), r.toString());
      } else {
        assertTrue(d(r, "drains_per_op") >= 1, "every insert and delete persists: " + r);
      }
    }
  }

  @Test
  void eshRecoveryOpensEveryCrashImageWithAllItsRecords() throws IOException {
    var rows = rows("esh-recovery", "scheme,durability,records,recovery_ms,records_after");
    assertEquals(3 * 2, rows.size());
    for (var r : rows) {
      assertEquals(l(r, "records"), l(r, "records_after"));
      assertTrue(d(r, "recovery_ms") > 0);
    }
  }

  @Test
  void nvlhValueSizeComparesNvlhWithBothNvdhs() throws IOException {
    var rows = rows("nvlh-value-size", "series,value_bytes,phase,ops,seconds,mops,p999_ns,max_ns,flushes_per_op,drains_per_op");
    assertEquals(3 * 2 * 4, rows.size());
    assertEquals(Set.of("nvlh", "nvdh", "nvdh (transactions=1)"), distinct(rows, "series"));
    assertEquals(Set.of("8", "64"), distinct(rows, "value_bytes"));
    for (var r : rows) {
      assertEquals(2000, l(r, "ops"));
      assertTrue(l(r, "max_ns") >= l(r, "p999_ns") && l(r, "p999_ns") > 0, r.toString());
      if (r.get("phase").startsWith("search")) {
        assertEquals(0.0, d(r, "flushes_per_op"), r.toString());
      } else if (r.get("phase").equals("insert")) {
        // The value block's line(s), the allocator's step and the table's own persists.
        assertTrue(d(r, "flushes_per_op") > 1 + l(r, "value_bytes") / 64, r.toString());
      }
    }
  }

  @Test
  void chartsDrawEveryExperiment() throws IOException {
    Path images = dir.resolve("img");
    Path doc = dir.resolve("benchmarks.md");
    Charts.main(new String[] {"--results", out.toString(), "--images", images.toString(), "--doc", doc.toString()});
    String md = Files.readString(doc);
    for (String n : NAMES) {
      assertTrue(md.contains("\n### " + n + "\n"), n);
    }
    assertTrue(md.contains("](img/group-latency.png)") && md.contains("](img/group-size-sweep.png)")
        && md.contains("](img/group-space.png)") && md.contains("](img/group-recovery.png)")
        && md.contains("](img/esh-load-factor.png)") && md.contains("](img/esh-scaling-insert.png)")
        && md.contains("](img/nvlh-value-size-insert.png)") && md.contains("](img/dash-segment-size.png)") && md.contains("](img/nvlh-value-size-delete-max.png)"), md);
    assertTrue(!md.contains("No rows") && !md.contains("(no chart for columns"), md);
    for (String png : List.of("group-latency", "group-size-sweep", "group-space", "group-recovery", "esh-load-factor",
        "esh-recovery", "esh-scaling-searchpos", "nvlh-value-size-searchpos-max")) {
      assertTrue(Files.size(images.resolve(png + ".png")) > 1000, png);
    }
  }
}
