package io.pmhash.core.crash;

import io.pmhash.core.Persistence;
import java.io.IOException;
import java.lang.foreign.MemorySegment;
import java.lang.foreign.ValueLayout;
import java.nio.file.Path;
import java.util.ArrayList;
import java.util.Arrays;
import java.util.HashMap;
import java.util.List;
import java.util.Map;
import java.util.Set;
import java.util.concurrent.atomic.AtomicReference;

/**
 * A {@link Persistence} that models what of the pool's memory is durable, at flush and drain
 * granularity, so that tests can materialise the images a crash may leave. Pass it with {@code
 * PoolOptions.withPersistence(() -> simulator)}; {@link CrashHarness} does that for a scheme's
 * crash tests. See the {@linkplain io.pmhash.core.crash package documentation} for the model and
 * its limits.
 *
 * <ul>
 *   <li>The <em>durable shadow</em> starts as the memory the pool maps (the file at open) and
 *       grows with zeros when the pool grows.
 *   <li>{@link #flush} snapshots each 64-byte line in the range: flushed, not yet drained.
 *   <li>{@link #drain} first offers a crash point to the {@link CrashPointListener} (a crash
 *       just before the drain completes), then copies the snapshots into the shadow: a store
 *       made to a line after its flush is not made durable by this drain.
 *   <li>At a crash point every aligned 8-byte word whose current or flushed value differs from
 *       the shadow is {@linkplain #pendingWords() pending}: any of its candidate values may be on
 *       the media.
 * </ul>
 *
 * <p><b>Single-threaded.</b> One thread flushes and drains (the first to do so); a flush or
 * drain from another thread throws {@link IllegalStateException}. The query methods may be
 * called at any time from that thread, and from a {@link CrashPointListener} while the workload
 * is stopped at a crash point.
 */
public final class CrashSimulator extends Persistence {
  /** Receives the crash points of an {@linkplain #arm() armed} simulator. */
  @FunctionalInterface
  public interface CrashPointListener {
    /**
     * Called at a crash point, on the workload's thread, while it is stopped there. The
     * simulator's query methods describe the state a crash would see; the listener must not
     * write the pool.
     *
     * @param simulator the simulator at its crash point
     * @param drainIndex the index (from 0) of the drain about to complete when {@code
     *     beforeDrain}; otherwise the number of drains so far
     * @param beforeDrain true at a drain, false at a point offered with {@link
     *     #offerCrashPoint()} (the end of a workload)
     */
    void crashPoint(CrashSimulator simulator, int drainIndex, boolean beforeDrain);
  }

  private static final ValueLayout.OfLong WORD = ValueLayout.JAVA_LONG;
  private static final ValueLayout.OfLong WORD_UNALIGNED = ValueLayout.JAVA_LONG_UNALIGNED;
  private static final int LINE_SHIFT = 6;
  private static final int WORDS_PER_LINE = CACHE_LINE / Long.BYTES;

  private final AtomicReference<Thread> owner = new AtomicReference<>();
  /** Line index to the line's words when it was last flushed since the last drain. */
  private final Map<Long, long[]> flushedLines = new HashMap<>();

  private MemorySegment memory;
  private long[] shadow;
  private MemorySegment shadowSegment;
  private int drains;
  private CrashPointListener listener;
  private boolean armed;
  private boolean atCrashPoint;
  private List<PendingWord> pendingAtCrashPoint;
  /** Set by the harness on a simulator that runs a recovery: {@link CrashHarness#recovered} ends its crash points. */
  boolean recoveryRun;

  /** A simulator without a listener, disarmed: it models durability and offers no crash points. */
  public CrashSimulator() {}

  /**
   * Sets who receives crash points.
   *
   * @param l the listener, or null for none
   * @return this simulator
   */
  public CrashSimulator onCrashPoint(CrashPointListener l) {
    this.listener = l;
    return this;
  }

  /** Drains from now on are crash points (when a listener is set). */
  public void arm() {
    armed = true;
  }

  /** Drains from now on are not crash points; the model is still kept. */
  public void disarm() {
    armed = false;
  }

  /** @return whether drains are crash points */
  public boolean armed() {
    return armed;
  }

  /**
   * Offers a crash point that is not at a drain: a crash right now, after every drain so far.
   * The harness offers one at the end of a workload and at the end of a recovery. Does nothing
   * unless armed and a listener is set.
   */
  public void offerCrashPoint() {
    checkOwner("offerCrashPoint");
    crashPoint(false);
  }

  /** @return the number of drains seen since the pool was first mapped */
  public int drains() {
    return drains;
  }

  /** @return the size of the modelled pool: its current mapping */
  public long size() {
    requireMapped();
    return memory.byteSize();
  }

  // ---------------------------------------------------------------- Persistence

