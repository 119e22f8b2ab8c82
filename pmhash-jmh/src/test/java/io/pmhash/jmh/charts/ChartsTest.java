package io.pmhash.jmh.charts;

import static org.junit.jupiter.api.Assertions.assertEquals;
import static org.junit.jupiter.api.Assertions.assertNotNull;
import static org.junit.jupiter.api.Assertions.assertTrue;

import java.awt.image.BufferedImage;
import java.nio.file.Files;
import java.nio.file.Path;
import javax.imageio.ImageIO;
import org.junit.jupiter.api.Test;
import org.junit.jupiter.api.io.TempDir;

/**
 * The chart command draws a PNG per result and writes the document from the result files: the
 * numbers in the document's tables are the ones in the files, and every chart it links exists
 * and is a readable image with the series' colours in it.
 */
class ChartsTest {
  private static final String JMH = """
      [ { "jmhVersion" : "1.37", "benchmark" : "io.pmhash.jmh.TableBenchmark.insert", "mode" : "thrpt", "threads" : 1,
          "forks" : 1, "jdkVersion" : "25", "vmName" : "VM", "vmVersion" : "25", "warmupIterations" : 1,
          "warmupTime" : "1 s", "measurementIterations" : 2, "measurementTime" : "1 s",
          "params" : { "durability" : "VOLATILE", "keys" : "uniform", "records" : "1000", "scheme" : "dash-eh" },
          "primaryMetric" : { "score" : 3.25, "scoreError" : "NaN", "scoreUnit" : "ops/us" } },
        { "jmhVersion" : "1.37", "benchmark" : "io.pmhash.jmh.RocksDbBenchmark.insert", "mode" : "thrpt", "threads" : 1,
          "forks" : 1, "jdkVersion" : "25", "vmName" : "VM", "vmVersion" : "25", "warmupIterations" : 1,
          "warmupTime" : "1 s", "measurementIterations" : 2, "measurementTime" : "1 s",
          "params" : { "keys" : "uniform", "records" : "1000" },
          "primaryMetric" : { "score" : 0.5, "scoreError" : 0.125, "scoreUnit" : "ops/us" } } ]
      """;

  private static final String RECOVERY = """
      # experiment: dash-recovery
      # durability: PMEM_EMULATED
      # machine: test machine
      scheme,durability,records,recovery_ms,records_after
      dash-eh,PMEM_EMULATED,1000,12.5000,1000
      dash-eh,PMEM_EMULATED,2000,13.0000,2000
      cceh,PMEM_EMULATED,1000,20.0000,1000
      cceh,PMEM_EMULATED,2000,40.0000,2000
      """;

  @Test
  void drawsEveryResultAndTabulatesItsNumbers(@TempDir Path dir) throws Exception {
    Path results = Files.createDirectories(dir.resolve("results"));
    Files.writeString(results.resolve("maps.json"), JMH);
    Files.writeString(results.resolve("dash-recovery.csv"), RECOVERY);
    Files.writeString(results.resolve("machine.txt"), "cpu: test cpu\ncores: 2\n");
    Path images = dir.resolve("img");
    Path doc = dir.resolve("benchmarks.md");
    Charts.main(new String[] {"--results", results.toString(), "--images", images.toString(), "--doc", doc.toString()});

    String md = Files.readString(doc);
    assertTrue(md.contains("not persistent-memory numbers"), "the DRAM disclaimer");
    assertTrue(md.contains("- cpu: test cpu"), "the machine");
    assertTrue(md.contains("| pmhash dash-eh VOLATILE | 3.250 |"), md);
    assertTrue(md.contains("| RocksDb | 0.500 ± 0.125 |"), md);
    assertTrue(md.contains("| cceh | PMEM_EMULATED | 2000 | 40.0000 | 2000 | "), md);
    assertTrue(md.contains("](img/maps-0.png)") && md.contains("](img/dash-recovery.png)"), md);

    BufferedImage bars = ImageIO.read(images.resolve("maps-0.png").toFile());
    BufferedImage lines = ImageIO.read(images.resolve("dash-recovery.png").toFile());
    assertNotNull(bars);
    assertNotNull(lines);
    assertEquals(960, bars.getWidth());
    assertTrue(contains(bars, 0x1f77b4) && contains(bars, 0xd62728), "both series' bars are drawn");
    assertTrue(contains(lines, 0x1f77b4) && contains(lines, 0xd62728), "both series' lines are drawn");
  }

  @Test
  void aResultTakenWithMoreLoadThanCoresIsLabelledBusy() {
    String busy = Charts.busy(java.util.Map.of("machine", "cpu, 2 cores, 23 GiB RAM", "load average", "7.20 8.53 6.50 (1, 5, 15 min)"));
    assertTrue(busy != null && busy.contains("busy machine: load average 7.2 on 2 cores"), busy);
    assertEquals(null, Charts.busy(java.util.Map.of("machine", "cpu, 2 cores", "load average", "0.80 0.60 0.30")));
    assertEquals(null, Charts.busy(java.util.Map.of("machine", "cpu, 2 cores")), "no load average recorded: no claim");
  }

  @Test
  void niceAxisMaximaAndLabels() {
    assertEquals(5.0, Chart.niceMax(4.2));
    assertEquals(250.0, Chart.niceMax(201));
    assertEquals(1.0, Chart.niceMax(0));
    assertEquals(1.25, Chart.niceMax(1.0));
    assertEquals(2.0, Chart.niceMax(1.3));
    assertEquals("4M", Chart.format(4_000_000));
    assertEquals("2.5M", Chart.format(2_500_000));
    assertEquals("0.25", Chart.format(0.25));
    assertEquals("1.25", Chart.format(1.25));
    assertEquals("2.5", Chart.format(2.5));
  }

  private static boolean contains(BufferedImage img, int rgb) {
    for (int y = 0; y < img.getHeight(); y++) {
      for (int x = 0; x < img.getWidth(); x++) {
        if ((img.getRGB(x, y) & 0xFFFFFF) == rgb) {
          return true;
        }
      }
    }
    return false;
  }
}
