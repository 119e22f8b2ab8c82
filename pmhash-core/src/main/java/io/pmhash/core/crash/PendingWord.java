package io.pmhash.core.crash;

/**
 * An aligned 8-byte word that may or may not be durable at a crash point, with the values a
 * crash may leave in it. Values are the word's bytes read in native byte order, as {@link
 * java.lang.foreign.ValueLayout#JAVA_LONG} reads them from the pool.
 *
 * @param offset pool offset of the word, a multiple of 8
 * @param durable the value the durable shadow holds: what survives if the word was not written
 *     back since the last drain that covered it
 * @param current the value in memory now
 * @param flushed whether the word's line was flushed since the last drain
 * @param flushedValue the value the word had when its line was last flushed; meaningful only
 *     when {@code flushed}
 */
public record PendingWord(long offset, long durable, long current, boolean flushed, long flushedValue) {
  /**
   * The distinct values a crash may leave in this word, durable first, then the flushed value,
   * then the current one.
   *
   * @return one to three distinct values
   */
  public long[] candidates() {
    long[] out = new long[3];
    int n = 0;
    out[n++] = durable;
    if (flushed && flushedValue != durable) {
      out[n++] = flushedValue;
    }
    if (current != durable && (!flushed || current != flushedValue)) {
      out[n++] = current;
    }
    return n == 3 ? out : java.util.Arrays.copyOf(out, n);
  }

  @Override
  public String toString() {
    return String.format(
        "word@0x%x durable=0x%x current=0x%x%s",
        offset, durable, current, flushed ? String.format(" flushed=0x%x", flushedValue) : "");
  }
}