  @Override
  protected void mapped(MemorySegment mapping) {
    if (mapping.byteSize() % CACHE_LINE != 0) {
      throw new IllegalArgumentException(
          "the crash simulator models whole cache lines; a mapping of " + mapping.byteSize()
              + " bytes is not a multiple of " + CACHE_LINE);
    }
    if (memory == null) {
      long words = mapping.byteSize() / Long.BYTES;
      if (words > Integer.MAX_VALUE - 8) {
        throw new IllegalArgumentException(
            "the crash simulator keeps its shadow on the Java heap; a pool of "
                + mapping.byteSize() + " bytes is too large for it");
      }
      shadow = new long[(int) words];
      shadowSegment = MemorySegment.ofArray(shadow);
      MemorySegment.copy(mapping, 0, shadowSegment, 0, mapping.byteSize());
    } else if (mapping.byteSize() > shadowSegment.byteSize()) {
      // The grown tail is zero-filled in the file before it is mapped: zeros on the media too.
      long words = mapping.byteSize() / Long.BYTES;
      if (words > Integer.MAX_VALUE - 8) {
        throw new IllegalArgumentException(
            "the crash simulator keeps its shadow on the Java heap; a pool of "
                + mapping.byteSize() + " bytes is too large for it");
      }
      shadow = Arrays.copyOf(shadow, (int) words);
      shadowSegment = MemorySegment.ofArray(shadow);
    } else if (mapping.byteSize() < shadowSegment.byteSize()) {
      throw new IllegalArgumentException(
          "a pool mapping never shrinks: " + mapping.byteSize() + " < " + shadowSegment.byteSize());
    }
    memory = mapping;
  }

  @Override
  protected void flushLines(long offset, long length) {
    checkOwner("flush");
    requireMapped();
    MutationSession mutation = MutationSession.current();
    if (mutation != null && mutation.skip(false, armed)) {
      return; // a mutation check deleted this flush
    }
    if (offset < 0 || offset + length > memory.byteSize()) {
      throw new IllegalArgumentException(
          "flush of [" + offset + ", " + (offset + length) + ") lies outside the pool of "
              + memory.byteSize() + " bytes");
    }
    long first = offset >>> LINE_SHIFT;
    long last = (offset + length - 1) >>> LINE_SHIFT;
    for (long line = first; line <= last; line++) {
      long[] words = new long[WORDS_PER_LINE];
      long base = line << LINE_SHIFT;
      for (int w = 0; w < WORDS_PER_LINE; w++) {
        words[w] = memory.get(WORD, base + (long) w * Long.BYTES);
      }
      flushedLines.put(line, words);
    }
  }

  @Override
  protected void drainFlushes() {
    checkOwner("drain");
    requireMapped();
    MutationSession mutation = MutationSession.current();
    if (mutation != null && mutation.skip(true, armed)) {
      return; // a mutation check deleted this drain: no crash point, nothing made durable
    }
    crashPoint(true);
    for (Map.Entry<Long, long[]> e : flushedLines.entrySet()) {
      System.arraycopy(e.getValue(), 0, shadow, (int) (e.getKey() * WORDS_PER_LINE), WORDS_PER_LINE);
    }
    flushedLines.clear();
    drains++;
  }

  @Override
  public String describe() {
    return "crash simulator (durable shadow at flush/drain granularity, single-threaded)";
  }

  private void crashPoint(boolean beforeDrain) {
    CrashPointListener l = listener;
    if (!armed || l == null) {
      return;
    }
    atCrashPoint = true;
    pendingAtCrashPoint = null;
    try {
      l.crashPoint(this, drains, beforeDrain);
    } finally {
      atCrashPoint = false;
      pendingAtCrashPoint = null;
    }
  }

  private void checkOwner(String what) {
    Thread me = Thread.currentThread();
    Thread first = owner.compareAndExchange(null, me);
    if (first != null && first != me) {
      throw new IllegalStateException(
          "the crash simulator models single-threaded workloads: " + what + " from thread '"
              + me.getName() + "' but thread '" + first.getName()
              + "' flushed or drained first; run the workload on one thread");
    }
  }

  private void requireMapped() {
    if (memory == null) {
      throw new IllegalStateException("the crash simulator has not been given a pool mapping yet");
    }
  }

  // ---------------------------------------------------------------- queries

  /**
   * @param offset a pool offset, a multiple of 8
   * @return the word's value in the durable shadow
   */
  public long durableWord(long offset) {
    requireMapped();
    return shadowSegment.get(WORD, offset);
  }

  /**
   * @param offset a pool offset, a multiple of 8
   * @return the word's value in memory now
   */
  public long currentWord(long offset) {
    requireMapped();
    return memory.get(WORD, offset);
  }

