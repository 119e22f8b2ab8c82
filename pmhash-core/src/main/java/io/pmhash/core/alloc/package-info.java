/**
 * The persistent heap allocator: PMDK's reserve/publish model over chunks carved into runs of
 * fixed-size blocks and spans of huge blocks ({@link io.pmhash.core.alloc.Allocator}, layout
 * {@link io.pmhash.core.alloc.HeapLayout}). Publishing and freeing are single-bit actions in a
 * lane's redo step, so a crash never leaks a block or leaves one owned twice; open replays only
 * the lanes, and the in-memory index is rebuilt lazily. See {@code docs/allocator.md}.
 */
package io.pmhash.core.alloc;
