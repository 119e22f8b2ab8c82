/**
 * The public map API: {@link io.pmhash.map.LongHashTable} (primitive, allocation-free), {@link
 * io.pmhash.map.PmHashMap} (a {@link java.util.concurrent.ConcurrentMap} over {@link
 * io.pmhash.map.Codec}s) and the entry point {@link io.pmhash.map.PmHash} that creates and
 * opens both by scheme.
 */
package io.pmhash.map;