  /**
   * The words a crash now may leave with another value than the durable shadow's, in
   * increasing offset order: those whose current value differs from the shadow, and those whose
   * flushed-but-undrained value does.
   *
   * @return the pending words (an unmodifiable list)
   */
  public List<PendingWord> pendingWords() {
    requireMapped();
    if (atCrashPoint && pendingAtCrashPoint != null) {
      return pendingAtCrashPoint;
    }
    List<PendingWord> out = computePending();
    if (atCrashPoint) {
      pendingAtCrashPoint = out;
    }
    return out;
  }

  private List<PendingWord> computePending() {
    long size = memory.byteSize();
    List<Long> offsets = new ArrayList<>();
    for (long pos = 0; pos < size; ) {
      long m = MemorySegment.mismatch(shadowSegment, pos, size, memory, pos, size);
      if (m < 0) {
        break;
      }
      long word = (pos + m) & ~7L;
      offsets.add(word);
      pos = word + Long.BYTES;
    }
    // Words that were stored, flushed, then stored back to their durable value.
    boolean added = false;
    for (Map.Entry<Long, long[]> e : flushedLines.entrySet()) {
      long base = e.getKey() << LINE_SHIFT;
      long[] words = e.getValue();
      for (int w = 0; w < WORDS_PER_LINE; w++) {
        long off = base + (long) w * Long.BYTES;
        if (words[w] != durableWord(off) && currentWord(off) == durableWord(off)) {
          offsets.add(off);
          added = true;
        }
      }
    }
    if (added) {
      offsets.sort(null);
    }
    List<PendingWord> out = new ArrayList<>(offsets.size());
    for (long off : offsets) {
      long[] line = flushedLines.get(off >>> LINE_SHIFT);
      boolean flushed = line != null;
      long flushedValue = flushed ? line[(int) ((off >>> 3) & (WORDS_PER_LINE - 1))] : 0;
      out.add(new PendingWord(off, durableWord(off), currentWord(off), flushed, flushedValue));
    }
    return List.copyOf(out);
  }

  /**
   * @return the number of cache lines whose current content differs from the durable shadow:
   *     the number of {@link ImageKind#EACH_LINE} images a crash point has without a cap
   */
  public int dirtyLineCount() {
    int n = 0;
    long previous = -1;
    for (PendingWord w : pendingWords()) {
      long line = w.offset() >>> LINE_SHIFT;
      if (w.current() != w.durable() && line != previous) {
        n++;
        previous = line;
      }
    }
    return n;
  }

  // ---------------------------------------------------------------- images

  /** @return the {@link ImageKind#DRAINED} image: the durable shadow alone */
  public CrashImage drainedImage() {
    return new CrashImage(ImageKind.DRAINED, 0, -1, size(), new long[0], new long[0]);
  }

  /** @return the {@link ImageKind#ALL_PENDING} image: every pending word at its current value */
  public CrashImage allPendingImage() {
    List<PendingWord> pending = pendingWords();
    long[] offsets = new long[pending.size()];
    long[] values = new long[pending.size()];
    int n = 0;
    for (PendingWord w : pending) {
      if (w.current() != w.durable()) {
        offsets[n] = w.offset();
        values[n++] = w.current();
      }
    }
    return new CrashImage(ImageKind.ALL_PENDING, 0, -1, size(), Arrays.copyOf(offsets, n), Arrays.copyOf(values, n));
  }

  /**
   * The {@link ImageKind#EACH_LINE} images: for each line whose current content differs from the
   * durable shadow, in increasing offset order, the shadow with that line's current words.
   *
   * @param cap the most images to return (the first lines); {@link #dirtyLineCount()} tells
   *     whether lines were left out
   * @return up to {@code cap} images
   */
  public List<CrashImage> eachLineImages(int cap) {
    if (cap < 0) {
      throw new IllegalArgumentException("cap must not be negative, got " + cap);
    }
    List<CrashImage> out = new ArrayList<>();
    List<PendingWord> pending = pendingWords();
    long size = size();
    int i = 0;
    while (i < pending.size() && out.size() < cap) {
      long line = pending.get(i).offset() >>> LINE_SHIFT;
      long[] offsets = new long[WORDS_PER_LINE];
      long[] values = new long[WORDS_PER_LINE];
      int n = 0;
      for (; i < pending.size() && pending.get(i).offset() >>> LINE_SHIFT == line; i++) {
        PendingWord w = pending.get(i);
        if (w.current() != w.durable()) {
          offsets[n] = w.offset();
          values[n++] = w.current();
        }
      }
      if (n > 0) {
        out.add(new CrashImage(ImageKind.EACH_LINE, 0, line << LINE_SHIFT, size, Arrays.copyOf(offsets, n), Arrays.copyOf(values, n)));
      }
    }
    return out;
  }

