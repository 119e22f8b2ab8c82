package io.pmhash.schemes.process;

import io.pmhash.core.Persistence;

/**
 * A {@link io.pmhash.core.Durability#PROCESS}-like persistence (no write-back: the shared mapping
 * already holds every store) that stops the JVM with {@link Runtime#halt} at the {@code n}-th
 * drain issued from inside a structural change — a split, merge, doubling, halving or resize,
 * recognised by the simple name of a class on the stack ({@code *Split}, {@code *Merge}, {@code
 * *Resize}). {@code halt} runs no shutdown hook and no finally block: to the pool file it is the
 * same as SIGKILL at that instruction, but at a named point instead of a random one.
 */
final class HaltInStructuralChange extends Persistence {
  private static final StackWalker WALKER = StackWalker.getInstance();

  private final long haltAt;
  private final String frames;
  private long structuralDrains;

  /**
   * @param haltAt which structural drain to halt at (1 = the first)
   * @param kinds the class-name endings that count, as a regular expression alternative: {@code
   *     "Split|Merge|Resize"} for every structural change, {@code "Merge"} for merges only
   */
  HaltInStructuralChange(long haltAt, String kinds) {
    this.haltAt = haltAt;
    this.frames = "[A-Za-z]+(" + kinds + ")\\..*";
  }

  @Override
  protected void flushLines(long offset, long length) {}

  @Override
  protected void drainFlushes() {
    String frame = structuralFrame();
    if (frame != null && ++structuralDrains == haltAt) {
      System.out.println("halting at structural drain " + haltAt + " in " + frame);
      System.out.flush();
      Runtime.getRuntime().halt(137);
    }
  }

  private String structuralFrame() {
    return WALKER.walk(stack -> stack
        .map(f -> f.getClassName().substring(f.getClassName().lastIndexOf('.') + 1) + "." + f.getMethodName())
        .filter(name -> name.matches(frames))
        .findFirst()
        .orElse(null));
  }

  @Override
  public String describe() {
    return "none (PROCESS-like), halting at structural drain " + haltAt;
  }
}
