/**
 * ESH: efficient and scalable hashing for persistent memory (Regassa, "Efficient and Scalable
 * Hashing Scheme for Persistent Memory", Ph.D. dissertation, Seoul National University, 2023,
 * chapter 4), and its predecessor ACCEH (chapter 3) as a configuration of the same code ({@code
 * bucketBytes = 64}). There is no public code of either: this package is a reference
 * implementation, and every ambiguous reading of the text is stated in {@code docs/format/esh.md}.
 *
 * <h2>Assumptions and guarantees</h2>
 *
 * <ul>
 *   <li>An aligned 8-byte store reaches the media whole; nothing wider is assumed. Every commit
 *       word (a bucket's commit word, a value on update, a shape word, a split child, a directory
 *       entry, the directory pointer) is one such store, written with release semantics and read
 *       with acquire where a reader depends on it.
 *   <li>A completed put, replace or remove is durable (to the extent of the pool's durability mode)
 *       when it returns: an insert costs 2 drains (into the home bucket or a neighbour), an update
 *       1, a delete 1; a split 7 more, a doubling 4 more. A crash leaves an operation in flight
 *       all or nothing.
 *   <li>Every key and value is allowed (membership bits, no reserved key).
 *   <li>Bucket-level locking for writers (§4.3.1 (b)); readers are optimistic (Dash's version
 *       locks) and never write, except to recover a segment a crash left unrecovered, once.
 *   <li>Open recovers nothing after a crash (Table 4.1): the per-bucket state (§4.3.2) says which
 *       buckets are unrecovered, and each segment is recovered on first touch. It reads
 *       O(directory) to validate the directory (a damaged pool is refused, unchanged).
 * </ul>
 *
 * <h2>Deviations from the dissertation</h2>
 *
 * <ul>
 *   <li>The metadata fields of Fig. 4.1 are packed so that one 8-byte store commits an insert or a
 *       delete (membership, MC, OB); OFRB is a bitmap of the segment's buckets; 4-bit fingerprints
 *       are added. See {@link io.pmhash.schemes.esh.EshLayout}.
 *   <li>Records moved to a neighbour are not moved back home after deletes (§4.3.5 calls it
 *       optional, "less priority"); a split places the new half's records afresh, home first.
 *   <li>The split protocol (the dissertation defers to CCEH) is derived in {@link
 *       io.pmhash.schemes.esh.EshSplit}; recovery rolls an interrupted split forward.
 *   <li>The per-bucket state is the recovery epoch in which the bucket was last made consistent
 *       (a one-bit flag cannot tell a crash from a running writer); recovery works per segment.
 * </ul>
 */
package io.pmhash.schemes.esh;
