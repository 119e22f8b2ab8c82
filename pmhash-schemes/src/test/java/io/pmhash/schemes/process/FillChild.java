package io.pmhash.schemes.process;

import io.pmhash.core.Durability;
import io.pmhash.core.PoolFullException;
import io.pmhash.core.PoolOptions;
import io.pmhash.map.LongHashTable;
import io.pmhash.map.PmHash;
import io.pmhash.map.TableOptions;
import java.io.FileOutputStream;
import java.io.PrintStream;
import java.nio.file.Path;

/**
 * The child JVM of {@link DiskFullTest}, started under a file-size limit ({@code ulimit -f}) so
 * that growing the pool fails the way a full disk does (the write returns an error; HotSpot
 * ignores SIGXFSZ). It creates a table, inserts fresh keys until an insert throws, then checks
 * every acknowledged key, removes the first tenth, checks again and closes the pool cleanly.
 * Prints {@code acked N}, {@code refused <exception class>: <message>} and {@code checked} for
 * the parent.
 */
public final class FillChild {
  private FillChild() {}

  static long key(long i) {
    return (i + 1) * 0x9E3779B97F4A7C15L;
  }

  /**
   * @param args pool file, scheme, durability
   */
  public static void main(String[] args) throws Exception {
    Path file = Path.of(args[0]);
    PrintStream out = new PrintStream(new FileOutputStream(java.io.FileDescriptor.out), true);
    Durability mode = Durability.valueOf(args[2]);
    TableOptions options = TableOptions.scheme(args[1]).withDurability(mode)
        .withPoolOptions(PoolOptions.defaults().withDurability(mode).withInitialSize(DiskFullTest.INITIAL_BYTES));
    try (LongHashTable t = PmHash.create(file, options)) {
      long n = 0;
      try {
        for (; ; n++) {
          t.put(key(n), n);
        }
      } catch (PoolFullException | OutOfMemoryError e) {
        out.println("acked " + n);
        out.println("refused " + e.getClass().getName() + ": " + e.getMessage());
      } catch (RuntimeException e) {
        out.println("acked " + n);
        out.println("refused " + e.getClass().getName() + ": " + e.getMessage());
        e.printStackTrace(out);
      }
      for (long i = 0; i < n; i++) {
        if (t.get(key(i), -1) != i) {
          out.println("lost " + i);
          return;
        }
      }
      for (long i = 0; i < n / 10; i++) {
        if (!t.remove(key(i))) {
          out.println("not removed " + i);
          return;
        }
      }
      if (t.size() != n - n / 10) {
        out.println("size " + t.size() + ", expected " + (n - n / 10));
        return;
      }
      out.println("checked");
    }
  }
}