  /**
   * A {@link ImageKind#RANDOM} image: each pending word independently takes one of its {@link
   * PendingWord#candidates() candidates}, drawn with a SplitMix64 generator seeded with {@code
   * seed}. The same seed at the same crash point gives the same image, on every JDK.
   *
   * @param seed the seed, reported by {@link CrashImage#seed()}
   * @return the image
   */
  public CrashImage randomImage(long seed) {
    List<PendingWord> pending = pendingWords();
    long[] offsets = new long[pending.size()];
    long[] values = new long[pending.size()];
    int n = 0;
    long state = seed;
    for (PendingWord w : pending) {
      long[] candidates = w.candidates();
      state += 0x9E3779B97F4A7C15L;
      long pick = candidates[(int) Long.remainderUnsigned(mix64(state), candidates.length)];
      if (pick != w.durable()) {
        offsets[n] = w.offset();
        values[n++] = pick;
      }
    }
    return new CrashImage(ImageKind.RANDOM, seed, -1, size(), Arrays.copyOf(offsets, n), Arrays.copyOf(values, n));
  }

  /**
   * The images of the given kinds, in the order DRAINED, ALL_PENDING, EACH_LINE, RANDOM, without
   * duplicates (an image with the same words as an earlier one is left out, e.g. ALL_PENDING when
   * nothing is pending).
   *
   * @param kinds the kinds wanted
   * @param eachLineCap the most {@link ImageKind#EACH_LINE} images
   * @param randomSeeds the seeds of the {@link ImageKind#RANDOM} images (used when RANDOM is
   *     among the kinds)
   * @return the distinct images
   */
  public List<CrashImage> images(Set<ImageKind> kinds, int eachLineCap, long... randomSeeds) {
    List<CrashImage> all = new ArrayList<>();
    if (kinds.contains(ImageKind.DRAINED)) {
      all.add(drainedImage());
    }
    if (kinds.contains(ImageKind.ALL_PENDING)) {
      all.add(allPendingImage());
    }
    if (kinds.contains(ImageKind.EACH_LINE)) {
      all.addAll(eachLineImages(eachLineCap));
    }
    if (kinds.contains(ImageKind.RANDOM)) {
      for (long s : randomSeeds) {
        all.add(randomImage(s));
      }
    }
    return distinct(all);
  }

  static List<CrashImage> distinct(List<CrashImage> images) {
    Map<Integer, List<CrashImage>> seen = new HashMap<>();
    List<CrashImage> out = new ArrayList<>(images.size());
    for (CrashImage image : images) {
      List<CrashImage> same = seen.computeIfAbsent(image.wordsHash(), k -> new ArrayList<>(1));
      if (same.stream().noneMatch(image::sameWords)) {
        same.add(image);
        out.add(image);
      }
    }
    return out;
  }

  /**
   * The bytes of an image, on the Java heap: for tests of small pools. Valid only at the crash
   * point (the same simulator state) the image was taken at.
   *
   * @param image an image taken at this crash point
   * @return a heap segment of {@link CrashImage#size()} bytes
   */
  public MemorySegment materialize(CrashImage image) {
    checkSize(image);
    if (image.size() > Integer.MAX_VALUE - 8) {
      throw new IllegalArgumentException("an image of " + image.size() + " bytes does not fit in a byte[]; use writeImage");
    }
    MemorySegment out = MemorySegment.ofArray(new byte[(int) image.size()]);
    MemorySegment.copy(shadowSegment, 0, out, 0, image.size());
    long[] offsets = image.offsets();
    long[] values = image.values();
    for (int i = 0; i < offsets.length; i++) {
      out.set(WORD_UNALIGNED, offsets[i], values[i]);
    }
    return out;
  }

  /**
   * Writes an image to a new file, sparsely (pages of zeros are left as holes), so that it can
   * be opened as a pool. Valid only at the crash point the image was taken at.
   *
   * @param image an image taken at this crash point
   * @param file a file that does not exist yet
   * @throws IOException if the file cannot be written
   */
  public void writeImage(CrashImage image, Path file) throws IOException {
    checkSize(image);
    ImageFiles.writeSparse(shadowSegment, image, file);
  }

  private void checkSize(CrashImage image) {
    if (image.size() != size()) {
      throw new IllegalArgumentException(
          "the image was taken when the pool was " + image.size() + " bytes; it is now " + size()
              + ": materialise an image at the crash point it was taken at");
    }
  }

  /** SplitMix64's finaliser (Steele, Lea and Flood 2014). */
  static long mix64(long z) {
    z = (z ^ (z >>> 30)) * 0xBF58476D1CE4E5B9L;
    z = (z ^ (z >>> 27)) * 0x94D049BB133111EBL;
    return z ^ (z >>> 31);
  }
}
