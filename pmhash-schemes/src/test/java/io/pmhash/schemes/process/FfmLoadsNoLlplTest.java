package io.pmhash.schemes.process;

import static org.junit.jupiter.api.Assertions.assertEquals;
import static org.junit.jupiter.api.Assertions.assertFalse;
import static org.junit.jupiter.api.Assertions.assertTrue;

import io.pmhash.core.Durability;
import io.pmhash.map.LongHashTable;
import io.pmhash.map.PmHash;
import io.pmhash.map.TableOptions;
import java.io.File;
import java.nio.charset.StandardCharsets;
import java.nio.file.Path;
import java.util.List;
import java.util.concurrent.CompletableFuture;
import java.util.stream.Collectors;
import java.util.stream.Stream;
import org.junit.jupiter.api.Test;
import org.junit.jupiter.api.io.TempDir;

/**
 * The llpl backend stays out of the default path: a child JVM with pmhash-llpl and llpl on its
 * class path, and no flag for {@code sun.misc.Unsafe}, creates, fills and reopens an FFM table;
 * no llpl class is loaded ({@code -verbose:class}) and nothing is printed on stderr. The control
 * case runs the same child on the llpl backend and sees both llpl's classes and JDK 25's
 * {@code sun.misc.Unsafe} warning, so the check can fail.
 */
class FfmLoadsNoLlplTest {
  @TempDir Path dir;

  /** Child: creates a dash-eh table on the backend named in args[1], writes, closes, reopens. */
  public static final class Child {
    private Child() {}

    /**
     * @param args pool file, backend
     */
    public static void main(String[] args) throws Exception {
      Path file = Path.of(args[0]);
      TableOptions o = TableOptions.scheme("dash-eh").withDurability(Durability.PMEM_EMULATED).withBackend(args[1]);
      try (LongHashTable t = PmHash.create(file, o)) {
        for (long k = 1; k <= 10_000; k++) {
          t.put(k, k);
        }
      }
      try (LongHashTable t = PmHash.open(file, TableOptions.any().withDurability(Durability.PMEM_EMULATED))) {
        System.out.println("size " + t.size());
      }
    }
  }

  private record Run(int exit, List<String> stdout, String stderr) {}

  private Run run(String backend) throws Exception {
    String java = ProcessHandle.current().info().command().orElseThrow();
    String testClasses = Path.of(Child.class.getProtectionDomain().getCodeSource().getLocation().toURI()).toString();
    String cp = Stream.of(testClasses, System.getProperty("jdk.module.path", ""), System.getProperty("java.class.path", ""))
        .filter(s -> !s.isEmpty()).collect(Collectors.joining(File.pathSeparator));
    // -Djava.util.logging: the pool's INFO lines would go to stderr; only warnings are of interest.
    Process p = new ProcessBuilder(java, "--enable-native-access=ALL-UNNAMED", "-verbose:class",
        "-Djava.util.logging.config.file=" + writeLoggingConfig(), "-cp", cp, Child.class.getName(),
        dir.resolve(backend + ".pool").toString(), backend).start();
    CompletableFuture<String> err = CompletableFuture.supplyAsync(() -> {
      try {
        return new String(p.getErrorStream().readAllBytes(), StandardCharsets.UTF_8);
      } catch (java.io.IOException e) {
        throw new java.io.UncheckedIOException(e);
      }
    });
    List<String> out = new String(p.getInputStream().readAllBytes(), StandardCharsets.UTF_8).lines().toList();
    return new Run(p.waitFor(), out, err.get());
  }

  private String writeLoggingConfig() throws Exception {
    Path f = dir.resolve("logging.properties");
    java.nio.file.Files.writeString(f, "handlers=java.util.logging.ConsoleHandler\n.level=WARNING\n");
    return f.toString();
  }

  private static boolean loadsLlpl(Run r) {
    return r.stdout().stream().anyMatch(l -> l.contains("com.intel.pmem.llpl"));
  }

  @Test
  void anFfmTableLoadsNoLlplClassAndPrintsNothing() throws Exception {
    Run r = run("ffm");
    assertEquals(0, r.exit(), r.stderr());
    assertTrue(r.stdout().contains("size 10000"), "the child ran");
    assertFalse(loadsLlpl(r), "an FFM table must not load llpl");
    assertEquals("", r.stderr(), "an FFM table prints nothing on stderr");
  }

  @Test
  void theControlOnLlplLoadsItAndShowsTheUnsafeWarning() throws Exception {
    Run r = run("llpl");
    System.out.println("stderr of a JVM that uses the llpl backend without --sun-misc-unsafe-memory-access=allow:\n" + r.stderr());
    assertEquals(0, r.exit(), r.stderr());
    assertTrue(r.stdout().contains("size 10000"), "the child ran");
    assertTrue(loadsLlpl(r), "the llpl backend loads llpl");
    assertTrue(r.stderr().contains("sun.misc.Unsafe"), "JDK 23+ warns about llpl's sun.misc.Unsafe calls: " + r.stderr());
  }
}
