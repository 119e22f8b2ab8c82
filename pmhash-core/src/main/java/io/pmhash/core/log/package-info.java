/**
 * Lanes and the two logs that run in them: {@link io.pmhash.core.log.Redo}, one atomic step of
 * idempotent word actions (SET, OR, AND-NOT) that the allocator's publish is built on, and
 * {@link io.pmhash.core.log.UndoLog}, failure-atomic transactions over ranges for structural
 * changes. Recovery ({@link io.pmhash.core.log.Lanes#recover()}) runs inside {@link
 * io.pmhash.core.Pool#open} and costs O(lanes). Layout: {@link io.pmhash.core.log.LaneLayout};
 * persist orders and the invariant each step keeps: {@code docs/allocator.md}.
 *
 * <p>Memory orders: commit words (the redo commit word, the undo generation) are written with
 * release stores and read with acquire loads; bit actions use {@code getAndBitwiseOr/And}; log
 * entries are plain stores published by the release store of the commit word that follows them.
 */
package io.pmhash.core.log;
