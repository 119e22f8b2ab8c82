package io.pmhash.stress;

import static org.openjdk.jcstress.annotations.Expect.ACCEPTABLE;
import static org.openjdk.jcstress.annotations.Expect.ACCEPTABLE_INTERESTING;
import static org.openjdk.jcstress.annotations.Expect.FORBIDDEN;

import io.pmhash.core.PoolOptions;
import io.pmhash.core.hash.Hashing;
import io.pmhash.map.LongHashTable;
import io.pmhash.map.PmHash;
import io.pmhash.map.TableOptions;
import java.lang.foreign.MemorySegment;
import java.lang.foreign.ValueLayout;
import java.lang.invoke.VarHandle;
import org.openjdk.jcstress.annotations.Actor;
import org.openjdk.jcstress.annotations.Arbiter;
import org.openjdk.jcstress.annotations.Description;
import org.openjdk.jcstress.annotations.JCStressTest;
import org.openjdk.jcstress.annotations.Outcome;
import org.openjdk.jcstress.annotations.State;
import org.openjdk.jcstress.infra.results.III_Result;
import org.openjdk.jcstress.infra.results.JJ_Result;

/**
 * Publication of a new segment and of a doubled directory to a concurrent reader, on the real
 * dash-eh code: a one-segment table (global depth 0) is filled to the last record that fits
 * without a split; the writer inserts one more, which splits the segment (half its records move
 * to a new segment, Dash §4.5) and doubles the directory (depth 0 to 1). The reader looks up a
 * key that moves to the new segment: it must find it with its value whatever it meets (old
 * directory and old segment, old directory and a side link to the new segment, new directory).
 * It looks again and again until the writer is done (at most 20 000 times, then once more).
 *
 * <p>Outcomes {@code movedBad, addedBad, overlapped}: 1 if any look missed the moved key or saw
 * a wrong value; 1 if any look saw the inserted key with a value other than 2 or absent; 1 if
 * the looks saw the inserted key both absent and present (the race overlapped). The arbiter
 * checks that the trial did split and double. The negative control is a model ({@link
 * PublishBeforeInit}): a segment published before its contents are written.
 */
@JCStressTest
@Description("dash-eh split and directory doubling: a key moving to the new segment is always found.")
@Outcome(id = "0, 0, 1", expect = ACCEPTABLE, desc = "Every look consistent; the looks overlapped the split.")
@Outcome(id = "0, 0, 0", expect = ACCEPTABLE, desc = "Every look consistent; no overlap this time.")
@Outcome(expect = FORBIDDEN, desc = "The moved key lost or a wrong value: the new segment or directory was published unsafely.")
@State
public class SplitPublication {
  /** Keys 1..FILL fit in one segment; key FILL + 1 splits it. */
  static final int FILL = fill();
  /** A key of 1..FILL whose hash starts with bit 1: it moves to the new segment. */
  static final long MOVED = moved();

  static final int MAX_LOOKS = 20_000;

  final LongHashTable table = oneSegmentTable();
  volatile boolean done;

  /** One trial: keys 1..FILL in one segment. */
  public SplitPublication() {
    for (long k = 1; k <= FILL; k++) {
      table.put(k, 1);
    }
  }

  /** Inserts the key that splits the segment and doubles the directory. */
  @Actor
  public void writer() {
    table.put(FILL + 1, 2);
    done = true;
  }

  /**
   * Looks up the moving key and the new one until the writer is done.
   *
   * @param r moved bad, added bad, overlapped
   */
  @Actor
  public void reader(III_Result r) {
    boolean last;
    int looks = 0;
    int absent = 0;
    int present = 0;
    do {
      last = done || ++looks >= MAX_LOOKS;
      if (table.get(MOVED, -1) != 1) {
        r.r1 = 1;
      }
      long v = table.get(FILL + 1, -1);
      if (v == -1) {
        absent = 1;
      } else if (v == 2) {
        present = 1;
      } else {
        r.r2 = 1;
      }
    } while (!last);
    r.r3 = absent & present;
  }

  /** Checks the trial split and doubled, closes its pool. */
  @Arbiter
  public void close() {
    long splits = table.stats().details().get("splits");
    long doublings = table.stats().details().get("doublings");
    table.close();
    if (splits != 1 || doublings != 1) {
      throw new IllegalStateException("the trial did " + splits + " splits and " + doublings + " doublings, not one of each");
    }
  }

  static LongHashTable oneSegmentTable() {
    QuietPools.install();
    return PmHash.createVolatile(TableOptions.scheme("dash-eh")
        .withPoolOptions(PoolOptions.defaults().withInitialSize(1 << 20).withMaxSize(8 << 20)));
  }

  private static int fill() {
    try (LongHashTable t = oneSegmentTable()) {
      for (int k = 1; ; k++) {
        t.put(k, 1);
        if (t.stats().details().get("splits") > 0) {
          return k - 1;
        }
      }
    }
  }

  private static long moved() {
    for (long k = 1; k <= FILL; k++) {
      if (Hashing.hash(k) < 0) {
        return k;
      }
    }
    throw new IllegalStateException("no key of 1.." + FILL + " moves in a split");
  }

  /**
   * Negative control, a model of segment publication: the writer stores the new segment's
   * offset (release) and only then writes the record into it, the order every publication in
   * pmhash forbids (contents, flush, then the link). A reader following the link must sometimes
   * find the segment empty.
   */
  @JCStressTest
  @Description("Negative control (model): a segment linked before its contents are written is seen empty.")
  @Outcome(id = {"0, 0", "1, 1"}, expect = ACCEPTABLE, desc = "Not linked yet, or linked and complete.")
  @Outcome(id = "1, 0", expect = ACCEPTABLE_INTERESTING, desc = "Linked but empty: unsafe publication. Expected to be seen.")
  @Outcome(expect = FORBIDDEN, desc = "Anything else.")
  @State
  public static class PublishBeforeInit {
    static final VarHandle LONG = ValueLayout.JAVA_LONG.varHandle();
    static final long LINK = 0;
    static final long SEGMENT = 64;
    private final MemorySegment memory = MemorySegment.ofArray(new long[16]);

    /** One trial. */
    public PublishBeforeInit() {}

    /** Links the segment, then writes its record. */
    @Actor
    public void writer() {
      LONG.setRelease(memory, LINK, SEGMENT);
      LONG.setRelease(memory, SEGMENT, 1L);
    }

    /**
     * Follows the link.
     *
     * @param r linked (0/1), the record seen
     */
    @Actor
    public void reader(JJ_Result r) {
      long seg = (long) LONG.getAcquire(memory, LINK);
      if (seg != 0) {
        r.r1 = 1;
        r.r2 = (long) LONG.getAcquire(memory, seg);
      }
    }
  }
}
