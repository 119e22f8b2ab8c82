/**
 * The public map API: {@link io.pmhash.map.LongHashTable} (primitive, allocation-free) and the
 * entry point {@link io.pmhash.map.PmHash} that creates and opens tables by scheme.
 */
package io.pmhash.map;
