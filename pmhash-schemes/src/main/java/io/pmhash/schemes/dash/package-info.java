/**
 * Dash-EH: Dash for extendible hashing (Lu, Hao, Wang, Levandoski — "Dash: Scalable Hashing on
 * Persistent Memory", VLDB 2020, §4), byte-exact in its bucket layout ({@code
 * docs/format/dash-eh.md}).
 *
 * <p>Dash-LH: Dash for linear hashing (the same paper, §5; {@code docs/format/dash-lh.md}),
 * built on the same bucket and segment code: {@link io.pmhash.schemes.dash.DashLhTable} and the
 * {@code DashLh*} classes. Its persist orders, recovery and deviations are documented there and
 * in {@link io.pmhash.schemes.dash.DashLhSplit} and {@link io.pmhash.schemes.dash.DashLhMerge}
 * (contraction); what follows is Dash-EH's.
 *
 * <h2>Assumptions and guarantees</h2>
 *
 * <ul>
 *   <li>An aligned 8-byte store reaches the media whole; nothing wider is assumed. Every commit
 *       word (bucket bitmap, value on update, shape word, side link, directory entry, directory
 *       pointer) is one such store, written with release semantics and read with acquire.
 *   <li>A completed put, replace or remove is durable (to the extent of the pool's durability
 *       mode) when it returns: an insert costs 2 drains, a delete 1, an update in place 1, when
 *       no displacement or split happens (pointer mode: 4 each). A crash leaves an operation in
 *       flight all or nothing.
 *   <li>Readers never write to the pool (optimistic version locks, Dash §4.4), except to
 *       recover a segment that a crash left unrecovered (§4.8), once.
 *   <li>Open recovers nothing after a crash (§4.8): segments are recovered lazily on first
 *       touch. It reads O(directory) to validate the directory and the side links (a damaged
 *       pool is refused, unchanged) and never a record.
 * </ul>
 *
 * <h2>Deviations from the paper</h2>
 *
 * <ul>
 *   <li>A split builds the new segment completely before it is owned and linked, then links it
 *       and changes the old segment's shape in one redo step; the directory is updated after,
 *       and a segment that no longer covers a hash forwards to its side link. The paper links
 *       first and redoes the rehash in recovery, and updates directory and depth in a PMDK
 *       transaction. See {@link io.pmhash.schemes.dash.DashSplit}.
 *   <li>The global version is the pool's recovery epoch (u64), adopted only after an unclean
 *       shutdown; segment versions are u64, so they never wrap (the paper's are one byte).
 *   <li>Overflow metadata is flushed with the operation that changes it (no extra drain), so a
 *       clean shutdown leaves it durable; after a crash it is rebuilt, as in the paper.
 *   <li>No 48-byte pad in the bucket (that undid PMDK's object header; there is none here).
 *   <li>Segment merge and directory halving, which the paper mentions without a protocol, follow
 *       {@link io.pmhash.schemes.dash.DashMerge}.
 *   <li>Pointer mode (§4.5, {@code DashPointerTable}, the store of a {@link
 *       io.pmhash.map.PmHashMap} with variable-length codecs): a slot holds the record's offset
 *       and the key's full hash (the paper stores pointers and compares keys through them; the
 *       hash in the slot spares the record load on a fingerprint collision and lets splits and
 *       recovery rehash without one). Insert, update and delete are each one redo step of the
 *       allocator, 4 drains, so that a record is owned exactly while a slot names it; see
 *       {@code docs/format/dash-eh.md}, "Pointer mode".
 * </ul>
 */
package io.pmhash.schemes.dash;
