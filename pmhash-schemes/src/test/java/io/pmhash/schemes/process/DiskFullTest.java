package io.pmhash.schemes.process;

import static org.junit.jupiter.api.Assertions.assertEquals;
import static org.junit.jupiter.api.Assertions.assertTrue;

import io.pmhash.core.Durability;
import io.pmhash.core.PoolFullException;
import io.pmhash.core.crash.Evidence;
import io.pmhash.map.LongHashTable;
import io.pmhash.map.PmHash;
import io.pmhash.map.TableOptions;
import java.io.File;
import java.nio.charset.StandardCharsets;
import java.nio.file.Files;
import java.nio.file.Path;
import java.util.List;
import java.util.concurrent.TimeUnit;
import java.util.stream.Collectors;
import java.util.stream.Stream;
import org.junit.jupiter.api.io.TempDir;
import org.junit.jupiter.params.ParameterizedTest;
import org.junit.jupiter.params.provider.MethodSource;

/**
 * The disk fills up while the pool grows: a child JVM ({@link FillChild}) runs under a file-size
 * limit above the pool's initial size, so a growth past it fails as on a full file system (the
 * pool then takes what is left, a chunk at a time, until nothing is). Every scheme must report it as {@link PoolFullException} from the insert that
 * needed the room, keep every acknowledged record, go on serving reads and deletes, and close
 * cleanly; the file is left no longer than the limit. Reopened without the limit, the table holds
 * exactly what the child acknowledged and grows past the old limit.
 */
class DiskFullTest {
  /** The child's pool starts at 8 MiB and grows by quarters until the limit stops it. */
  static final long INITIAL_BYTES = 8L << 20;

  static final long LIMIT_KIB = 24 * 1024;

  @TempDir Path dir;

  static Stream<String> schemes() {
    return PmHash.schemes().keySet().stream();
  }

  @ParameterizedTest(name = "{0}")
  @MethodSource("schemes")
  void aFullDiskRefusesTheInsertAndLosesNothing(String scheme) throws Exception {
    Path file = dir.resolve(scheme + ".pool");
    String java = ProcessHandle.current().info().command().orElseThrow();
    String testClasses = Path.of(FillChild.class.getProtectionDomain().getCodeSource().getLocation().toURI()).toString();
    String cp = Stream.of(testClasses, System.getProperty("jdk.module.path", ""), System.getProperty("java.class.path", ""))
        .filter(s -> !s.isEmpty()).collect(Collectors.joining(File.pathSeparator));
    // bash's ulimit -f counts KiB; exec keeps the limit for the JVM
    Process child = new ProcessBuilder("bash", "-c", "ulimit -f " + LIMIT_KIB + " && exec \"$0\" \"$@\"",
        java, "--enable-native-access=ALL-UNNAMED", "-cp", cp, FillChild.class.getName(),
        file.toString(), scheme, Durability.PROCESS.name()).redirectErrorStream(true).start();
    String output = new String(child.getInputStream().readAllBytes(), StandardCharsets.UTF_8);
    assertTrue(child.waitFor(5, TimeUnit.MINUTES), "the child finishes");
    System.out.println("DiskFullTest " + scheme + ": " + output.lines().filter(l -> l.startsWith("acked") || l.startsWith("refused")).toList());
    assertEquals(0, child.exitValue(), output);
    List<String> lines = output.lines().toList();
    long acked = lines.stream().filter(l -> l.startsWith("acked ")).mapToLong(l -> Long.parseLong(l.substring(6))).findFirst()
        .orElseThrow(() -> new AssertionError("no acked line: " + output));
    assertTrue(lines.stream().anyMatch(l -> l.startsWith("refused " + PoolFullException.class.getName() + ": ")),
        "the insert that needed room is refused with PoolFullException: " + output);
    assertTrue(lines.contains("checked"), "the child read back every record, removed a tenth and closed: " + output);
    assertTrue(acked > 100_000, "the pool took records before it was full: " + acked);
    assertTrue(Files.size(file) <= LIMIT_KIB * 1024, "the file is no longer than the limit: " + Files.size(file));

    try (LongHashTable t = PmHash.open(file, TableOptions.scheme(scheme).withDurability(Durability.PROCESS))) {
      assertEquals(acked - acked / 10, t.size());
      for (long i = 0; i < acked; i++) {
        assertEquals(i < acked / 10 ? -1 : i, t.get(FillChild.key(i), -1), "key " + i);
      }
      for (long i = acked; i < 2 * acked; i++) {
        t.put(FillChild.key(i), i);
      }
      assertEquals(2 * acked - acked / 10, t.size());
      assertTrue(Files.size(file) > LIMIT_KIB * 1024, "without the limit the pool grows past it");
    }
    Evidence.record("bad input", scheme, "diskFullRuns", 1, "recordsKeptAtFull", acked);
  }
}
