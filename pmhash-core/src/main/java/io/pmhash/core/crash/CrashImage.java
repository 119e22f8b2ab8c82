package io.pmhash.core.crash;

import java.util.Arrays;
import java.util.OptionalLong;

/**
 * One durable image a crash may leave: the simulator's durable shadow at a crash point with
 * some pending words replaced (the <em>overrides</em>). It holds only the overrides, so many
 * images of one crash point cost little memory; {@link CrashSimulator#materialize} and {@link
 * CrashSimulator#writeImage} turn it into bytes while the simulator is still at that point.
 * Immutable.
 */
public final class CrashImage {
  private final ImageKind kind;
  private final long seed;
  private final long line;
  private final long size;
  private final long[] offsets;
  private final long[] values;

  CrashImage(ImageKind kind, long seed, long line, long size, long[] offsets, long[] values) {
    this.kind = kind;
    this.seed = seed;
    this.line = line;
    this.size = size;
    this.offsets = offsets;
    this.values = values;
  }

  /** @return how this image was chosen */
  public ImageKind kind() {
    return kind;
  }

  /** @return the seed of a {@link ImageKind#RANDOM} image, 0 for the other kinds */
  public long seed() {
    return seed;
  }

  /** @return the pool offset of the line an {@link ImageKind#EACH_LINE} image writes back, else -1 */
  public long line() {
    return line;
  }

  /** @return the image size in bytes: the pool's mapped size at the crash point */
  public long size() {
    return size;
  }

  /** @return the number of words that differ from the durable shadow */
  public int overrideCount() {
    return offsets.length;
  }

  /**
   * @param i 0 .. {@link #overrideCount()} - 1, in increasing offset order
   * @return the pool offset of override {@code i}
   */
  public long overrideOffset(int i) {
    return offsets[i];
  }

  /**
   * @param i 0 .. {@link #overrideCount()} - 1, in increasing offset order
   * @return the value of override {@code i}
   */
  public long overrideValue(int i) {
    return values[i];
  }

  /**
   * @param offset a pool offset, a multiple of 8
   * @return the value this image gives the word there, when it is not the durable one
   */
  public OptionalLong override(long offset) {
    int i = Arrays.binarySearch(offsets, offset);
    return i >= 0 ? OptionalLong.of(values[i]) : OptionalLong.empty();
  }

  /** Same overrides (so the same bytes, at the same crash point). */
  boolean sameWords(CrashImage other) {
    return size == other.size && Arrays.equals(offsets, other.offsets) && Arrays.equals(values, other.values);
  }

  int wordsHash() {
    return 31 * Arrays.hashCode(offsets) + Arrays.hashCode(values);
  }

  long[] offsets() {
    return offsets;
  }

  long[] values() {
    return values;
  }

  /** @return the kind and what picked it, e.g. {@code "RANDOM seed 0x2a"} or {@code "EACH_LINE line 0x10040"} */
  public String describe() {
    return switch (kind) {
      case RANDOM -> "RANDOM seed 0x" + Long.toHexString(seed);
      case EACH_LINE -> "EACH_LINE line 0x" + Long.toHexString(line);
      default -> kind.name();
    };
  }

  @Override
  public String toString() {
    return "CrashImage[" + describe() + ", " + offsets.length + " words not durable-as-drained, " + size + " bytes]";
  }
}
